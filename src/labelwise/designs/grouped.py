"""A pool seen as groups of interchangeable items, for adaptive designs.

Designs whose oracle model is per block and whose measure's loss depends on
x only through a small key (:meth:`Measure.loss_key`) give every unlabeled
item of a (block, key) group the same proposal probability.  They then work
per group: proposals cost O(groups + labels), and a draw picks a group and
then a uniform unlabeled member.  Labeled items (whose label is known under
a deterministic oracle) carry their own probability.
"""

from __future__ import annotations

import numpy as np

from ..draws import Draws
from .sampling import draw_batch, sample_from_cdf

__all__ = ["GroupedPool"]


class GroupedPool:
    """Items grouped by (block, loss key), with the labeled items tracked.

    Parameters
    ----------
    blocks : ndarray of int, shape (N,)
    key : ndarray of int, shape (N,), optional
        Loss key; ``None`` makes every item its own group.
    """

    def __init__(self, blocks: np.ndarray, key: np.ndarray | None):
        n = blocks.size
        key = np.arange(n) if key is None else np.unique(key, return_inverse=True)[1]
        combined = blocks.astype(np.int64) * (int(key.max()) + 1) + key
        uniq, of_item = np.unique(combined, return_inverse=True)
        # the two per-item arrays in the narrowest signed type holding their values (int16 groups, int32
        # items at 10^7): a fraction of the memory, and a session file opens without widening them (0.3 s
        # each at 10^7 items); items taken from ``order`` leave as int64
        self.of_item = of_item.astype(np.min_scalar_type(-uniq.size))
        self.order = np.argsort(of_item, kind="stable").astype(np.min_scalar_type(-n))
        self.sizes = np.bincount(self.of_item, minlength=uniq.size)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)])
        self.rep = self.order[self.starts[:-1]].astype(np.int64)  # one representative item per group
        self.block = blocks[self.rep]
        self.n_items = n
        self.reset()

    @property
    def n_groups(self) -> int:
        return int(self.sizes.size)

    def reset(self) -> None:
        """Forget every label (a new run)."""
        self.known = np.zeros(self.n_items, dtype=bool)
        self.unlabeled = self.sizes.astype(np.int64).copy()
        self.labeled_items = np.empty(0, dtype=np.int64)

    def __getstate__(self) -> dict:
        """The state without :attr:`known`, which ``labeled_items`` determine (a stored set-up has none)."""
        return {k: v for k, v in self.__dict__.items() if k != "known"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.known = np.zeros(self.n_items, dtype=bool)
        self.known[self.labeled_items] = True

    def mark_labeled(self, items: np.ndarray) -> None:
        """Record newly labeled items (each once)."""
        self.known[items] = True
        self.labeled_items = np.concatenate([self.labeled_items, items])
        np.subtract.at(self.unlabeled, self.of_item[items], 1)

    def q_of(self, items: np.ndarray, q_group: np.ndarray, q_labeled: np.ndarray) -> np.ndarray:
        """Proposal probability of ``items``: their group's, or their own once labeled.

        ``q_labeled`` is aligned with ``labeled_items``.
        """
        q = q_group[self.of_item[items]].astype(float)
        known = self.known[items]
        if known.any():
            order = np.argsort(self.labeled_items)
            where = np.searchsorted(self.labeled_items[order], items[known])
            q[known] = q_labeled[order][where]
        return q

    def sample_unlabeled(self, k: int, mass: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``k`` i.i.d. unlabeled items: a group with probability ∝ ``mass``, then a uniform unlabeled member."""
        g = sample_from_cdf(np.cumsum(mass), k, rng)
        items = np.empty(k, dtype=np.int64)
        todo = np.arange(k)
        while todo.size:  # rejection: labeled members are a small minority of a group with unlabeled mass
            gg = g[todo]
            cand = self.order[self.starts[gg] + rng.integers(0, self.sizes[gg])]
            ok = ~self.known[cand]
            items[todo[ok]] = cand[ok]
            todo = todo[~ok]
        return items

    def draw(self, q_group: np.ndarray, q_labeled: np.ndarray, n_new: int, n_pool: int,
             rng: np.random.Generator) -> Draws:
        """A batch of i.i.d. draws from the proposal until ``n_new`` new items (Marchant & Rubinstein (KDD 2021) Algorithm 1).

        Draws of labeled items are aggregated into counts (:func:`draw_batch`).
        """
        mass = q_group * self.unlabeled
        items, counts = draw_batch(lambda k: self.sample_unlabeled(k, mass, rng), float(mass.sum()),
                                   self.labeled_items, q_labeled, n_new, rng)
        q = self.q_of(items, q_group, q_labeled)
        return Draws(items, 1.0 / (n_pool * q), q, np.full(items.size, -1, dtype=np.int64), counts)

    def sample_members(self, groups: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``counts[i]`` distinct unlabeled members of group ``groups[i]``, uniformly at random.

        A group mostly labeled, or asked for a large share of its unlabeled
        members, is enumerated; otherwise members are drawn at random until
        enough distinct unlabeled ones are in (cost about ``counts[i]``).
        Consecutive groups asked for one member each (most of a batch) draw
        together (:meth:`_first_unlabeled`); the loop runs over the others.
        """
        free = self.unlabeled[groups]
        if (counts > free).any():
            i = int(np.argmax(counts > free))
            raise ValueError(f"counts: {counts[i]} members asked of group {groups[i]}, which has {free[i]} unlabeled")
        enumerated = (4 * counts >= free) | (self.sizes[groups] > 2 * free)
        single = (counts == 1) & ~enumerated
        # runs of consecutive groups of one kind: the stream is used group after group, as one at a time would
        bounds = np.flatnonzero(np.diff(single.astype(np.int8))) + 1
        picked = []
        for run in np.split(np.arange(groups.size), bounds):
            if run.size and single[run[0]]:
                picked.append(self._first_unlabeled(groups[run], rng))
                continue
            for i in run.tolist():
                members = self.order[self.starts[groups[i]]:self.starts[groups[i] + 1]]
                k = int(counts[i])
                if enumerated[i]:
                    picked.append(rng.choice(members[~self.known[members]], size=k, replace=False))
                    continue
                got = np.empty(0, dtype=np.int64)
                while got.size < k:  # the first k distinct unlabeled draws: a uniform subset
                    cand = members[rng.integers(0, members.size, size=2 * (k - got.size) + 4)]
                    both = np.concatenate([got, cand[~self.known[cand]]])
                    got = both[np.sort(np.unique(both, return_index=True)[1])]
                picked.append(got[:k])
        return np.concatenate(picked).astype(np.int64) if picked else np.empty(0, dtype=np.int64)

    def _first_unlabeled(self, groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One unlabeled member of each of ``groups``: the first unlabeled of six random members, drawn
        again while all six are labeled.

        The six draws of every group come from one call, which takes the same
        numbers from the stream as a call per group; a group whose six are all
        labeled redraws before the next group draws, so the stream is replayed
        up to it and the groups from it on draw again.
        """
        out = np.empty(groups.size, dtype=np.int64)
        done = 0
        while done < groups.size:
            rest = groups[done:]
            state = rng.bit_generator.state
            cand = self.order[self.starts[rest, None] + rng.integers(0, self.sizes[rest, None], size=(rest.size, 6))]
            free = ~self.known[cand]
            found = free.any(axis=1)
            stop = rest.size if found.all() else int(np.argmin(found))  # the first group with six labeled
            out[done:done + stop] = cand[np.arange(stop), np.argmax(free[:stop], axis=1)]
            if stop < rest.size:  # replay its draw and those before it; its retry opens the next pass
                rng.bit_generator.state = state
                rng.integers(0, self.sizes[rest[:stop + 1], None], size=(stop + 1, 6))
            done += stop
        return out

    def draw_any(self, q_group: np.ndarray, n: int, n_pool: int, rng: np.random.Generator) -> Draws:
        """``n`` i.i.d. draws over all items, labeled or not, each of a group's members with ``q_group``.

        For a stochastic oracle, where every draw is labeled afresh and a
        labeled item keeps its group's probability.
        """
        g = sample_from_cdf(np.cumsum(q_group * self.sizes), n, rng)
        items = self.order[self.starts[g] + rng.integers(0, self.sizes[g])].astype(np.int64)
        q = q_group[g].astype(float)
        return Draws(items, 1.0 / (n_pool * q), q, np.full(n, -1, dtype=np.int64))
