"""Pilot runs for the plan: a design's per-label variance curve against labels drawn from the probabilities.

The delta-method variance of a design's estimator at ``n`` labels is ``V(n) / n`` (Marchant & Rubinstein,
"Needle in a Haystack", KDD 2021, sec. 3.3.2), times ``1 - n / N`` for designs without replacement (Yilmaz et
al., "Sample Efficient Model Evaluation", 2021, eq. 25).  A pilot run is a session of the design against a
pseudo ground truth drawn from the pool's probabilities (what the design itself believes), or from those
probabilities recalibrated to the session's labels (:func:`recalibration`) where the labels contradict them;
its per-label variance ``V`` at :data:`PILOT_MARKS` labels is its curve.  :mod:`labelwise.planning` projects
the plan from these curves and the session's own variance.
"""

from __future__ import annotations

import hashlib
import json
import math
import weakref
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from .designs import Design
from .estimators import Estimate
from .measures import Measure
from .oracle.calibration import (
    PlattPosterior,
    label_surprise,
    logits_of,
    platt_posterior,
)
from .oracle.prior import score_prior
from .pool import Pool

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "PILOT_LABELS",
    "PILOT_MARKS",
    "PILOT_RUNS",
    "RECENT_BATCHES",
    "calibration_surprise",
    "decay_slope",
    "finite_population_factor",
    "labeled_once",
    "per_label_variance",
    "pilot_curves",
    "pilot_marks",
    "pilot_prior",
    "recalibration",
    "recalibration_key",
    "recent_variance",
    "remember_pilot_curves",
    "rotated_labels",
    "rotation",
    "run_variances",
]

#: Label counts of the pilot runs' variance curve (up to counts the plans reach: an adaptive design's decay
#: flattens after its first few hundred labels, which a slope fitted up to 800 labels would not see).
PILOT_MARKS = (100, 200, 400, 800, 1600)
#: Labels from which the session's own variance takes part in the plan (before: each pilot run's own curve).
PILOT_LABELS = 200
#: Pilot runs per design (the plan's slope and level come from them: with few runs the plan depends on their seed).
PILOT_RUNS = 8
#: Batches of the session whose variances make its own level when the pilot runs disagree with it.
RECENT_BATCHES = 3

# pilot curves per pool, then per (measure, design spec): they depend on nothing else
_pilots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def finite_population_factor(n: float | np.ndarray, n_items: int, with_replacement: bool) -> float | np.ndarray:
    """``1 - n / N`` for a design drawing without replacement (Yilmaz et al. 2021, eq. 25), 1 with replacement."""
    return 1.0 if with_replacement else np.maximum(1.0 - n / n_items, 0.0)


def per_label_variance(est: Estimate, n_items: int, with_replacement: bool) -> float:
    """The largest ``V = n (h / z)^2 / f`` over the defined components, ``h`` the half-width of the estimate's
    interval (the interval the plan is for) and ``f`` its :func:`finite_population_factor` (which
    :func:`~labelwise.planning.labels_for` applies at the planned ``n``); NaN when no component is defined with
    an interval of positive width (no information yet, e.g. no positive seen, or a normal interval around a
    standard error of 0, or an estimate on a bound of the measure, e.g. an F1 of 1 from the labels so far, whose
    one-sided interval comes from its effective count)."""
    lo, hi = est.interval()
    z = NormalDist().inv_cdf(0.5 + est.level / 2)
    fpc = finite_population_factor(est.n_labels, n_items, with_replacement)
    value = np.asarray(est.value, dtype=float)
    # an estimate on a bound of its measure (an F1 of 1: no error labeled yet) has a one-sided interval from its
    # effective count, which says nothing of the variance once an error is labeled: no information yet
    inside = (value > est.lower_bound) & (value < est.upper_bound)
    v = np.where(est.defined & inside & (hi > lo), est.n_labels * ((hi - lo) / (2 * z)) ** 2, np.nan)
    return float(np.nanmax(v)) / fpc if np.isfinite(v).any() and fpc > 0 else math.nan  # a census: no V


def rotation(run: int) -> float:
    """The phase of pilot run ``run``: the base-2 radical inverse of ``run`` (van der Corput: 0, 1/2, 1/4, 3/4,
    1/8, ...), so that the first ``2^k`` runs' phases are the ``2^k`` evenly spaced points of ``[0, 1)``."""
    phase, scale = 0.0, 0.5
    while run:
        phase, run, scale = phase + scale * (run & 1), run >> 1, scale / 2
    return phase


def rotated_labels(cdf: np.ndarray, offset: np.ndarray, run: int) -> np.ndarray:
    """Pseudo ground truth of pilot run ``run``: one label per item from ``p(y | x)`` (``cdf`` its cumulative sum
    over labels, one row per item) by the inverse-CDF draw of ``u = (offset + rotation(run)) mod 1``.

    With one uniform ``offset`` per item shared by the runs (a Cranley-Patterson rotation; Cranley &
    Patterson, "Randomization of number theoretic methods for multiple integration", SIAM J. Numer. Anal.
    13, 1976), each run is an exact draw, independent over items, while across the first ``2^k`` runs an item
    takes a label in ``2^k p`` of them up to rounding (:func:`rotation`): the pilot runs cover the
    probabilities evenly (on a rare pool, its few likely positives are spread over the runs rather than left
    to chance), and doubling the runs keeps the runs already made.
    """
    u = (offset + rotation(run)) % 1.0
    return (u[:, None] > cdf[:, :-1]).sum(axis=1)


def pilot_marks(n_items: int) -> list[int]:
    """The :data:`PILOT_MARKS` a pool of ``n_items`` reaches; a pool below the first mark: ``[n_items]``, a census."""
    return [m for m in PILOT_MARKS if m <= n_items] or [n_items]


def _cache_key(measure: Measure, design: Design, budget: int | None, seed: int,
               recalibrated: PlattPosterior | None) -> tuple:
    return measure, json.dumps(design.spec(), sort_keys=True), budget, seed, recalibration_key(recalibrated)


def remember_pilot_curves(pool: Pool, measure: Measure, design: Design, budget: int | None, seed: int,
                          curves: np.ndarray, recalibrated: PlattPosterior | None = None) -> None:
    """Hand :func:`pilot_curves` runs made before (e.g. read from a session file), unless it holds as many."""
    cache = _pilots.setdefault(pool, {})
    key = _cache_key(measure, design, budget, seed, recalibrated)
    if len(cache.get(key, ())) < len(curves):
        cache[key] = curves


def labeled_once(session: Session) -> tuple[np.ndarray, np.ndarray]:
    """Pool positions and labels of the session's labeled items, each once (excluded draws left out)."""
    sample = session.sample()
    keep = np.ones(len(sample.labels), dtype=bool) if sample.excluded is None else ~sample.excluded
    items, first = np.unique(sample.draws.items[keep], return_index=True)
    return items, sample.labels[keep][first]


def recalibration(session: Session) -> PlattPosterior | None:
    """The pool's probabilities recalibrated to the session's labels: the Platt map ``sigmoid(a logit(p) + b)``
    averaged over the posterior of ``(a, b)`` (:func:`~labelwise.oracle.calibration.platt_posterior`: where a
    few hundred labels say little about the scores' tail, the posterior's spread in the slope puts the positives
    there that the most likely map leaves out); ``None`` for a pool of more than two classes.

    The fit is unweighted: a design chooses items by their scores and the labels before, never by their own
    label, so the labels' likelihood given the scores is that of every item (selection on the covariates leaves
    a conditional model's likelihood unbiased), while design weights would only add their variance.
    """
    if session.pool.n_classes != 2:
        return None
    items, labels = labeled_once(session)
    return platt_posterior(logits_of(score_prior(session.pool, items=items)[:, 1]), labels)


def recalibration_key(recalibrated: PlattPosterior | None) -> str | None:
    """A digest of a recalibration's grid and weights (the same labels give the same one); ``None`` for none."""
    if recalibrated is None:
        return None
    grid = np.stack([recalibrated.a, recalibrated.b, recalibrated.weight]).astype(float)
    return hashlib.sha256(np.ascontiguousarray(grid).tobytes()).hexdigest()


def pilot_prior(pool: Pool, recalibrated: PlattPosterior | None = None) -> np.ndarray:
    """The label distribution ``(N, C)`` the pilot runs draw their labels from: the pool's probabilities
    (:func:`~labelwise.oracle.prior.score_prior`), or ``recalibrated`` (:func:`recalibration`, two classes)."""
    prior = score_prior(pool)
    if recalibrated is None:
        return prior
    positive = recalibrated(logits_of(prior[:, 1]))
    return np.stack([1.0 - positive, positive], axis=1)


def pilot_curves(pool: Pool, measure: Measure, design: Design, budget: int | None = None, seed: int = 0,
                 runs: int = PILOT_RUNS, recalibrated: PlattPosterior | None = None) -> np.ndarray:
    """Per-label variances ``(runs, marks)`` of pilot runs against labels drawn from the pool's probabilities,
    or from their recalibration ``recalibrated`` (:func:`pilot_prior`).

    Run ``r`` draws its labels with :func:`rotated_labels` and its design's draws from the generator seeded
    ``(seed, r)``: asking for more runs adds runs and keeps those made.  Cached per pool, measure, design,
    seed and recalibration.
    """
    from .session import Session  # the session imports this module's users

    key = _cache_key(measure, design, budget, seed, recalibrated)
    cache = _pilots.setdefault(pool, {})
    made = len(cache[key]) if key in cache else 0
    if made >= runs:
        return cache[key][:runs]
    marks = pilot_marks(pool.n_items)
    cdf = np.cumsum(pilot_prior(pool, recalibrated), axis=1)
    offset = np.random.default_rng(seed).random(pool.n_items)
    variance = lambda est: per_label_variance(est, pool.n_items, design.with_replacement)
    curves = np.full((runs, len(marks)), np.nan)
    if made:
        curves[:made] = cache[key]
    # one set-up for every run, each run a copy of the started sampler (as simulate runs them)
    template = design.start(pool, measure, rng=np.random.default_rng(0), budget=budget or marks[-1])
    for r in range(made, runs):
        truth = rotated_labels(cdf, offset, r)
        rng = np.random.default_rng([seed, r])
        session = Session(pool, measure, design, budget=budget or marks[-1], seed=rng, sampler=template.copy(rng))
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


def anchor(curves: np.ndarray, n: int = PILOT_LABELS) -> int:
    """Column of the pilot curves at the last mark at or below ``n`` labels (the first when none is)."""
    return max(int(np.searchsorted(PILOT_MARKS[:curves.shape[1]], n, side="right")) - 1, 0)


def log_variance(v: np.ndarray | float) -> np.ndarray:
    """``log v``, a variance of 0 (a census of the uncertain items) floored at the smallest float's log."""
    return np.log(np.maximum(v, np.finfo(float).tiny))


def run_variances(curves: np.ndarray, n: int) -> np.ndarray:
    """Each pilot run's variance at ``n`` labels: its curve interpolated in ``log n`` between the marks where it
    has a value (its first value before, its last beyond); NaN for a run with none."""
    marks = np.log(np.array(PILOT_MARKS[:curves.shape[1]], dtype=float))
    logs = log_variance(curves)
    known = np.isfinite(curves)
    return np.array([np.exp(np.interp(math.log(n), marks[k], log_v[k])) if k.any() else math.nan
                     for log_v, k in zip(logs, known)])  # a few pilot runs, not items


def recent_variance(session: Session, measure: Measure | None, level: float) -> float:
    """Geometric mean of the session's per-label variance (:func:`per_label_variance`) at the ends of its last
    :data:`RECENT_BATCHES` batches, each from the labels up to that batch; NaN when none is defined."""
    rounds = session.sample().draws.round
    ends = np.r_[np.flatnonzero(np.diff(rounds)) + 1, rounds.size][-RECENT_BATCHES:]  # draws up to each batch
    v = np.array([per_label_variance(session.estimate(measure, level, prefix=int(end)), session.pool.n_items,
                                     session.design.with_replacement) for end in ends])  # a few batches
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.mean(np.log(v)))) if v.size else math.nan


def calibration_surprise(session: Session, effect: float = 0.0) -> float:
    """How far the session's labels contradict the pool's probabilities, which the pilot runs draw from:
    :func:`~labelwise.oracle.calibration.label_surprise` of each labeled item once (with ``effect = d`` a test for
    an excess surprise of more than ``d`` standard deviations per label: above a cut-off only where the
    miscalibration is large, not merely detectable, which any miscalibration becomes as the labels grow)."""
    items, labels = labeled_once(session)
    return label_surprise(score_prior(session.pool, items=items), labels, effect)
