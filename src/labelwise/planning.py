"""How many labels reach a target half-width: the plan before and while labeling.

The delta-method variance of every design's estimator falls as ``V / n``
with ``n`` labels (Marchant & Rubinstein, "Needle in a Haystack", KDD 2021,
sec. 3.3.2; Yilmaz et al., "Sample Efficient Model Evaluation", 2021, eq. 25
for Poisson designs, with the finite-population factor ``1 - n / N``).  A
half-width ``eps`` at level ``1 - alpha`` then needs

    n = z^2 V / eps^2          (with replacement),
    n = 1 / (eps^2 / (z^2 V) + 1 / N)   (without replacement),

the smallest ``n`` found by bisection on a variance bound in Chaganty et
al., "Importance sampling for unbiased on-demand evaluation of knowledge
base population", EMNLP 2017, sec. 3.3, solved here in closed form.  ``V``
(per label) comes from the session's own estimate, ``V = n std^2``; before
any label it comes from pilot runs of the design against labels drawn from
the pool's probabilities (what the design itself believes), whose spread
gives the range.  With labels the range is that of the variance estimate,
``V (1 +- 2 sqrt(2 / n))``.  The larger projection over the measure's
components is the plan.
"""

from __future__ import annotations

import json
import math
import weakref
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from .designs import DESIGNS, Design, make_design
from .estimators import Estimate
from .measures import Measure
from .oracle.prior import score_prior
from .pool import Pool

if TYPE_CHECKING:
    from .session import Session

__all__ = ["PILOT_LABELS", "Plan", "plan_designs", "plan_labels", "plan_session", "save_target", "target_plan"]

#: Labels of each pilot run before a session has any (and the fewest labels a session's own plan uses).
PILOT_LABELS = 200
#: Pilot runs per design: their spread is the plan's range.
PILOT_RUNS = 3
#: Session-file cache key of the half-width a plan aims at (``labelwise plan SESSION`` stores it).
TARGET_KEY = "plan_target"

# pilot variances of a session's design, computed once per session (they depend on the pool and design only)
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


def per_label_variance(est: Estimate) -> np.ndarray:
    """``V = n std^2`` of every defined component; NaN where undefined or zero (no information yet, e.g. no
    positive seen)."""
    return np.where(est.defined & (est.std > 0), est.n_labels * est.std**2, np.nan)


def plan_labels(variance: float, half_width: float, level: float, n_items: int, with_replacement: bool) -> float:
    """Labels ``n`` whose normal half-width ``z sqrt(V / n)`` (finite-population corrected) is ``half_width``."""
    if not 0 < half_width:
        raise ValueError(f"half_width: must be positive, got {half_width}")
    if not np.isfinite(variance):
        return math.inf
    z = NormalDist().inv_cdf(0.5 + level / 2)
    need = half_width**2 / max(z**2 * variance, 1e-300) + (0.0 if with_replacement else 1.0 / n_items)
    return min(1.0 / need, float(n_items))


def _needed(variances: np.ndarray, half_width: float, level: float, pool: Pool, design: Design) -> float:
    """The larger projection over the components (infinite when no component is defined)."""
    finite = variances[np.isfinite(variances)]
    if finite.size == 0:
        return math.inf
    return plan_labels(float(finite.max()), half_width, level, pool.n_items, design.with_replacement)


def _count(n: float, n_items: int) -> int:
    return n_items if not np.isfinite(n) else math.ceil(n)


def pilot_variances(pool: Pool, measure: Measure, design: Design, seed: int = 0,
                    labels: int = PILOT_LABELS, runs: int = PILOT_RUNS) -> np.ndarray:
    """Per-label variances ``(runs, m)`` of pilot runs against labels drawn from the pool's probabilities."""
    from .session import Session  # the session imports this module's users

    prior = score_prior(pool)
    rng = np.random.default_rng(seed)
    labels = min(labels, pool.n_items)
    out = []
    for _ in range(runs):
        # pseudo ground truth: one label per item from p(y | x) (inverse-CDF draw, vectorized over items)
        truth = (rng.random(pool.n_items)[:, None] > np.cumsum(prior, axis=1)[:, :-1]).sum(axis=1)
        session = Session(pool, measure, design, budget=labels, seed=rng)
        est = session.run(lambda ids, t=truth: t[pool.positions(ids)], labels)
        out.append(per_label_variance(est))
    return np.array(out)


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
            variances = pilot_variances(pool, measure, design, seed)
        except ValueError:  # a design that does not run on this pool (e.g. oasis on a multi-class pool)
            if designs:
                raise
            continue
        needs = [_needed(v, half_width, level, pool, design) for v in variances]
        plans.append(Plan(name, _count(float(np.median(needs)), pool.n_items), _count(min(needs), pool.n_items),
                          _count(max(needs), pool.n_items)))
    return plans


def plan_session(session: Session, half_width: float, measure: Measure | None = None,
                 level: float = 0.95) -> Plan:
    """Further labels the session's design needs to reach ``half_width`` (see the module docstring)."""
    est = session.estimate(measure, level)
    n, pool, design = session.n_labels, session.pool, session.design
    variances = per_label_variance(est)
    if n < PILOT_LABELS or not np.isfinite(variances).any():
        target = measure or session.measure
        pilots = _pilots.setdefault(session, {})
        if target not in pilots:
            pilots[target] = pilot_variances(pool, target, design)
        pilots = pilots[target]
        needs = [_needed(v, half_width, level, pool, design) for v in pilots]
        total, low, high = float(np.median(needs)), min(needs), max(needs)
    else:
        spread = 2 * math.sqrt(2 / n)
        total = _needed(variances, half_width, level, pool, design)
        low = _needed(variances * max(1 - spread, 0.0), half_width, level, pool, design)
        high = _needed(variances * (1 + spread), half_width, level, pool, design)
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
