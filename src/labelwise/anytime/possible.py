"""The values a measure can still take once some items are labeled: a bound that holds surely.

Under a deterministic oracle an item's label, once seen, is fixed, and the
pool total ``sum_i (num_i - t den_i)`` of a component ``(a.R + a0) /
(b.R + b0)`` splits into the labeled items' part, known, and the
unlabeled items' part, of which only the range is known: each unlabeled
item of group ``g`` (items with the same possible loss vectors) adds
between ``least_g(t)`` and ``most_g(t)``, the smallest and largest
``num - t den`` over its possible loss vectors (and the zero loss of an
excluded item).  The component's true value ``t*`` has total 0, so it lies
in the set of ``t`` with

    known(t) + sum_g U_g least_g(t) <= 0 <= known(t) + sum_g U_g most_g(t),

``U_g`` the unlabeled items of group ``g``.  That set contains ``t*`` with
probability one, at every batch and whatever the design drew, so the
intersection of a confidence sequence with it is still a confidence
sequence at the same level: ``P(exists n: t* not in C_n and F_n) <=
P(exists n: t* not in C_n) <= alpha``.  Where the draws have labeled the
items that can raise the value (under importance sampling the predicted
positives and the likely false negatives), the upper end of F1 comes down to
``2 TP / (2 TP + FP + FN)`` of the items seen, which the betting sequence
approaches only as fast as its capital grows.

Each denominator ``b.l + b0`` of a possible loss vector is nonnegative for the
measures of :func:`~labelwise.anytime.ratio.ratio_forms` (a count of items);
then both bounds are nonincreasing in ``t`` and the set is an interval.  A
candidate grid point ``g`` is kept when the interval reaches within one grid
step of it (``most`` read at ``g - step``, ``least`` at ``g + step``), so both
grid points around ``t*`` are kept and the reported interval, which reaches
one step beyond the kept points, still holds ``t*``.  With a negative
denominator somewhere no candidate is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .known_items import KnownDraws, LabeledItems

__all__ = ["PossibleValues", "UnlabeledCounts"]

#: Slack, relative to the pool size, under which a bound counts as reaching 0 (float rounding of the sums).
SLACK = 1e-9


@dataclass(frozen=True)
class UnlabeledCounts:
    """After each of some batches: the labeled items' count and summed losses, and the unlabeled items per group.

    Attributes
    ----------
    count : ndarray, shape (B,)
    loss_sum : ndarray, shape (B, d)
    unlabeled : ndarray, shape (B, K)
    """

    count: np.ndarray
    loss_sum: np.ndarray
    unlabeled: np.ndarray

    @classmethod
    def after_batches(cls, before: LabeledItems, draws: KnownDraws, losses: np.ndarray, items: np.ndarray,
                      group: np.ndarray) -> UnlabeledCounts:
        """From the items labeled before these batches (``before``), the batches' rows (``draws`` from
        :meth:`~labelwise.anytime.known_items.LabeledItems.by_batch` on ``losses`` and ``items``) and each
        item's group."""
        n_batches, n_groups = draws.count.size, int(group.max()) + 1
        new, at = draws.newly, draws.batch[draws.newly]
        added = np.zeros((n_batches, n_groups))
        np.add.at(added, (at, group[items[new]]), 1.0)
        size = np.bincount(group, minlength=n_groups)
        labeled = np.bincount(group[before.labeled], minlength=n_groups) + np.cumsum(added, axis=0)
        new_loss = np.zeros((n_batches, losses.shape[1]))
        np.add.at(new_loss, at, losses[new])
        return cls(draws.count + added.sum(axis=1), draws.loss_sum + new_loss, size - labeled)


@dataclass(frozen=True)
class PossibleValues:
    """For one component, the candidates some labeling of the unlabeled items still reaches.

    Attributes
    ----------
    a, b : ndarray, shape (d,)
    a0, b0 : float
        The component's form ``(a.R + a0) / (b.R + b0)``.
    below, above : ndarray, shape (G,)
        The candidates one grid step below and above.
    most, least : ndarray, shape (K, G)
        Per group, the largest ``num - t den`` at ``below`` and the smallest at ``above``.
    """

    a: np.ndarray
    a0: float
    b: np.ndarray
    b0: float
    below: np.ndarray
    above: np.ndarray
    most: np.ndarray
    least: np.ndarray

    @classmethod
    def build(cls, a: np.ndarray, a0: float, b: np.ndarray, b0: float, grid: np.ndarray, cells: np.ndarray,
              ) -> PossibleValues | None:
        """From the candidates and each group's possible loss vectors (shape (K, C, d)); ``None`` where some
        denominator is negative (module docstring)."""
        cells = np.concatenate([cells, np.zeros((cells.shape[0], 1, cells.shape[2]))], axis=1)  # excluded: 0
        num, den = cells @ a + a0, cells @ b + b0
        if np.any(den < 0):
            return None
        step = grid[1] - grid[0]
        below, above = grid - step, grid + step
        most = np.max(num[..., None] - below * den[..., None], axis=1)
        least = np.min(num[..., None] - above * den[..., None], axis=1)
        return cls(a, a0, b, b0, below, above, most, least)

    def kept(self, counts: UnlabeledCounts) -> np.ndarray:
        """Whether each candidate is still possible after each batch (shape (B, G))."""
        num = counts.loss_sum @ self.a + self.a0 * counts.count
        den = counts.loss_sum @ self.b + self.b0 * counts.count
        slack = SLACK * (counts.count + counts.unlabeled.sum(axis=1))[:, None]
        highest = num[:, None] - self.below * den[:, None] + counts.unlabeled @ self.most
        lowest = num[:, None] - self.above * den[:, None] + counts.unlabeled @ self.least
        return (highest >= -slack) & (lowest <= slack)
