"""A measure's loss of the oracle model's groups for each label, for measures other than the design's (sample reuse).

The adaptive designs model the oracle per group of items (score blocks, or
(stratum, loss key) groups): the model's part of an interval needs each
group's loss for each label.  The design's own measure has one per group by
construction; a reused measure may not.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..measures import Measure
from ..pool import Outputs, Pool

__all__ = ["BlockLosses", "group_losses", "mean_group_losses"]


def group_losses(measure: Measure, pool: Pool, of_item: np.ndarray, rep: np.ndarray) -> np.ndarray | None:
    """``measure``'s loss of every group's items for each label, ``(C, G, d)`` (``of_item``: the group of every
    item; ``rep``: one item per group); ``None`` for a measure without a loss key (every item may differ).

    Where the loss varies within a group (a measure of the scores reused from a session of the predictions'
    measure: a PR curve's points on score blocks), the group's mean loss for each label over its items.  The
    model gives a group's items one label distribution, so the mean is their expected loss.  The unlabeled
    items' variance then takes each item at its group's mean: the spread within a group is left out (for a
    PR curve, only the groups that straddle a threshold have any; Brier's loss moves with the probability in
    every group).  Without it a reused measure's interval would rest on the labeled items alone, blind to the
    positives left among the unlabeled items.
    """
    key = measure.loss_key(pool.outputs())
    if key is None:
        return None
    key = np.unique(key, return_inverse=True)[1]
    pairs, first, counts = np.unique(of_item.astype(np.int64) * (int(key.max()) + 1) + key, return_index=True,
                                     return_counts=True)
    classes = range(pool.n_classes)
    if pairs.size == rep.size:  # one loss per group
        out = pool.outputs(rep)
        return np.stack([measure.loss(out, np.full(rep.size, c)) for c in classes])
    return mean_group_losses(measure, pool.outputs(first), of_item[first], counts, rep.size)  # one item per pair


def mean_group_losses(measure: Measure, outputs: Outputs, group: np.ndarray, counts: np.ndarray,
                      n_groups: int) -> np.ndarray:
    """Every group's mean loss for each label, ``(C, n_groups, d)``, from one item per (group, loss key) pair:
    ``outputs`` of those items, ``group`` the group of each and ``counts`` the items of the pool it stands for."""
    share = counts / np.bincount(group, weights=counts, minlength=n_groups)[group]
    to_group = sparse.csr_matrix((share, (group, np.arange(group.size))), shape=(n_groups, group.size))
    return np.stack([to_group @ measure.loss(outputs, np.full(group.size, c)) for c in range(outputs.n_classes)])


class BlockLosses:
    """:func:`group_losses` of the measures reused on a sampler's score blocks, computed once per measure and pool
    (adding a system gives the sampler a new pool).

    Parameters
    ----------
    block : ndarray of int (N,)
        The block of every item, numbered ``0 .. G - 1``.
    """

    def __init__(self, block: np.ndarray):
        self.block = block
        self._pool: Pool | None = None
        self._known: dict[Measure, np.ndarray | None] = {}

    def __call__(self, measure: Measure, pool: Pool) -> np.ndarray | None:
        if pool is not self._pool:
            self._pool, self._known = pool, {}
        if measure not in self._known:
            first = np.unique(self.block, return_index=True)[1]  # one item of every block
            self._known[measure] = group_losses(measure, pool, self.block, first)
        return self._known[measure]
