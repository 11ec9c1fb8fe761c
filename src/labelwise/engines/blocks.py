"""Score blocks: the one-pass summary of a pool that the engine designs plan on.

Every item falls in one block, keyed by its systems' predicted labels and
the bin of its prior ``p(y=1|x)`` on a fixed grid of :data:`N_BINS` bins of
[0, 1] (:func:`prior_bins`), fine on the log-odds scale: over-confident
systems put most items at probabilities far below 1/1024, which one bin of
an equal-width grid would lump together.  The prior is the mean over the systems of their
probability (or of the logistic link of their score, or of their predicted
label), as :func:`labelwise.oracle.score_prior` takes it.  One pass counts
the items of every block and sums their prior; the block edges of a
quantile partition (the strata of online-poisson) follow from these counts, so no
engine needs to sort.  The grid is fixed rather than data-driven so that
every engine computes the same blocks, hence the same plan and the same
sample.

The key of a block is ``bin * 2^S + sum_s pred_s 2^s`` for ``S`` systems
with binary predictions (``bin`` alone without predictions).  Blocks within
score strata (``online-poisson``, :mod:`labelwise.engines.online`) are keyed
``stratum * 2^B + key`` with ``B`` the bits of a block key
(:attr:`BlockSummary.key_bits`): :func:`stratum_keys`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..estimators.posterior import loss_cells
from ..measures import Measure
from ..oracle import score_prior
from ..pool import Outputs, Pool

__all__ = ["BIN_BITS", "LEVELS", "LEVEL_EDGES", "N_BINS", "PER_LEVEL", "BlockSummary", "block_keys",
           "blocks_fit", "depends_on_predictions_only", "key_bits", "level_scale", "memory_blocks", "memory_keys",
           "memory_prior", "pool_block_keys", "prior_bins", "stratum_keys", "summarize_keys"]

#: Levels of the grid on each side of 1/2, and equal bins per level (:func:`prior_bins`).
LEVELS, PER_LEVEL = 32, 16
#: Bins of the prior ``p(y=1|x)`` on [0, 1], and the bits of a bin.
N_BINS = 2 * LEVELS * PER_LEVEL
BIN_BITS = N_BINS.bit_length() - 1
#: Lower edges ``2^-(LEVELS - k + 1)`` of the levels ``k = 1 .. LEVELS - 1`` of [0, 1/2) (level 0 is
#: ``[0, 2^-LEVELS)``), increasing.
LEVEL_EDGES = 2.0 ** -np.arange(LEVELS, 1, -1)


def level_scale(k: np.ndarray) -> np.ndarray:
    """``PER_LEVEL`` over the width of level ``k`` (a power of two: scaling by it is exact)."""
    return np.ldexp(float(PER_LEVEL), np.where(k > 0, LEVELS - k + 1, LEVELS))


def _half_bins(q: np.ndarray) -> np.ndarray:
    """Bin in ``[0, N_BINS / 2)`` of ``q`` in [0, 1/2] (:func:`prior_bins`)."""
    k = np.searchsorted(LEVEL_EDGES, q, side="right")
    sub = np.floor(q * level_scale(k)).astype(np.int64) - np.where(k > 0, PER_LEVEL, 0)
    return k * PER_LEVEL + np.minimum(sub, PER_LEVEL - 1)


def prior_bins(prior: np.ndarray) -> np.ndarray:
    """The bin of each prior ``p`` on the grid of :data:`N_BINS` bins, increasing in ``p``.

    With ``q = min(p, 1 - p)``, [0, 1/2) is cut into :data:`LEVELS` levels
    ``[0, 2^-32), [2^-32, 2^-31), ..., [1/4, 1/2)``, each into
    :data:`PER_LEVEL` equal bins; ``p >= 1/2`` takes the mirror bin of
    ``1 - p``.  A bin thus spans at most 1/16 of its level's odds, and every
    step (``1 - p`` for ``p >= 1/2``, scaling by a power of two, ``floor``,
    comparisons) is exact in floating point, so every engine bins alike.
    """
    p = np.asarray(prior, dtype=float)
    low = p < 0.5
    return np.where(low, _half_bins(np.where(low, p, 0.0)), N_BINS - 1 - _half_bins(np.where(low, 0.5, 1.0 - p)))


@dataclass(frozen=True)
class BlockSummary:
    """Items per block and their summed prior: what one pass over a pool gives.

    Attributes
    ----------
    keys : ndarray of int64, shape (G,)
        Block keys (module docstring), increasing.
    counts : ndarray of int64, shape (G,)
        Items per block.
    prior_sums : ndarray of float, shape (G,)
        ``sum p(y=1|x)`` over the items of each block.
    n_systems : int
    has_preds : bool
        Whether the keys carry the systems' predicted labels.
    """

    keys: np.ndarray
    counts: np.ndarray
    prior_sums: np.ndarray
    n_systems: int
    has_preds: bool

    @property
    def n_items(self) -> int:
        """Items in the pool."""
        return int(self.counts.sum())

    @property
    def key_bits(self) -> int:
        """Bits of a block key below a stratum (module docstring)."""
        return key_bits(self.n_systems, self.has_preds)

    def to_json(self) -> dict:
        """The per-block columns as JSON lists (stored in an engine session)."""
        return {"keys": self.keys.tolist(), "counts": self.counts.tolist(), "prior_sums": self.prior_sums.tolist()}

    @classmethod
    def from_json(cls, data: dict, n_systems: int, has_preds: bool) -> BlockSummary:
        """Inverse of :meth:`to_json`."""
        return cls(np.asarray(data["keys"], dtype=np.int64), np.asarray(data["counts"], dtype=np.int64),
                   np.asarray(data["prior_sums"], dtype=float), n_systems, has_preds)

    def representatives(self, system_names: tuple[str, ...]) -> Pool:
        """A pool of one item per block: the block's predictions and mean prior as every system's probability.

        Measures whose loss depends on the items only through the predictions
        (precision, recall, F-measures, accuracy) take the same loss on every
        member of a block, so the block's expected loss under the prior is
        exact up to the prior's variation within the bin.
        """
        S = self.n_systems
        p = self.prior_sums / self.counts
        preds = None
        if self.has_preds:
            preds = (self.keys[:, None] >> np.arange(S)[None, :]) & 1
        return Pool.from_arrays(np.arange(self.keys.size), preds=preds, probs=np.repeat(p[:, None], S, axis=1),
                                system_names=system_names, n_classes=2, name="blocks")

    def loss_cells(self, measure: Measure, system_names: tuple[str, ...]) -> np.ndarray | None:
        """The pool's distinct loss vectors (:func:`~labelwise.estimators.posterior.loss_cells`), from one item
        per block: the same as from every item for a measure whose loss depends only on the predictions
        (``None`` for any other measure)."""
        outputs = self.representatives(system_names).outputs()
        return loss_cells(measure, outputs, 2) if depends_on_predictions_only(measure, outputs) else None


def block_keys(prior: np.ndarray, preds: np.ndarray | None) -> np.ndarray:
    """The block key of every item from its prior ``p(y=1|x)`` and binary predictions ``(N, S)`` (module docstring)."""
    key = prior_bins(prior)
    if preds is not None:
        key = (key << preds.shape[1]) + (preds.astype(np.int64) << np.arange(preds.shape[1])).sum(axis=1)
    return key


def key_bits(n_systems: int, has_preds: bool) -> int:
    """Bits of a block key: the bin's and, with predictions, one per system."""
    return BIN_BITS + (n_systems if has_preds else 0)


def stratum_keys(stratum: np.ndarray, keys: np.ndarray, bits: int) -> np.ndarray:
    """Keys of blocks within strata: ``stratum * 2^bits + key`` (module docstring)."""
    return (np.asarray(stratum, dtype=np.int64) << bits) + keys


def summarize_keys(keys: np.ndarray, prior: np.ndarray, n_systems: int, has_preds: bool) -> BlockSummary:
    """:class:`BlockSummary` of items with block ``keys`` and prior ``prior`` (NumPy, in memory)."""
    uniq, inverse = np.unique(keys, return_inverse=True)
    counts = np.bincount(inverse, minlength=uniq.size)
    sums = np.bincount(inverse, weights=prior, minlength=uniq.size)
    return BlockSummary(uniq, counts.astype(np.int64), sums, n_systems, has_preds)


def memory_prior(pool: Pool) -> np.ndarray:
    """``p(y=1|x)`` of every item of an in-memory binary pool (the block prior of the module docstring)."""
    return score_prior(pool, 1.0)[:, 1]


def pool_block_keys(pool: Pool) -> np.ndarray:
    """The block key of every item of an in-memory binary pool (its predictions when it has them)."""
    return block_keys(memory_prior(pool), None if pool.preds is None else pool.outputs().preds)


def memory_keys(pool: Pool, stratum: np.ndarray | None = None) -> np.ndarray:
    """The block key of every item of an in-memory binary pool; the blocks within score strata
    (:func:`stratum_keys`) when the ``stratum`` of every item is given."""
    keys = pool_block_keys(pool)
    if stratum is not None:
        keys = stratum_keys(stratum, keys, key_bits(pool.n_systems, pool.preds is not None))
    return keys


def memory_blocks(pool: Pool, stratum: np.ndarray | None = None) -> tuple[np.ndarray, BlockSummary]:
    """:func:`memory_keys` and the pool's :class:`BlockSummary` over those blocks."""
    keys = memory_keys(pool, stratum)
    return keys, summarize_keys(keys, memory_prior(pool), pool.n_systems, pool.preds is not None)


def blocks_fit(pool: Pool, measure: Measure) -> bool:
    """Whether score blocks can stand for ``pool``'s items under ``measure``: a binary pool and a measure whose
    losses the predictions determine (:func:`depends_on_predictions_only`)."""
    return pool.n_classes == 2 and not pool.label_names and depends_on_predictions_only(measure, pool.outputs())


def depends_on_predictions_only(measure: Measure, outputs: Outputs) -> bool:
    """Whether ``measure``'s losses stay the same when the scores and probabilities change."""
    moved = Outputs(outputs.preds, None if outputs.scores is None else outputs.scores + 1.0,
                    None if outputs.probs is None else 1.0 - outputs.probs, outputs.n_classes)
    n = len(outputs)
    return all(np.array_equal(measure.loss(outputs, np.full(n, y)), measure.loss(moved, np.full(n, y)),
                              equal_nan=True) for y in range(outputs.n_classes))
