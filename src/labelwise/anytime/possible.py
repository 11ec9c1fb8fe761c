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
then both totals are nonincreasing in ``t`` and the set is an interval.  A
candidate grid point ``g`` is kept when the interval reaches within one grid
step of it (the largest total read at ``g - step``, the smallest at
``g + step``), so both grid points around ``t*`` are kept and the betting
sequence's interval, which reaches one step beyond the kept points, still
holds ``t*``; that interval is then clipped to the set's ends, found between
grid points on the chords of the two totals, whose roots lie at or beyond
them (:meth:`PossibleValues.ends`).  With a negative denominator somewhere no
candidate is dropped.
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
    grid : ndarray, shape (G,)
        The candidates, evenly spaced.
    most, least : ndarray, shape (K, G)
        Per group, the largest and the smallest ``num - t den`` at every candidate.
    """

    a: np.ndarray
    a0: float
    b: np.ndarray
    b0: float
    grid: np.ndarray
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
        values = num[..., None] - grid * den[..., None]
        return cls(a, a0, b, b0, grid, values.max(axis=1), values.min(axis=1))

    def _totals(self, counts: UnlabeledCounts) -> tuple[np.ndarray, np.ndarray]:
        """The largest and the smallest pool total ``sum_i (num_i - t den_i)`` at every candidate after each
        batch (shape (B, G) each), with a slack for float rounding added to the one and taken from the other."""
        num = counts.loss_sum @ self.a + self.a0 * counts.count
        den = counts.loss_sum @ self.b + self.b0 * counts.count
        known = num[:, None] - self.grid * den[:, None]
        slack = SLACK * (counts.count + counts.unlabeled.sum(axis=1))[:, None]
        return known + counts.unlabeled @ self.most + slack, known + counts.unlabeled @ self.least - slack

    def kept(self, counts: UnlabeledCounts) -> np.ndarray:
        """Whether each candidate is within one grid step of the possible values after each batch (shape (B, G)):
        the largest total one step below it is at least 0 and the smallest one step above at most 0 (beyond the
        grid, where the value cannot lie, nothing is ruled out)."""
        highest, lowest = self._totals(counts)
        inf = np.full((highest.shape[0], 1), np.inf)
        return (np.hstack([inf, highest[:, :-1]]) >= 0) & (np.hstack([lowest[:, 1:], -inf]) <= 0)

    def ends(self, counts: UnlabeledCounts) -> tuple[np.ndarray, np.ndarray]:
        """The least and the largest possible value after each batch (shape (B,) each), or a little beyond.

        The largest total is convex in ``t`` (a sum of maxima of affine functions), so between the last
        candidate where it is at least 0 and the next one its chord lies above it and the chord's root is at or
        beyond the largest possible value; the smallest total is concave, and the chord's root at or below the
        least possible value.  Where no candidate brackets the root, the grid's end.
        """
        highest, lowest = self._totals(counts)
        rows, last = np.arange(highest.shape[0]), self.grid.size - 1
        step = self.grid[1] - self.grid[0]
        top = last - np.argmax(highest[:, ::-1] >= 0, axis=1)  # the last candidate with highest >= 0
        after = np.minimum(top + 1, last)
        drop = highest[rows, top] - highest[rows, after]
        upper = np.where((top < last) & (highest[rows, top] >= 0) & (drop > 0),
                         self.grid[top] + step * highest[rows, top] / np.where(drop > 0, drop, 1.0), self.grid[-1])
        bottom = np.argmax(lowest <= 0, axis=1)  # the first candidate with lowest <= 0
        before = np.maximum(bottom - 1, 0)
        fall = lowest[rows, before] - lowest[rows, bottom]
        lower = np.where((bottom > 0) & (lowest[rows, bottom] <= 0) & (fall > 0),
                         self.grid[before] + step * lowest[rows, before] / np.where(fall > 0, fall, 1.0), self.grid[0])
        return lower, upper
