"""Draws with replacement from a proposal that is constant on score blocks, made by the shared item hash.

A proposal ``q`` equal for the items of a block (one per block, ``sum
counts q = 1``) is sampled in two steps: the block of a draw with
probability ``counts_b q_b``, then an item of the block uniformly.  Both
steps are done here without looking at the items:

* the block of every draw and a uniform index ``v`` in ``[0, n_b)`` come from
  a generator seeded by the hash seed and the draw's chunk of :data:`CHUNK`
  draws (:func:`draw_chunk`), so draw ``t`` is a fixed function of the seed;
* within a block the distinct indices are ranked by first appearance, and
  rank ``r`` stands for the block's item of ``(r+1)``-th smallest
  ``u = H(item_id, seed)`` (:class:`~labelwise.designs.hashed.HashOrder`).

The hash order is a uniformly random order of the block's items, independent
of the indices, so the ranked distinct indices land on distinct items in a
uniformly random way: the items drawn are exactly i.i.d. uniform within the
block, hence exactly i.i.d. from ``q`` overall.  Because only ranks reach the
items, an engine pool finds the same items as memory by one pass keeping each
block's smallest ``u`` (:mod:`labelwise.engines.importance`), and both hand out
the same draws for the same seed.
"""

from __future__ import annotations

import numpy as np

from ..engines.blocks import BlockSummary
from ..measures import Measure
from ..partition.ranks import ranks_within
from .poisson import block_deviations, defensive_deviations
from .sampling import sample_from_cdf

__all__ = ["CHUNK", "BlockDraws", "appearance", "block_proposal", "block_ranks", "draw_chunk"]

#: Draws made by one generator (:func:`draw_chunk`): the sequence is the same however far a run reads it.
CHUNK = 4096
#: Tells the generators of :func:`draw_chunk` from other uses of the hash seed.
_STREAM = 0x1B7D


def block_proposal(summary: BlockSummary, measure: Measure, system_names: tuple[str, ...], lam: float,
                   defensive: float) -> np.ndarray:
    """The importance design's proposal on score blocks: one ``q`` per item of each block, ``sum counts q = 1``.

    Marchant & Rubinstein (KDD 2021) eq. 5, ``q ∝ sqrt(E_pi ||Dg(R0) l||^2)``
    (the deviations of :func:`~labelwise.designs.poisson.block_deviations`),
    mixed with the uniform distribution with weight ``defensive`` (sec. 3.3.1):
    ``(1 - defensive) h / sum(counts h) + defensive / N``.
    """
    h = block_deviations(summary, measure, system_names, lam)
    return defensive_deviations(h, defensive, summary.counts) / summary.n_items


def draw_chunk(seed: int, chunk: int, cdf: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Draws ``chunk * CHUNK`` to ``(chunk + 1) * CHUNK - 1``: their block and a uniform index in the block.

    Parameters
    ----------
    seed : int
        The hash seed.
    chunk : int
        Which :data:`CHUNK` draws (each chunk has its own generator).
    cdf : ndarray, shape (G,)
        Cumulative sums of the block masses ``counts q``.
    counts : ndarray of int, shape (G,)
        Items per block.

    Returns
    -------
    blocks, index : ndarray of int, shape (CHUNK,)
        The block of every draw and its uniform index in ``[0, counts[block])``.
    """
    rng = np.random.default_rng([seed, _STREAM, chunk])
    blocks = sample_from_cdf(cdf, CHUNK, rng)
    return blocks, rng.integers(0, counts[blocks])


class BlockDraws:
    """The draw sequence of one run (module docstring), generated as far as it is read.

    Parameters
    ----------
    seed : int
        The hash seed.
    q : ndarray, shape (G,)
        The proposal per item of each block (:func:`block_proposal`).
    counts : ndarray of int, shape (G,)
        Items per block.
    """

    def __init__(self, seed: int, q: np.ndarray, counts: np.ndarray):
        self.seed, self.counts = seed, np.asarray(counts, dtype=np.int64)
        self.cdf = np.cumsum(self.counts * q)
        self.start = np.cumsum(self.counts) - self.counts  # a draw's key: start of its block + its index
        self._keys, self._first = GrowingArray(), GrowingArray()
        self._seen = KeySet()

    @property
    def keys(self) -> np.ndarray:
        """The key of every draw made so far."""
        return self._keys.values

    @property
    def first(self) -> np.ndarray:
        """The draw where each distinct key first appears, in increasing order."""
        return self._first.values

    def _grow(self) -> None:
        # one more chunk; only its keys are looked at, so a run of n draws costs O(n log^2 n) in all
        offset = self._keys.size
        blocks, index = draw_chunk(self.seed, offset // CHUNK, self.cdf, self.counts)
        keys = self.start[blocks] + index
        distinct, at = np.unique(keys, return_index=True)
        new = ~self._seen.contains(distinct)
        self._seen.add(distinct[new])
        self._keys.extend(keys)
        self._first.extend(offset + np.sort(at[new]))

    def draws_for(self, n_distinct: int, max_draws: int | None = None) -> int:
        """How many draws the sequence takes to hold ``n_distinct`` distinct items (the last one completes them).

        Raises
        ------
        ValueError
            When ``max_draws`` (default ``1000 n + 10^6``) draws hold fewer: the
            proposal puts almost no mass on the items not drawn yet.
        """
        if n_distinct <= 0:
            return 0
        max_draws = max_draws or 1000 * n_distinct + 1_000_000
        while self.first.size < n_distinct:
            if self.keys.size >= max_draws:
                raise ValueError(f"drew {self.keys.size} items but found only {self.first.size} of {n_distinct} "
                                   "distinct ones: the proposal puts almost no mass on the others; increase the "
                                   "design's defensive weight")
            self._grow()
        return int(self.first[n_distinct - 1]) + 1

    def appearance(self, n_draws: int) -> np.ndarray:
        """For each of the first ``n_draws`` draws, the place of its item in the order of first appearance."""
        while self.keys.size < n_draws:
            self._grow()
        keys = self.keys[:n_draws]
        return appearance(keys, keys[self.first[self.first < n_draws]])

    def ranks(self, n_distinct: int) -> tuple[np.ndarray, np.ndarray]:
        """Block and hash rank of the first ``n_distinct`` distinct items, in order of first appearance
        (:func:`block_ranks`)."""
        self.draws_for(n_distinct)
        return block_ranks(self.keys[self.first[:n_distinct]], self.start)


class GrowingArray:
    """An int64 array appended to in place, its capacity doubled when full (amortized O(1) per value)."""

    def __init__(self):
        self._buffer, self.size = np.empty(CHUNK, dtype=np.int64), 0

    @property
    def values(self) -> np.ndarray:
        """The values appended so far (a view)."""
        return self._buffer[:self.size]

    def extend(self, values: np.ndarray) -> None:
        """Append ``values``."""
        end = self.size + values.size
        if end > self._buffer.size:
            self._buffer = np.concatenate([self.values, np.empty(max(end, 2 * self._buffer.size) - self.size,
                                                                 dtype=np.int64)])
        self._buffer[self.size:end] = values
        self.size = end


class KeySet:
    """A set of int keys kept as sorted arrays of decreasing sizes (each at least twice the next, as in a
    log-structured merge), so that adding ``n`` keys in batches costs ``O(n log^2 n)`` and a look-up
    ``O(log^2 n)``."""

    def __init__(self):
        self.levels: list[np.ndarray] = []

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Whether each of ``keys`` is in the set."""
        found = np.zeros(keys.size, dtype=bool)
        for level in self.levels:
            at = np.minimum(np.searchsorted(level, keys), level.size - 1)
            found |= level[at] == keys
        return found

    def add(self, keys: np.ndarray) -> None:
        """Add distinct ``keys`` that are not in the set yet."""
        if keys.size == 0:
            return
        self.levels.append(np.sort(keys))
        while len(self.levels) > 1 and self.levels[-2].size < 2 * self.levels[-1].size:
            top = self.levels.pop()
            self.levels[-1] = np.sort(np.concatenate([self.levels[-1], top]))


def appearance(keys: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """The place of every key in ``distinct`` (the distinct keys in order of first appearance)."""
    by_key = np.argsort(distinct)
    return by_key[np.searchsorted(distinct[by_key], keys)]


def block_ranks(distinct: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Block and rank of distinct keys in order of first appearance: the block whose ``[start, next start)`` holds
    the key, and how many keys of that block appeared before it."""
    blocks = np.searchsorted(start, distinct, side="right") - 1
    return blocks, ranks_within(blocks)
