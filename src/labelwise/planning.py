"""How many labels reach a target half-width: the plan before and while labeling.

The delta-method variance of a design's estimator at ``n`` labels is ``V(n) / n`` (Marchant & Rubinstein,
"Needle in a Haystack", KDD 2021, sec. 3.3.2), times ``1 - n / N`` without replacement (Yilmaz et al., "Sample
Efficient Model Evaluation", 2021, eq. 25).  For a static design the per-label variance ``V`` is constant;
adaptive designs lower it as they learn, fastest early, sometimes in a cliff (once every uncertain item is
labeled).  The plan projects ``V(n)`` from pilot runs of the design (:mod:`labelwise.planning_pilots`):

* the pilot runs like the session -- those whose variance at ``n0`` lies within a factor :data:`NEAR` of the
  session's own ``V0 = n0 (h / z)^2`` (``h`` the half-width of its interval, divided by ``1 - n0 / N`` without
  replacement) -- are the runs whose pseudo-truth resembles the labels seen.  Their central curve ``C``
  (:func:`central_projection`: per mark a trimmed mean of ``log V``, interpolated in ``log n``, beyond the last
  mark falling with the runs' local slope) is followed when at least :data:`MIN_NEAR` runs are like the session
  and it lies within a factor :data:`AGREEMENT` of ``V0``.  It gives the shape, the session the level for the
  share of the labels it already holds (:func:`nested_projection`): ``V(n) = w V0 C(n) / C(n0) + (1 - w) C(n)``
  with ``w = n0 / n``;
* the runs double (:func:`pilot_projection`) while the central curve's standard error is above
  :data:`CENTRAL_SE`: on a pool with few positives the runs' curves lie far apart and the central curve of 8
  depends on which were drawn;
* when the session's labels contradict the pool's probabilities (their standardized surprise
  :func:`~labelwise.planning_pilots.calibration_surprise` above :data:`MISCALIBRATED` by more than an excess of
  :data:`MISCALIBRATION_EFFECT` per label can explain: pilot runs drawn from over-confident probabilities see too
  few surprises and understate the variance), the pilot runs draw their labels from the probabilities
  recalibrated to the session's labels (:func:`~labelwise.planning_pilots.recalibration`: Platt, with its
  parameters' uncertainty) and the plan follows them as above.  Their curve, not the session's variance alone,
  carries the plan: under a miscalibrated pool a design's variance is no power law from its first labels --
  the interval holds each draw's jump to the measure's range (:func:`~labelwise.estimators.held_second_moment`),
  which keeps the variance of the few surprises seen early low, and it rises while the design finds those the
  probabilities hide, then falls (on the over-confident 1:100 pool of ``benchmarks/planning_accuracy.py`` the
  default design's median per-label variance goes from 1.8 at 200 labels to 2.9 at 350 and 1.2 at 1700), a
  shape that pilot runs against recalibrated labels reproduce; and the session's variance at 200 labels ranges
  over a factor of 4 (1.1 to 5.3 in 20 sessions whose realized counts lie between 1550 and 2150), which a plan
  scaling it alone carries in full, one weighting it by its share of the labels in part;
* otherwise (too few pilot runs like the session, or more than two classes, where no Platt map applies):
  ``V(n) = V1 (n / n0)^b`` from the session's own variance ``V1``, the geometric mean over its last batches
  (:func:`~labelwise.planning_pilots.recent_variance`), the pilots' slope ``b`` trusted only down to
  :data:`MODEST_DECAY`;
* a projection that has the half-width reached already while the session's interval is still wider gives way
  to the session's own variance (:func:`present_projection`): the present is known;
* before :data:`~labelwise.planning_pilots.PILOT_LABELS` labels, or while the session's estimate is undefined,
  each pilot run's own curve, a run reaching the half-width no sooner than its first mark with a variance; an
  undefined session follows the runs still without one at its labels, and has its half-width not reached.

The plan is the first ``n`` whose half-width ``z sqrt(V(n) / n)`` reaches ``eps`` (the grid search and
bisection of :func:`labels_for`; the sample size of Chaganty et al., "Importance sampling for unbiased on-demand
evaluation of knowledge base population", EMNLP 2017, sec. 3.3).  The range is the plan with the variance
times ``exp(-+ s)``, ``s`` the standard deviation of one run's ``log V`` across the runs at their last mark (at
least ``sqrt(2 / n0)``, that of a variance estimated from ``n0`` normal draws): where about two runs in three
land.  Before any label it is the spread of the pilot runs' own plans, between their 1/6 and 5/6 quantiles.  The larger projection over the
measure's components is the plan.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .designs import DESIGNS, Design, make_design
from .measures import Measure
from .planning_cache import session_pilot_curves
from .planning_pilots import (
    PILOT_LABELS,
    PILOT_MARKS,
    PILOT_RUNS,
    anchor,
    calibration_surprise,
    decay_slope,
    finite_population_factor,
    log_variance,
    per_label_variance,
    pilot_curves,
    recalibration,
    recent_variance,
    run_variances,
)
from .pool import Pool

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "AGREEMENT",
    "MIN_NEAR",
    "MISCALIBRATED",
    "MISCALIBRATION_EFFECT",
    "MODEST_DECAY",
    "NEAR",
    "Plan",
    "Projection",
    "central_projection",
    "kept_target",
    "labels_for",
    "like_session",
    "nested_projection",
    "pilot_projection",
    "plan_designs",
    "plan_session",
    "power_law",
    "present_projection",
    "save_target",
    "target_plan",
    "trimmed_mean",
]

#: Largest ratio between a pilot run's variance and the session's at its labels for the run to count as like it.
NEAR = 8.0
#: Fewest pilot runs like the session whose median curve the plan follows.
MIN_NEAR = 2
#: Quantiles of the pilot runs' own plans that bound the range before any label (two runs in three between them).
RANGE_QUANTILES = (1 / 6, 5 / 6)
#: Largest ratio between the session's variance and the median curve of the runs like it for the plan to follow it.
AGREEMENT = 4.0
#: Most pilot runs a session's plan asks for (doubling from ``PILOT_RUNS``).
MAX_PILOT_RUNS = 32
#: Standard error of the pilot runs' central ``log V`` at which they stop doubling: a tenth in the variance, at
#: most a tenth in the plan (``n`` grows as ``V^(1 / (1 - b))``, ``b <= 0`` the decay slope), a third of +-30%.
CENTRAL_SE = 0.1
#: Share of the pilot runs trimmed at each end of their central curve.
TRIM = 0.25
#: Steepest decay slope taken from pilot runs whose variance disagrees with the session's.
MODEST_DECAY = -0.5
#: Standardized surprise of the session's labels under the pool's probabilities, less
#: :data:`MISCALIBRATION_EFFECT` times the root of the labeled items
#: (:func:`~labelwise.planning_pilots.calibration_surprise`), above which the pilot runs drawn from those
#: probabilities are not followed: 4 standard errors, a false alarm in under 1e-3 of sessions even where the
#: surprise of a few hundred labels on a rare pool is skewed.
MISCALIBRATED = 4.0
#: Excess surprise per label, in standard deviations of one label's surprise, that the calibration test asks for
#: before it drops the pilots.  Logits scaled by ``k`` give about ``|k - 1| / 2`` (0.047 to 0.051 at ``k = 1.1``
#: on rare and balanced pools), so 0.1 tolerates logits off by up to a fifth: there a passive F1's per-label
#: variance under the pilots' labels moves by 0.1 to 0.2 in ``log V`` -- of the order of :data:`CENTRAL_SE`, the
#: pilots' own uncertainty -- and the session's level corrects a shift in level (:func:`nested_projection`).
MISCALIBRATION_EFFECT = 0.1
#: Grid points on ``[1, N]`` (geometric) where :func:`labels_for` looks for the first crossing.
GRID_POINTS = 2048
#: Session-file cache key of the half-width a plan aims at (``labelwise plan SESSION`` stores it).
TARGET_KEY = "plan_target"


@dataclass(frozen=True)
class Plan:
    """Projected further labels to reach a half-width, with a range.

    Attributes
    ----------
    design : str
    labels_needed : int
        Further labels projected (beyond ``labels_so_far``).
    low, high : int
        Range of the projection.
    labels_so_far : int
    """

    design: str
    labels_needed: int
    low: int
    high: int
    labels_so_far: int = 0

    def to_dict(self) -> dict:
        """JSON fields ``design``, ``labels_needed``, ``low``, ``high``, ``labels_so_far``."""
        return asdict(self)


def labels_for(projection: Projection, half_width: float, level: float, n_items: int,
               with_replacement: bool) -> float:
    """Smallest ``n`` whose half-width ``z sqrt(V(n) / n)`` (times ``sqrt(1 - n / N)`` without replacement)
    is at most ``half_width``, ``V`` the ``projection``'s; ``n_items`` if none, ``inf`` for an unknown ``V``.

    The first crossing on a grid of ``[1, N]`` (a pilot curve may rise between marks), then bisection
    between the grid points around it.
    """
    if not half_width > 0:
        raise ValueError(f"half_width: must be positive, got {half_width}")
    if not np.isfinite(projection.log_v).all():
        return math.inf  # an unknown variance
    z = NormalDist().inv_cdf(0.5 + level / 2)

    def half(n: np.ndarray) -> np.ndarray:
        return z * np.sqrt(projection.variance(n) / n * finite_population_factor(n, n_items, with_replacement))

    grid = np.unique(np.r_[np.geomspace(1.0, n_items, GRID_POINTS), projection.marks]).clip(1.0, n_items)
    narrow = half(grid) <= half_width
    if not narrow.any():
        return float(n_items)
    first = int(np.argmax(narrow))
    if first == 0:
        return 1.0
    lo, hi = grid[first - 1], grid[first]
    while hi - lo > 0.5:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if half(np.array([mid]))[0] <= half_width else (mid, hi)
    return float(hi)


class Projection(NamedTuple):
    """The per-label variance the plan projects: ``C = exp(log_v)`` at the label counts ``marks``,
    interpolated in ``log n`` between them (the first value before the first mark), falling as
    ``n^slope`` beyond the last; one run's ``log V`` varies by ``spread`` (standard deviation).  With
    ``level_at = n0 > 0`` the session's level ``level_ratio C(n0)`` holds for the share ``w = min(n0 / n, 1)``
    of the labels: ``V(n) = C(n) (w level_ratio + 1 - w)`` (:func:`nested_projection`)."""

    marks: tuple[float, ...]
    log_v: tuple[float, ...]
    slope: float
    spread: float = 0.0
    level_at: float = 0.0
    level_ratio: float = 1.0

    def variance(self, n: np.ndarray) -> np.ndarray:
        """``V(n)`` at label counts ``n``."""
        x, marks, log_v = np.log(n), np.log(self.marks), np.asarray(self.log_v, dtype=float)
        curve = np.exp(np.where(x <= marks[-1], np.interp(x, marks, log_v), log_v[-1] + self.slope * (x - marks[-1])))
        share = np.minimum(self.level_at / n, 1.0)
        return curve * (share * self.level_ratio + 1 - share)

    def scaled(self, log_factor: float) -> Projection:
        """The projection with every variance times ``exp(log_factor)``."""
        return self._replace(log_v=tuple(np.asarray(self.log_v) + log_factor))


def power_law(v0: float, n0: float, slope: float, spread: float = 0.0) -> Projection:
    """``V(n) = v0 (n / n0)^slope`` from ``n0`` labels on (``v0`` before)."""
    return Projection((float(n0),), (float(log_variance(v0)),), slope, spread)


def trimmed_mean(values: np.ndarray) -> float:
    """Mean of ``values`` without the ``floor(TRIM k)`` smallest and largest of the ``k``."""
    cut = math.floor(TRIM * values.size)
    return float(np.mean(np.sort(values)[cut:values.size - cut]))


def central_projection(curves: np.ndarray, n: int) -> Projection:
    """The pilot runs' central curve: per mark the mean of ``log V`` over the runs with a value there, a quarter of
    them trimmed at each end (:data:`TRIM`: robust to the few runs whose pseudo-truth holds many or none of the
    rare outcomes, yet using more of the runs than a median); their local slope from ``n`` labels on and the
    spread of one run's ``log V`` at the last mark (at least ``sqrt(2 / n)``, that of a variance estimated from
    ``n`` normal draws)."""
    slope = decay_slope(curves, anchor(curves, n))
    last = curves[:, -1][np.isfinite(curves[:, -1]) & (curves[:, -1] > 0)]  # each run's least noisy value
    spread = max(float(np.std(np.log(last), ddof=1)) if last.size > 1 else 0.0, math.sqrt(2 / n))
    known = np.isfinite(curves).any(axis=0)  # marks where some run has a variance
    marks = np.array(PILOT_MARKS[:curves.shape[1]], dtype=float)[known]
    log_v = [trimmed_mean(column[np.isfinite(column)]) for column in log_variance(curves[:, known]).T]  # a few marks
    return Projection(tuple(marks), tuple(float(v) for v in log_v), slope, spread)


def like_session(v0: float, n: int, curves: np.ndarray) -> np.ndarray:
    """Which pilot runs are like the session: their variance at ``n`` labels within a factor :data:`NEAR` of its
    ``v0`` (none for ``v0 = 0``)."""
    with np.errstate(invalid="ignore"):  # NaN: not like
        return np.abs(log_variance(run_variances(curves, n)) - log_variance(v0)) <= math.log(NEAR) if v0 > 0 else (
            np.zeros(curves.shape[0], dtype=bool))


def pilot_projection(v0: float, n: int, curves_of: Callable[[int], np.ndarray]) -> Projection | None:
    """The central curve (:func:`central_projection`) of the pilot runs like the session (:func:`like_session`),
    ``curves_of(runs)`` giving the curves of the first ``runs``; ``None`` when fewer than :data:`MIN_NEAR` are
    like it or their curve lies beyond a factor :data:`AGREEMENT` of ``v0`` at ``n`` labels.

    The runs double from :data:`PILOT_RUNS` (up to :data:`MAX_PILOT_RUNS`) while some are like the session and
    the standard error of the central ``log V`` at the last mark (the spread of the runs like it over the root
    of their number) exceeds :data:`CENTRAL_SE`: a pool whose runs lie far apart (a rare outcome) gets more of
    them, a pool whose runs agree keeps the first.
    """
    runs = PILOT_RUNS
    while True:
        curves = curves_of(runs)
        like = like_session(v0, n, curves)
        if like.sum() >= MIN_NEAR:
            central = central_projection(curves[like], n)
            if central.spread / math.sqrt(like.sum()) <= CENTRAL_SE or runs >= MAX_PILOT_RUNS:
                agrees = abs(log_variance(v0) - log_variance(central.variance(np.array([n], float)))[0])
                return central if agrees <= math.log(AGREEMENT) else None
        elif not like.any() or runs >= MAX_PILOT_RUNS:
            return None
        runs *= 2


def nested_projection(central: Projection, v0: float, n: int) -> Projection:
    """The pilots' central curve ``C`` at the session's level for the share of the labels it holds:
    ``V(m) = w V0 C(m) / C(n) + (1 - w) C(m)`` with ``w = min(n / m, 1)``.

    A weighting, not a derivation: near ``n`` the session's level decides, far beyond it the pilots' curve,
    with the session's share of the labels as the weight and the pilots' shape ``C(m) / C(n)`` carrying its
    level along an adaptive design's decay.  (Were the variance per label a plain mean of per-draw
    contributions, the session's excess would last as ``(n / m)(V0 - C(n))``; how much of a session's own
    deviation lasts in fact differs by design -- across runs on a 5% pool, about that much under
    ``importance``, less under ``passive`` and much less under ``ais`` -- and a carry-over regressed on the
    pilot runs scored lower on ``benchmarks/planning_accuracy.py``.)
    """
    ratio = float(np.exp(log_variance(v0) - log_variance(central.variance(np.array([float(n)])))[0]))
    return central._replace(level_at=float(n), level_ratio=ratio)


def present_projection(projection: Projection, v0: float, n: int, half_width: float, level: float, n_items: int,
                       with_replacement: bool) -> Projection:
    """``projection``, unless it has ``half_width`` reached by ``n`` labels while the session's interval (its
    variance ``v0``) is still wider: then the session's own variance along the projection's slope (at most
    :data:`MODEST_DECAY`), which reaches it no sooner than the next label."""
    own = power_law(v0, n, max(projection.slope, MODEST_DECAY), projection.spread)
    plan = lambda p: labels_for(p, half_width, level, n_items, with_replacement)
    return own if plan(projection) <= n < plan(own) else projection


def _count(n: float, n_items: int) -> int:
    return n_items if not np.isfinite(n) else math.ceil(n)


def _pilot_plan(pool: Pool, design: Design, curves: np.ndarray, half_width: float, level: float,
                undefined_at: int = 0) -> tuple[float, float, float]:
    """(median, low, high) of the labels the pilot runs (``curves``) project, each along its own curve; low and
    high are the runs' :data:`RANGE_QUANTILES` (sample values), where about two runs in three land: not the
    extremes, which one run that met no positive (a variance near 0, a plan of a few labels) would set.  A run
    with no variance at any mark plans the whole pool.

    A run without a variance at its first marks (its estimate undefined there, e.g. no positive seen) reaches the
    half-width no sooner than its first mark with one.  With ``undefined_at = n > 0``, a session whose estimate is
    still undefined at ``n`` labels, the runs like it are those without a variance up to ``n`` labels (every run
    when none is), and none reaches the half-width before label ``n + 1``: the present is known.
    """
    marks = np.array(PILOT_MARKS[:curves.shape[1]], dtype=float)
    if undefined_at:
        like = ~np.isfinite(curves[:, marks <= undefined_at]).any(axis=1)
        curves = curves[like] if like.any() else curves
    slope = decay_slope(curves, anchor(curves))
    needs = [max(labels_for(Projection(tuple(marks[known]), tuple(log_variance(run[known])), slope), half_width,
                            level, pool.n_items, design.with_replacement),
                 marks[known][0] if not known[0] else 0.0, undefined_at + 1.0)
             if (known := np.isfinite(run)).any() else math.inf for run in curves]  # inf: no variance in any mark
    low, high = np.quantile(needs, RANGE_QUANTILES, method="inverted_cdf")
    return float(np.median(needs)), float(low), float(high)


def plan_designs(pool: Pool, measure: Measure, half_width: float, level: float = 0.95,
                 designs: list[str] | None = None, seed: int = 0) -> list[Plan]:
    """Before any label: one plan per design, from pilot runs against the pool's probabilities.

    Parameters
    ----------
    pool : Pool
    measure : Measure
    half_width : float
    level : float
    designs : list of str, optional
        Registered design names (default: every one that runs on ``pool``).
    seed : int
    """
    plans = []
    for name in designs or sorted(DESIGNS):
        design = make_design(name, pool, measure)
        try:
            total, low, high = _pilot_plan(pool, design, pilot_curves(pool, measure, design, None, seed), half_width,
                                           level)
        except ValueError:  # a design that does not run on this pool (e.g. oasis on a multi-class pool)
            if designs:
                raise
            continue
        plans.append(Plan(name, *(_count(x, pool.n_items) for x in (total, low, high))))
    return plans


def plan_session(session: Session, half_width: float, measure: Measure | None = None,
                 level: float = 0.95, pilot_seed: int = 0) -> Plan:
    """Further labels the session's design needs to reach ``half_width`` (see the module docstring); the pilot
    runs are drawn with ``pilot_seed``."""
    target = measure or session.measure
    n, pool, design = session.n_labels, session.pool, session.design
    est = session.estimate(measure, level)
    v0 = per_label_variance(est, pool.n_items, design.with_replacement)
    if n < PILOT_LABELS or not np.isfinite(v0):
        curves = session_pilot_curves(session, target, pilot_seed, PILOT_RUNS)  # kept in the session file
        undefined = n if n and not est.defined.any() else 0
        total, low, high = _pilot_plan(pool, design, curves, half_width, level, undefined)
    else:
        calibrated = calibration_surprise(session, MISCALIBRATION_EFFECT) <= MISCALIBRATED
        recalibrated = None if calibrated else recalibration(session)  # the pilots' labels follow the session's
        curves_of = lambda runs: session_pilot_curves(session, target, pilot_seed, runs, recalibrated)
        projection = pilot_projection(v0, n, curves_of) if calibrated or recalibrated is not None else None
        if projection is not None:
            projection = nested_projection(projection, v0, n)
        else:  # no pilot runs like the session
            everyone = central_projection(curves_of(PILOT_RUNS), n)
            projection = power_law(recent_variance(session, measure, level), n, max(everyone.slope, MODEST_DECAY),
                                   everyone.spread)
        projection = present_projection(projection, v0, n, half_width, level, pool.n_items, design.with_replacement)
        total, low, high = (labels_for(projection.scaled(f), half_width, level, pool.n_items, design.with_replacement)
                            for f in (0.0, -projection.spread, projection.spread))
    further = lambda x: max(0, _count(x, pool.n_items) - n)
    return Plan(design.name, further(total), further(low), further(high), n)


def save_target(session: Session, half_width: float, level: float) -> None:
    """Keep the half-width a plan aims at in the session file, for the ``serve`` dashboard."""
    if session.store is not None:
        session.store.put_cache(TARGET_KEY, json.dumps({"half_width": half_width, "level": level}).encode())


def kept_target(session: Session) -> dict | None:
    """The ``{"half_width", "level"}`` kept by :func:`save_target`; ``None`` if none was kept."""
    stored = None if session.store is None else session.store.cached(TARGET_KEY)
    return None if stored is None else json.loads(stored)


def target_plan(session: Session) -> dict | None:
    """The plan toward the half-width kept by :func:`save_target`, as ``{"half_width", "level", **plan}``; ``None``
    when no target was kept."""
    target = kept_target(session)
    if target is None:
        return None
    return {**target, **plan_session(session, target["half_width"], level=target["level"]).to_dict()}
