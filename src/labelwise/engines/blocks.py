"""Score blocks: the one-pass summary of a pool that the engine designs plan on.

Every item falls in one block, keyed by its systems' predicted labels and
the bin of its prior ``p(y=1|x)`` on a fixed grid of :data:`N_BINS` equal
bins of [0, 1].  The prior is the mean over the systems of their
probability (or of the logistic link of their score, or of their predicted
label), as :func:`labelwise.oracle.score_prior` takes it.  One pass counts
the items of every block and sums their prior; the block edges of a
quantile partition (stratified designs) follow from these counts, so no
engine needs to sort.  The grid is fixed rather than data-driven so that
every engine computes the same blocks, hence the same plan and the same
sample.

The key of a block is ``bin * 2^S + sum_s pred_s 2^s`` for ``S`` systems
with binary predictions (``bin`` alone without predictions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..measures import Measure
from ..oracle import score_prior
from ..pool import Outputs, Pool

__all__ = ["N_BINS", "BlockSummary", "block_keys", "depends_on_predictions_only", "memory_prior", "summarize_keys"]

#: Bins of the prior ``p(y=1|x)`` on [0, 1]: items of a block differ in prior by less than 1 / N_BINS.
N_BINS = 1024


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


def block_keys(prior: np.ndarray, preds: np.ndarray | None) -> np.ndarray:
    """The block key of every item from its prior ``p(y=1|x)`` and binary predictions ``(N, S)`` (module docstring)."""
    key = np.minimum(np.floor(prior * N_BINS), N_BINS - 1).astype(np.int64)
    if preds is not None:
        key = (key << preds.shape[1]) + (preds.astype(np.int64) << np.arange(preds.shape[1])).sum(axis=1)
    return key


def summarize_keys(keys: np.ndarray, prior: np.ndarray, n_systems: int, has_preds: bool) -> BlockSummary:
    """:class:`BlockSummary` of items with block ``keys`` and prior ``prior`` (NumPy, in memory)."""
    uniq, inverse = np.unique(keys, return_inverse=True)
    counts = np.bincount(inverse, minlength=uniq.size)
    sums = np.bincount(inverse, weights=prior, minlength=uniq.size)
    return BlockSummary(uniq, counts.astype(np.int64), sums, n_systems, has_preds)


def memory_prior(pool: Pool) -> np.ndarray:
    """``p(y=1|x)`` of every item of an in-memory binary pool (the block prior of the module docstring)."""
    return score_prior(pool, 1.0)[:, 1]


def depends_on_predictions_only(measure: Measure, outputs: Outputs) -> bool:
    """Whether ``measure``'s losses stay the same when the scores and probabilities change."""
    moved = Outputs(outputs.preds, None if outputs.scores is None else outputs.scores + 1.0,
                    None if outputs.probs is None else 1.0 - outputs.probs, outputs.n_classes)
    n = len(outputs)
    return all(np.array_equal(measure.loss(outputs, np.full(n, y)), measure.loss(moved, np.full(n, y)),
                              equal_nan=True) for y in range(outputs.n_classes))
