"""The interval of a measure whose loss totals are all known but one: the image of that total's interval.

MCC, balanced accuracy and the Fowlkes-Mallows index map the totals ``R = (TP, P, PP) / N`` through a
nonlinear ``g`` (N. G. Marchant and B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation
under Extreme Class Imbalance", KDD 2021, Table 1, rows 2, 6 and 7), and their interval is the delta method's,
``g`` taken linear over the totals' uncertainty.  Once every predicted positive is labeled, TP and PP are
known and only P is uncertain (the positives left among the unlabeled predicted negatives), and ``g`` is
steepest where those are few: MCC's slope in P grows as ``1 / sqrt(FN)``, balanced accuracy's recall
``TP / P`` has slope ``1 / P``.  A system with no true positive on a 1:100,000 pool has an MCC within 1e-5
of 0 and a balanced accuracy within 1e-5 of 1/2, yet the delta method's 95% interval reached thousands of
times its error, and where the estimate of P is 0 the measure is undefined and the interval was its whole
range.

A total is *known* when every item whose loss in it depends on its label is labeled (the census of
:mod:`~labelwise.estimators.census`, total by total); the labels also bound each total between the labeled
items' losses plus the other items' lowest and highest losses over the labels.  When every total but one,
``j``, is known, the interval is the image

    { g(R) : R_j in its interval, the other totals known },

with no linearization, whether ``g`` is monotone in ``R_j`` or not: its extremes are read at the interval's
ends and on a grid inside it.  ``R_j``'s interval is the union of its normal interval and its Beta
interval between its bounds, both with the design's own estimate and standard error of ``R_j`` (its
estimate of the totals, :class:`~labelwise.measures.totals.Totals`, from the same labels).  Under
``online-poisson``'s default mixture interval on score blocks that standard error is the larger of the mixture's and
its reading in hindsight (``variance="conditional"``, :func:`segment_totals`): the mixture weighs no exception left
as the likely case, and where the recalibrated scores are over-confident its model of the tail may hold the
positives found to be all of them, with a standard error of the positives left a fraction of one where a dozen are
left; the hindsight reading spreads each leaf's rate of exceptions over the recalibration's posterior, which a
count of positives left needs.  The Beta interval takes the Jeffreys count where the estimate is on or near a bound
(:func:`~labelwise.estimators.intervals.beta_interval`): a count of positives estimated 0 with a standard
error ``s`` reaches about ``3.5 s`` at 95%, where the normal interval's ``1.96 s`` missed the positives a
design's model left out; the normal interval keeps the lower end the Beta's skew would raise.  Where ``g`` is undefined on a bound (MCC with no positive at
all), the totals held to it are held one item inside it.  An estimate undefined at ``R_j-hat`` takes the
value at the nearest point where it is defined.  Ratios of two totals (F1, precision, recall) keep their
intervals: their zero and exact cases are :mod:`~labelwise.estimators.zero_hits`' and
:mod:`~labelwise.estimators.census`'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from scipy.special import ndtri

from .model_covariance import larger_variance
from .pool_cache import per_pool

if TYPE_CHECKING:
    from ..designs.base import Sampler
    from ..draws import Sample
    from ..measures import Measure
    from ..pool import Outputs, Pool
    from .result import Estimate

__all__ = ["SEGMENT_BASIS", "Segment", "loss_spread", "segment_interval", "segment_profile", "segment_totals",
           "total_bounds", "total_interval", "with_segment"]

#: What the interval of a measure with one uncertain total rests on (:attr:`Estimate.basis`).
SEGMENT_BASIS = ("every loss total but one known by a census of its items: the interval is the measure over that "
                 "total's normal and Beta intervals, within what the labels allow (no delta method)")

#: Levels whose ends of ``R_j``'s interval are read exactly (others between them, on the grid).
_LEVELS = np.array([0.5, 0.68, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999])
#: Points of the grid between the bounds of ``R_j``'s widest interval.
_GRID = 201
#: Most loss components of a measure taken here (a pass per label over the pool, ``(N, d)`` each).
_MAX_DIM = 8
#: Most labels (classes, or a multi-label pool's label codes) whose losses are taken over the pool.
_MAX_CLASSES = 16


def loss_spread(measure: Measure, outputs: Outputs) -> tuple[np.ndarray, np.ndarray]:
    """Each row's lowest loss over the labels and its rise to the highest, both ``(n, d)``."""
    n = len(outputs)
    low = high = measure.loss(outputs, np.zeros(n, dtype=np.int64))
    for c in range(1, outputs.n_classes):  # a pass per label: one (n, d) loss at a time
        loss = measure.loss(outputs, np.full(n, c))
        low, high = np.minimum(low, loss), np.maximum(high, loss)
    return low, high - low


def _pool_spread(measure: Measure, pool: Pool) -> np.ndarray:
    """Over every item of ``pool``: the lowest losses' sum, the rises' sum and the smallest positive rise
    (``inf`` where none), rows of ``(3, d)``; computed once per pool and measure."""
    def compute() -> np.ndarray:
        low, rise = loss_spread(measure, pool.outputs())
        return np.stack([low.sum(axis=0), rise.sum(axis=0), np.where(rise > 0, rise, np.inf).min(axis=0)])

    return per_pool(pool, ("loss_spread", measure), compute)


def total_bounds(measure: Measure, pool: Pool, items: np.ndarray, labels: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lowest and highest mean losses ``R`` the labels allow, and one item's smallest rise of each, ``(d,)``.

    Parameters
    ----------
    measure : Measure
    pool : Pool
    items : ndarray of int
        The labeled items, each once.
    labels : ndarray
        Their labels (one per item: a deterministic oracle).
    """
    low_total, rise_total, step = _pool_spread(measure, pool)
    outputs = pool.outputs(items)
    low, rise = loss_spread(measure, outputs)
    N = pool.n_items
    lowest = (low_total - low.sum(axis=0) + measure.loss(outputs, labels).sum(axis=0)) / N
    # what the unlabeled items may add; below half the smallest rise it is rounding (every rise is one at least)
    left = rise_total - rise.sum(axis=0)
    left = np.where(left >= step / 2, left, 0.0)
    return lowest, lowest + left / N, step / N


class Segment(NamedTuple):
    """The measure along its one uncertain total (:attr:`Estimate.segment`; NaN rows for other components).

    Attributes
    ----------
    total : ndarray, shape (m, 5)
        The total's estimate, variance, bounds and draws: ``(R_j-hat, var, lowest, highest, n)``.
    profile : ndarray, shape (m, k, 2)
        Rows ``(R_j, g)``: the measure with the total at ``R_j``.
    """

    total: np.ndarray
    profile: np.ndarray


def total_interval(total: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Each total's interval from its :attr:`Segment.total` rows ``(..., 5)``: the union of its normal and Beta
    intervals between its bounds (NaN rows give NaN)."""
    from .intervals import beta_interval, normal_interval

    mean, var, lowest, highest, n = np.moveaxis(np.asarray(total, dtype=float), -1, 0)
    ok = np.isfinite(mean) & (highest > lowest)
    mean, var, lowest, highest = (np.where(ok, a, b) for a, b in ((mean, 0.5), (var, 0.0), (lowest, 0.0),
                                                                    (highest, 1.0)))
    lo_b, hi_b = beta_interval(mean, var, level, lowest, highest, n=np.where(ok, n, 1.0))
    lo_n, hi_n = normal_interval(mean, var, level, lowest, highest)
    return np.where(ok, np.fmin(lo_b, lo_n), np.nan), np.where(ok, np.fmax(hi_b, hi_n), np.nan)


def segment_profile(measure: Measure, R: np.ndarray, j: int, total: np.ndarray, step: float, level: float
                    ) -> np.ndarray:
    """``measure`` (a scalar) along ``R_j`` (the other totals at ``R``): rows ``(R_j, g)``, ``(k, 2)``.

    ``total`` is the :attr:`Segment.total` row of ``R_j``.  The points are the ends of its interval at
    ``level`` and at :data:`_LEVELS`, its estimate and a grid between the widest ends.  Where the measure is
    undefined on a bound (MCC with no positive), it is read one ``step`` (an item) inside it: a defined measure
    needs that item.
    """
    def along(x: np.ndarray) -> np.ndarray:
        points = np.repeat(np.asarray(R, dtype=float)[None], x.size, axis=0)
        points[:, j] = x
        return np.asarray(measure.value(points), dtype=float)[:, 0]

    lowest, highest = total[2], total[3]
    at_bounds = along(np.array([lowest, highest]))
    low = lowest if np.isfinite(at_bounds[0]) else min(lowest + step, highest)
    high = highest if np.isfinite(at_bounds[1]) else max(highest - step, low)
    ends = np.concatenate(total_interval(np.tile(total, (_LEVELS.size + 1, 1)), np.append(_LEVELS, level)))
    x = np.concatenate([ends, [total[0], low, high], np.linspace(ends.min(), ends.max(), _GRID)])
    return np.stack([x, along(np.clip(x, low, high))], axis=1)


def segment_interval(segment: Segment, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The extremes of each profile over its total's interval at ``level`` (NaN: no profile)."""
    x_lo, x_hi = total_interval(segment.total, level)
    x, g = segment.profile[..., 0], segment.profile[..., 1]
    slack = 1e-12 * np.abs(segment.total[:, 3] - segment.total[:, 2])[:, None]
    inside = (x >= x_lo[:, None] - slack) & (x <= x_hi[:, None] + slack) & np.isfinite(g)
    some = inside.any(axis=1)
    lo = np.where(inside, g, np.inf).min(axis=1)
    hi = np.where(inside, g, -np.inf).max(axis=1)
    return np.where(some, lo, np.nan), np.where(some, hi, np.nan)


def segment_totals(sampler: Sampler, totals: Measure, sample: Sample, level: float) -> Estimate:
    """The design's estimate of ``totals`` from ``sample``, each variance the larger of its own and its reading in
    hindsight where the design has one (``online-poisson``'s mixture on score blocks; module docstring)."""
    est = sampler.estimate(totals, sample, level)
    hindsight = sampler.in_hindsight()
    if hindsight is None:
        return est
    return replace(est, cov=larger_variance(est.cov, hindsight.estimate(totals, sample, level).cov))


def _eligible(part: Measure) -> bool:
    """A scalar of a few totals through a nonlinear ``g``, not a ratio of two totals (module docstring)."""
    from ..measures.base import RatioOfTotals

    return not isinstance(part, RatioOfTotals) and part.size == 1 and 2 <= part.dim <= _MAX_DIM


def with_segment(est: Estimate, measure: Measure, pool: Pool, sample: Sample,
                 totals: Callable[[Measure], Estimate]) -> Estimate:
    """``est`` whose interval is the image of its one uncertain total's, for each part with all others known.

    Parameters
    ----------
    est : Estimate
        Of ``measure`` from ``sample``.
    measure : Measure
        A measure or a combination; its scalar parts of 2 to 8 totals that are not ratios of two are taken.
    pool : Pool
    sample : Sample
        Labels of a deterministic oracle (the caller checks), without items excluded.
    totals : callable
        The design's estimate of a :class:`~labelwise.measures.totals.Totals` from ``sample``.

    Returns
    -------
    Estimate
        ``est`` itself where no part has exactly one uncertain total.
    """
    from ..measures.base import CombinedMeasure
    from ..measures.totals import Totals

    parts = measure.parts if isinstance(measure, CombinedMeasure) else [measure]
    todo = [(k, p) for k, p in enumerate(parts) if _eligible(p)]
    if not todo or sample.excluded is not None or pool.n_classes > _MAX_CLASSES or not len(sample.draws):
        return est
    starts = np.cumsum([0, *(p.size for p in parts)])
    items, first = np.unique(sample.draws.items, return_index=True)
    labels = np.asarray(sample.labels)[first]
    k_points = 2 * (_LEVELS.size + 1) + 3 + _GRID
    totals_rows, rows = np.full((measure.size, 5), np.nan), np.full((measure.size, k_points, 2), np.nan)
    for k, part in todo:
        lowest, highest, step = total_bounds(part, pool, items, labels)
        uncertain = np.flatnonzero(highest > lowest)
        if uncertain.size != 1:
            continue
        j = int(uncertain[0])
        t = totals(Totals(part))
        if not (t.defined[j] and t.std[j] > 0):
            continue
        R = np.where(highest > lowest, np.clip(t.R, lowest, highest), lowest)  # the known totals exact
        totals_rows[starts[k]] = R[j], t.std[j] ** 2, lowest[j], highest[j], t.n_draws
        rows[starts[k]] = segment_profile(part, R, j, totals_rows[starts[k]], step[j], est.level)
    segment = Segment(totals_rows, rows)
    lo, hi = segment_interval(segment, est.level)
    taken = np.isfinite(lo)
    if not taken.any():
        return est
    # an undefined estimate takes the measure at the defined point nearest the estimate of the total
    nearest = np.argmin(np.where(np.isfinite(rows[..., 1]), np.abs(rows[..., 0] - totals_rows[:, :1]), np.inf), axis=1)
    value = np.where(taken & ~est.defined, rows[np.arange(measure.size), nearest, 1], est.value)
    # the standard error the interval implies; a defined estimate keeps its correlations (scaled: still PSD)
    sd = np.where(taken, (hi - lo) / (2 * ndtri(0.5 + est.level / 2)), est.std)
    kept = est.defined | ~taken
    scale = np.divide(sd, est.std, out=np.zeros(sd.size), where=kept & (est.std > 0))
    cov = est.cov * np.outer(scale, scale)
    cov[np.diag_indices_from(cov)] = sd**2
    return replace(est, value=value, cov=cov, defined=est.defined | taken, segment=segment,
                   basis="; ".join(filter(None, (est.basis, SEGMENT_BASIS))))
