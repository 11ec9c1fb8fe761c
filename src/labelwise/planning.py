"""How many labels reach a target half-width: the plan before and while labeling.

The delta-method variance of a design's estimator at ``n`` labels is
``V(n) / n`` (Marchant & Rubinstein, "Needle in a Haystack", KDD 2021, sec.
3.3.2), times ``1 - n / N`` for designs without replacement (Yilmaz et al.,
"Sample Efficient Model Evaluation", 2021, eq. 25).  For a static design
the per-label variance ``V`` is constant; adaptive designs lower it as they
learn, fastest early (an adaptive design, or the oracle model's part of
``importance``'s interval), sometimes in a cliff (once every uncertain item
is labeled).  The plan projects ``V(n)`` from pilot runs of the design
against labels drawn from the pool's probabilities (what the design itself
believes), at :data:`PILOT_MARKS` labels:

* the pilot runs like the session -- those whose variance at ``n0`` lies within a factor :data:`NEAR` of
  the session's own ``V0 = n0 (h / z)^2`` (``h`` the half-width of its interval, divided by ``1 - n0 / N``
  without replacement: the interval already has that factor) -- are the runs whose pseudo-truth resembles
  the labels seen.  When at least :data:`MIN_NEAR` of them are and their median curve lies within a factor
  :data:`AGREEMENT` of ``V0`` at ``n0``, ``V(n)`` is that median curve: interpolated in ``log n`` between
  the marks, and beyond the last falling with the runs' local slope (fitted from ``n0`` on).  On a pool
  with few positives or few uncertain items the pilot runs' curves lie orders of magnitude apart (whether
  a run's pseudo-truth holds many of the rare outcomes, when its variance falls off a cliff); a run far
  from the session would move the median of all runs, and a session between two groups of runs would
  fall back on its own noisy level.  One session's variance after a few hundred labels is noisy on an
  imbalanced pool (whether a rare outcome was drawn yet), so it picks the runs, not the level.  A power
  law fitted to the marks would miss both the cliff and the flattening after the first few hundred labels;
* otherwise the probabilities are off: ``V(n) = V1 (n / n0)^b`` from the session's own variance ``V1``,
  the geometric mean over its last :data:`RECENT_BATCHES` batches (each the interval of the labels up to
  that batch: one batch's variance moves several-fold on an imbalanced pool), the pilots' slope ``b``
  trusted only down to :data:`MODEST_DECAY` (labels drawn from over-confident probabilities make the
  pilots' variance fall faster than the real one);
* either way, a projection that has the half-width reached already while the session's interval is still
  wider gives way to the session's own variance (:func:`present_projection`): the present is known;
* before :data:`PILOT_LABELS` labels, each pilot run's own curve.

The plan is the first ``n`` whose half-width ``z sqrt(V(n) / n)`` reaches
``eps`` (the grid search and bisection of :func:`labels_for`; the sample
size of Chaganty et al., "Importance sampling for unbiased on-demand
evaluation of knowledge base population", EMNLP 2017, sec. 3.3).  The
range is the plan with the variance times ``exp(-+ s)``, ``s`` the standard
deviation of one run's ``log V`` across the pilot runs at their last mark
(at least ``sqrt(2 / n0)``, that of a variance estimated from ``n0`` normal
draws): where about two runs in three land.  Before any label it is the
spread of the pilot runs' own plans.  The larger projection over the
measure's components is the plan.
"""

from __future__ import annotations

import json
import math
import weakref
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .designs import DESIGNS, Design, make_design
from .estimators import Estimate
from .measures import Measure
from .oracle.prior import score_prior
from .pool import Pool

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "AGREEMENT",
    "MIN_NEAR",
    "MODEST_DECAY",
    "NEAR",
    "PILOT_LABELS",
    "PILOT_MARKS",
    "RECENT_BATCHES",
    "Plan",
    "Projection",
    "labels_for",
    "median_projection",
    "pilot_curves",
    "plan_designs",
    "plan_session",
    "power_law",
    "present_projection",
    "recent_variance",
    "rotated_labels",
    "run_variances",
    "save_target",
    "session_projection",
    "target_plan",
]

#: Label counts of the pilot runs' variance curve (up to counts the plans reach: an adaptive design's decay
#: flattens after its first few hundred labels, which a slope fitted up to 800 labels would not see).
PILOT_MARKS = (100, 200, 400, 800, 1600)
#: Labels from which the session's own variance takes part in the plan (before: each pilot run's own curve).
PILOT_LABELS = 200
#: Pilot runs per design (the plan's slope and level come from them: with few runs the plan depends on their seed).
PILOT_RUNS = 8
#: Largest ratio between a pilot run's variance and the session's at its labels for the run to count as like it.
NEAR = 8.0
#: Fewest pilot runs like the session whose median curve the plan follows.
MIN_NEAR = 2
#: Largest ratio between the session's variance and the median curve of the runs like it for the plan to follow it.
AGREEMENT = 4.0
#: Batches of the session whose variances make its own level when the pilot runs disagree with it.
RECENT_BATCHES = 3
#: Steepest decay slope taken from pilot runs whose variance disagrees with the session's.
MODEST_DECAY = -0.5
#: Grid points on ``[1, N]`` (geometric) where :func:`labels_for` looks for the first crossing.
GRID_POINTS = 2048
#: Session-file cache key of the half-width a plan aims at (``labelwise plan SESSION`` stores it).
TARGET_KEY = "plan_target"

# pilot curves per pool, then per (measure, design spec): they depend on nothing else
_pilots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


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


def finite_population_factor(n: float | np.ndarray, n_items: int, with_replacement: bool) -> float | np.ndarray:
    """``1 - n / N`` for a design drawing without replacement (Yilmaz et al. 2021, eq. 25), 1 with replacement."""
    return 1.0 if with_replacement else np.maximum(1.0 - n / n_items, 0.0)


def per_label_variance(est: Estimate, n_items: int, with_replacement: bool) -> float:
    """The largest ``V = n (h / z)^2 / f`` over the defined components, ``h`` the half-width of the estimate's
    interval (the interval the plan is for) and ``f`` its :func:`finite_population_factor` (which
    :func:`labels_for` applies at the planned ``n``); NaN when none is defined with a positive variance (no
    information yet, e.g. no positive seen)."""
    lo, hi = est.interval()
    z = NormalDist().inv_cdf(0.5 + est.level / 2)
    fpc = finite_population_factor(est.n_labels, n_items, with_replacement)
    v = np.where(est.defined & (est.std > 0), est.n_labels * ((hi - lo) / (2 * z)) ** 2, np.nan)
    return float(np.nanmax(v)) / fpc if np.isfinite(v).any() and fpc > 0 else math.nan  # a census: no V


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


def rotated_labels(cdf: np.ndarray, offset: np.ndarray, run: int, runs: int) -> np.ndarray:
    """Pseudo ground truth of pilot run ``run`` of ``runs``: one label per item from ``p(y | x)`` (``cdf`` its
    cumulative sum over labels, one row per item) by the inverse-CDF draw of ``u = (offset + run / runs) mod 1``.

    With one uniform ``offset`` per item shared by the runs (a Cranley-Patterson rotation; Cranley &
    Patterson, "Randomization of number theoretic methods for multiple integration", SIAM J. Numer. Anal.
    13, 1976), each run is an exact draw, independent over items, while across the runs an item takes a
    label in ``runs p`` of them up to rounding: the pilot runs cover the probabilities evenly (on a rare
    pool, its few likely positives are spread over the runs rather than left to chance).
    """
    u = (offset + run / runs) % 1.0
    return (u[:, None] > cdf[:, :-1]).sum(axis=1)


def pilot_curves(pool: Pool, measure: Measure, design: Design, budget: int | None = None, seed: int = 0,
                 ) -> np.ndarray:
    """Per-label variances ``(runs, marks)`` of pilot runs against labels drawn from the pool's probabilities.

    Computed once per pool, measure and design (cached).
    """
    from .session import Session  # the session imports this module's users

    key = (measure, json.dumps(design.spec(), sort_keys=True), budget, seed)
    cache = _pilots.setdefault(pool, {})
    if key in cache:
        return cache[key]
    marks = [m for m in PILOT_MARKS if m <= pool.n_items] or [pool.n_items]  # a pool below the first mark: a census
    cdf = np.cumsum(score_prior(pool), axis=1)
    rng = np.random.default_rng(seed)
    offset = rng.random(pool.n_items)
    variance = lambda est: per_label_variance(est, pool.n_items, design.with_replacement)
    curves = np.full((PILOT_RUNS, len(marks)), np.nan)
    for r in range(PILOT_RUNS):
        truth = rotated_labels(cdf, offset, r, PILOT_RUNS)
        session = Session(pool, measure, design, budget=budget or marks[-1], seed=rng)
        session.run(lambda ids, t=truth: t[pool.positions(ids)], marks[-1], checkpoints=marks,
                    on_checkpoint=lambda n, est, r=r: curves[r].__setitem__(marks.index(n), variance(est)))
    cache[key] = curves
    return curves


def decay_slope(curves: np.ndarray, first: int = 0) -> float:
    """Slope ``b`` of ``log V`` against ``log n`` over the pilot marks from column ``first`` on (runs pooled;
    the last two marks when fewer are left), at most 0; 0 (a static design's constant ``V``) when the curves
    say nothing."""
    first = max(min(first, curves.shape[1] - 2), 0)
    marks = np.log(np.array(PILOT_MARKS[first:curves.shape[1]], dtype=float))
    with np.errstate(divide="ignore"):  # a variance of 0 (a census of the uncertain items) is left out
        y = np.log(curves[:, first:])
    x = np.broadcast_to(marks, y.shape).ravel()
    keep = np.isfinite(y.ravel())
    if np.unique(x[keep]).size < 2:
        return 0.0
    return min(float(np.polyfit(x[keep], y.ravel()[keep], 1)[0]), 0.0)


def _anchor(curves: np.ndarray, n: int = PILOT_LABELS) -> int:
    """Column of the pilot curves at the last mark at or below ``n`` labels (the first when none is)."""
    return max(int(np.searchsorted(PILOT_MARKS[:curves.shape[1]], n, side="right")) - 1, 0)


class Projection(NamedTuple):
    """The per-label variance the plan projects: ``V = exp(log_v)`` at the label counts ``marks``,
    interpolated in ``log n`` between them (the first value before the first mark), falling as
    ``n^slope`` beyond the last; one run's ``log V`` varies by ``spread`` (standard deviation)."""

    marks: tuple[float, ...]
    log_v: tuple[float, ...]
    slope: float
    spread: float = 0.0

    def variance(self, n: np.ndarray) -> np.ndarray:
        """``V(n)`` at label counts ``n``."""
        x, marks, log_v = np.log(n), np.log(self.marks), np.asarray(self.log_v, dtype=float)
        return np.exp(np.where(x <= marks[-1], np.interp(x, marks, log_v), log_v[-1] + self.slope * (x - marks[-1])))

    def scaled(self, log_factor: float) -> Projection:
        """The projection with every variance times ``exp(log_factor)``."""
        return self._replace(log_v=tuple(np.asarray(self.log_v) + log_factor))


def _log(v: np.ndarray | float) -> np.ndarray:
    """``log v``, a variance of 0 (a census of the uncertain items) floored at the smallest float's log."""
    return np.log(np.maximum(v, np.finfo(float).tiny))


def power_law(v0: float, n0: float, slope: float, spread: float = 0.0) -> Projection:
    """``V(n) = v0 (n / n0)^slope`` from ``n0`` labels on (``v0`` before)."""
    return Projection((float(n0),), (float(_log(v0)),), slope, spread)


def run_variances(curves: np.ndarray, n: int) -> np.ndarray:
    """Each pilot run's variance at ``n`` labels: its curve interpolated in ``log n`` between the marks where it
    has a value (its first value before, its last beyond); NaN for a run with none."""
    marks = np.log(np.array(PILOT_MARKS[:curves.shape[1]], dtype=float))
    logs = _log(curves)
    known = np.isfinite(curves)
    return np.array([np.exp(np.interp(math.log(n), marks[k], log_v[k])) if k.any() else math.nan
                     for log_v, k in zip(logs, known)])  # a few pilot runs, not items


def median_projection(curves: np.ndarray, n: int) -> Projection:
    """The pilot runs' median curve (``log V`` per mark over the runs with a value there), their local slope
    from ``n`` labels on and the spread of one run's ``log V`` at the last mark (at least ``sqrt(2 / n)``,
    that of a variance estimated from ``n`` normal draws); the projection of :func:`session_projection`."""
    slope = decay_slope(curves, _anchor(curves, n))
    last = curves[:, -1][np.isfinite(curves[:, -1]) & (curves[:, -1] > 0)]  # each run's least noisy value
    spread = max(float(np.std(np.log(last), ddof=1)) if last.size > 1 else 0.0, math.sqrt(2 / n))
    known = np.isfinite(curves).any(axis=0)  # marks where some run has a variance
    marks = np.array(PILOT_MARKS[:curves.shape[1]], dtype=float)[known]
    return Projection(tuple(marks), tuple(np.nanmedian(_log(curves[:, known]), axis=0)), slope, spread)


def session_projection(v0: float, n: int, curves: np.ndarray, recent: float | None = None) -> Projection:
    """The plan's projection from the session's variance ``v0`` at ``n`` labels and the pilot curves (module
    docstring): the median curve of the pilot runs like the session (within a factor :data:`NEAR` of ``v0``
    at ``n``) when at least :data:`MIN_NEAR` runs are and it lies within a factor :data:`AGREEMENT` of
    ``v0``; otherwise the session's own level ``recent`` (default ``v0``) along the pilots' slope, at most
    :data:`MODEST_DECAY`."""
    everyone = median_projection(curves, n)
    if v0 > 0:
        like = np.abs(_log(run_variances(curves, n)) - math.log(v0)) <= math.log(NEAR)  # NaN: not like
        if like.sum() >= MIN_NEAR:
            median = median_projection(curves[like], n)
            if abs(math.log(v0) - _log(median.variance(np.array([n], dtype=float)))[0]) <= math.log(AGREEMENT):
                return median
    return power_law(v0 if recent is None else recent, n, max(everyone.slope, MODEST_DECAY), everyone.spread)


def recent_variance(session: Session, measure: Measure | None, level: float) -> float:
    """Geometric mean of the session's per-label variance (:func:`per_label_variance`) at the ends of its last
    :data:`RECENT_BATCHES` batches, each from the labels up to that batch; NaN when none is defined."""
    rounds = session.sample().draws.round
    ends = np.r_[np.flatnonzero(np.diff(rounds)) + 1, rounds.size][-RECENT_BATCHES:]  # draws up to each batch
    v = np.array([per_label_variance(session.estimate(measure, level, prefix=int(end)), session.pool.n_items,
                                     session.design.with_replacement) for end in ends])  # a few batches
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.mean(np.log(v)))) if v.size else math.nan


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


def _pilot_plan(pool: Pool, measure: Measure, design: Design, half_width: float, level: float, budget: int | None,
                seed: int = 0) -> tuple[float, float, float]:
    """(median, low, high) of the labels the pilot runs project, each along its own curve."""
    curves = pilot_curves(pool, measure, design, budget, seed)
    marks = np.array(PILOT_MARKS[:curves.shape[1]], dtype=float)
    slope = decay_slope(curves, _anchor(curves))
    needs = [labels_for(Projection(tuple(marks[known]), tuple(_log(run[known])), slope), half_width, level,
                        pool.n_items, design.with_replacement)
             for run in curves if (known := np.isfinite(run)).any()] or [math.inf]  # no run saw a variance
    return float(np.median(needs)), min(needs), max(needs)


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
        design = make_design(name, pool)
        try:
            total, low, high = _pilot_plan(pool, measure, design, half_width, level, None, seed)
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
    v0 = per_label_variance(session.estimate(measure, level), pool.n_items, design.with_replacement)
    if n < PILOT_LABELS or not np.isfinite(v0):
        total, low, high = _pilot_plan(pool, target, design, half_width, level, session.budget, pilot_seed)
    else:
        curves = pilot_curves(pool, target, design, session.budget, pilot_seed)
        projection = present_projection(session_projection(v0, n, curves, recent_variance(session, measure, level)),
                                        v0, n, half_width, level, pool.n_items, design.with_replacement)
        total, low, high = (labels_for(projection.scaled(f), half_width, level, pool.n_items, design.with_replacement)
                            for f in (0.0, -projection.spread, projection.spread))
    further = lambda x: max(0, _count(x, pool.n_items) - n)
    return Plan(design.name, further(total), further(low), further(high), n)


def save_target(session: Session, half_width: float, level: float) -> None:
    """Keep the half-width a plan aims at in the session file, for the ``serve`` dashboard."""
    if session.store is not None:
        session.store.put_cache(TARGET_KEY, json.dumps({"half_width": half_width, "level": level}).encode())


def target_plan(session: Session) -> dict | None:
    """The plan toward the half-width kept by :func:`save_target`, as ``{"half_width", "level", **plan}``; ``None``
    when no target was kept."""
    stored = None if session.store is None else session.store.cached(TARGET_KEY)
    if stored is None:
        return None
    target = json.loads(stored)
    return {**target, **plan_session(session, target["half_width"], level=target["level"]).to_dict()}
