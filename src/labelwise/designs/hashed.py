"""Simple random samples drawn by the shared item hash, so that engine pools draw the same items.

The items of a group (the pool, or one stratum) taken in increasing
``u = H(item_id, seed)`` (:mod:`labelwise.engines.hashing`) are in a
uniformly random order: the ``u`` of distinct ids are independent uniforms
(up to the hash's quality), so the first ``m`` items of the order are a
simple random sample of ``m`` items without replacement, exactly -- order
sampling with equal sizes (Rosén, "On sampling with probability
proportional to size", J. Stat. Plan. Inference 62, 1997).  An engine finds
the same first ``m`` items by keeping ``u < b`` and sorting them
(:mod:`labelwise.engines.plan`), so a design drawing this way hands out the
same items for the same seed on a pool in memory and on an engine pool.

Only the smallest ``u`` are needed: :class:`HashOrder` hashes each group up
to a bound chosen from how many items a draw will reach (six standard
deviations above), and raises the bound in the rare case it falls short.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engines.hashing import generator_seed, item_uniform, uniforms_below
from ..partition.ranks import ranks_within
from ..pool import Pool

__all__ = ["Finder", "HashDrawn", "HashOrder", "covering_bound", "covering_bounds", "first_by_ratio", "hand_out_order",
           "hash_keys"]


def covering_bound(need: np.ndarray | float, size: np.ndarray | float) -> np.ndarray:
    """A bound ``t`` under which ``Binomial(size, t)`` of ``size`` items fall at least ``need`` but for a
    six-standard-deviation shortfall (probability about 1e-9): ``min(1, (need + 6 sqrt(need) + 16) / size)``."""
    m = np.asarray(need, dtype=float)
    return np.minimum((m + 6.0 * np.sqrt(m) + 16.0) / np.maximum(size, 1), 1.0)


def covering_bounds(b: np.ndarray, size: int, counts: np.ndarray | None = None) -> np.ndarray:
    """Bounds ``min(1, t b)`` under which at least ``size`` items fall, but for a six-standard-deviation shortfall.

    ``t`` is the upper end of a bisection (on ``log t``, between ``target / sum counts b`` and ``1 / min b``)
    for the expected number of items with ``u < min(1, t b)``, ``sum counts min(1, t b)``, to reach
    :func:`covering_bound`'s ``size + 6 sqrt(size) + 16``; every item with ``b > 0`` when that many or fewer.
    """
    weight = np.ones_like(b) if counts is None else np.asarray(counts, dtype=float)
    positive = b > 0
    target = size + 6.0 * np.sqrt(size) + 16.0
    if target >= weight[positive].sum():
        return positive.astype(float)
    lo, hi = np.log(target / float(weight @ b)), -np.log(b[positive].min())
    for _ in range(60):  # the count is increasing in t: keep hi covering
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if weight @ np.minimum(np.exp(mid) * b, 1.0) < target else (lo, mid)
    return np.minimum(np.exp(hi) * b, 1.0)


def hand_out_order(keys: np.ndarray, u: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The order of sampled items to hand out: increasing ``u / b`` (a uniformly random order of a Poisson sample),
    ties by ``u``, then by hash key (with one ``b`` for every item this is increasing ``u``, as :class:`HashOrder`)."""
    return np.lexsort((keys, u, u / b))


def first_by_ratio(find: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]], seed: int,
                   b: np.ndarray, size: int, counts: np.ndarray | None = None,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``size`` items of smallest ``u / b`` in :func:`hand_out_order`: sequential Poisson sampling.

    Ohlsson, "Sequential Poisson sampling", J. Official Statistics 14 (1998):
    the ``M`` items of smallest ``u / b`` are a sample of fixed size ``M``
    with inclusion probabilities close to ``b`` (``sum b = M``), and any
    prefix of ``k`` of them has inclusion probabilities close to ``b k / M``.

    Parameters
    ----------
    find : callable
        ``find(bound)``: ``(items, b, keys)`` of the items with ``u = H(key, seed) < bound`` (one bound per entry
        of ``b``): pool positions in memory, ids on an engine.
    seed : int
        The hash seed.
    b : ndarray
        Inclusion probabilities per item or per block (``counts`` items each).
    size : int
    counts : ndarray, optional

    Returns
    -------
    items, b, keys : ndarray
        Of the ``size`` first items (all items with ``b > 0`` if fewer).
    """
    bound = covering_bounds(b, size, counts)
    while True:
        items, b_items, keys = find(bound)
        if items.size >= size or np.all((bound >= 1.0) | (b <= 0)):
            break
        bound = np.where(b > 0, np.minimum(2.0 * bound, 1.0), 0.0)  # the rare shortfall: reach further
    first = hand_out_order(keys, item_uniform(keys, seed), b_items)[:size]
    return items[first], b_items[first], keys[first]


def hash_keys(pool: Pool) -> np.ndarray:
    """What the hash reads per item: the integer item ids (as an engine pool does), else the positions."""
    ids = pool.item_ids
    return ids if ids.dtype.kind in "iu" else np.arange(pool.n_items)


#: ``find(bound)``: the items of every group ``g`` with ``u < bound[g]``, as ``(items, u, group, key)`` arrays.
Finder = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


class HashOrder:
    """The items of every group in increasing ``u = H(key, seed)``, ties by key, found as far as draws reach.

    Parameters
    ----------
    sizes : ndarray of int, shape (G,)
        Items per group.
    find : Finder
        The items below given bounds: :meth:`in_memory`, or one pass of an
        engine (:mod:`labelwise.engines.strata`).  An item is a pool position
        in memory, an item id on an engine.
    """

    def __init__(self, sizes: np.ndarray, find: Finder):
        self.sizes, self.find = np.asarray(sizes, dtype=np.int64), find
        self.bound = np.zeros(self.sizes.size)
        # the items found, group by group, each group's in order, with their u; found[g] of group g from offset[g]
        self.items, self.uniform = np.empty(0, dtype=np.int64), np.empty(0)
        self.found = np.zeros(self.sizes.size, dtype=np.int64)
        self.offset = np.zeros(self.sizes.size, dtype=np.int64)
        self.start = np.zeros(self.sizes.size, dtype=np.int64)  # items of each group already handed out

    @classmethod
    def in_memory(cls, keys: np.ndarray, seed: int, groups: np.ndarray | None = None) -> HashOrder:
        """The order of the positions ``0..N-1`` with hash keys ``keys`` (:func:`hash_keys`) in ``groups`` (one
        group when omitted)."""
        def find(bound: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            # one group: one bound for every item, no per-item bounds to gather
            at, u = uniforms_below(keys, seed, bound[0] if groups is None else bound[groups])
            return at, u, np.zeros(at.size, dtype=np.int64) if groups is None else groups[at], keys[at]

        return cls(np.array([keys.size]) if groups is None else np.bincount(groups), find)

    def reach(self, need: np.ndarray) -> None:
        """Make :attr:`items` hold the first ``need[g]`` items of every group ``g`` (all of a smaller group).

        A group short of items gets the :func:`covering_bound` of its need (at
        least twice its last bound), and every group is hashed again.
        """
        need = np.minimum(need, self.sizes)
        while np.any(short := self.found < need):
            if np.any(self.bound[short] >= 1.0):
                raise ValueError("a block holds fewer items than the pool's block summary says: has the pool changed since "
                                 "the session began? Open the session on the pool it began on")
            wanted = np.maximum(covering_bound(need, self.sizes), 2.0 * self.bound)
            self.bound = np.where(short, np.minimum(wanted, 1.0), self.bound)
            items, u, group, key = self.find(self.bound)
            by = np.lexsort((key, u, group))
            self.items, self.uniform = items[by], u[by]
            self.found = np.bincount(group, minlength=self.sizes.size)
            self.offset = np.cumsum(self.found) - self.found

    def order(self, group: int) -> np.ndarray:
        """The items of ``group`` found so far, in order."""
        return self.items[self.offset[group]:self.offset[group] + self.found[group]]

    def items_at(self, groups: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        """The items of hash rank ``ranks`` (0 for the first) in ``groups`` (reaching them first)."""
        need = np.zeros(self.sizes.size, dtype=np.int64)
        np.maximum.at(need, groups, ranks + 1)
        self.reach(need)
        return self.items[self.offset[groups] + ranks]

    def first(self, need: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first ``need[g]`` items of every group ``g`` (all of a smaller group), group by group, and their
        groups."""
        groups = np.repeat(np.arange(self.sizes.size), np.minimum(need, self.sizes))
        return self.items_at(groups, ranks_within(groups)), groups

    def take(self, group: int, n_new: int, is_labeled: Callable[[np.ndarray], np.ndarray],
             ) -> tuple[np.ndarray, np.ndarray]:
        """The group's next items in order, up to and including its ``n_new``-th unlabeled one, and their ``u``.

        ``is_labeled(items)`` tells which items are labeled.

        Raises
        ------
        ValueError
            When the group has fewer than ``n_new`` unlabeled items left.
        """
        start = int(self.start[group])
        if n_new <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0)
        target = start + n_new
        while True:
            if self.found[group] < min(target, self.sizes[group]):
                need = self.found.copy()
                need[group] = target
                self.reach(need)
            at = self.offset[group] + start
            ahead = self.order(group)[start:]
            free = np.cumsum(~is_labeled(ahead))
            got = int(free[-1]) if free.size else 0
            if got >= n_new:
                end = int(np.searchsorted(free, n_new)) + 1
                self.start[group] = start + end
                return ahead[:end], self.uniform[at:at + end]
            if self.found[group] >= self.sizes[group]:
                raise ValueError(f"only {got} unlabeled items left, cannot draw {n_new}")
            target = start + ahead.size + 2 * (n_new - got) + 16


class HashDrawn:
    """What a sampler drawing by :class:`HashOrder` adds: the hash seed and how far each group's order was used.

    The seed is :func:`~labelwise.engines.hashing.generator_seed` of the
    run's generator (the session's seed), taken when the run starts, kept in
    the batches' :meth:`state` and taken anew by :meth:`copy` (every
    simulated run draws its own sample).  Subclasses give :meth:`new_order`.
    """

    rng: np.random.Generator
    hash_seed: int
    _order: HashOrder | None

    def new_order(self) -> HashOrder:
        """A :class:`HashOrder` of this run's groups with :attr:`hash_seed`."""
        raise NotImplementedError

    @property
    def order(self) -> HashOrder:
        """The run's order, made at the first draw."""
        if self._order is None:
            self._order = self.new_order()
        return self._order

    def copy(self, rng: np.random.Generator):
        new = super().copy(rng)
        new.hash_seed, new._order = generator_seed(rng), None
        return new

    def state(self) -> dict:
        return {"seed": self.hash_seed, "next": self.order.start.tolist()}

    def set_state(self, states: list[dict]) -> None:
        if states and "seed" in states[-1]:
            self.hash_seed, self._order = int(states[-1]["seed"]), None
            self.order.start[:] = states[-1]["next"]
