"""Planning the labels a half-width needs (:mod:`labelwise.planning`)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

import labelwise as lw
from labelwise.measures import make_measure
from labelwise.oracle import TruthOracle
from labelwise.planning import (
    PILOT_MARKS,
    decay_slope,
    labels_for,
    pilot_curves,
    plan_designs,
    session_level,
)

Z = NormalDist().inv_cdf(0.975)


def test_labels_for_is_the_normal_sample_size_with_a_finite_population_factor():
    # a constant per-label variance (slope 0): n = z^2 V / eps^2, and 1 / (eps^2 / (z^2 V) + 1 / N) without
    # replacement; the bisection stops within half a label
    assert labels_for(0.25, 200, 0.0, 0.05, 0.95, 1000, True) == pytest.approx(Z**2 * 0.25 / 0.05**2, abs=0.5)
    assert labels_for(0.25, 200, 0.0, 0.05, 0.95, 1000, False) == pytest.approx(
        1 / (0.05**2 / (Z**2 * 0.25) + 1e-3), abs=0.5)
    # a variance falling as n^-1/2 from V at 100 labels: z^2 V (n / 100)^-1/2 / n = eps^2
    n = (Z**2 * 0.25 * 10 / 0.05**2) ** (2 / 3)
    assert labels_for(0.25, 100, -0.5, 0.05, 0.95, 10**6, True) == pytest.approx(n, abs=0.5)
    assert labels_for(np.inf, 200, 0.0, 0.05, 0.95, 1000, True) == math.inf
    assert labels_for(1e6, 200, 0.0, 0.05, 0.95, 1000, True) == 1000  # never more than the pool
    with pytest.raises(ValueError, match="half_width"):
        labels_for(0.25, 200, 0.0, 0.0, 0.95, 1000, True)


def test_decay_slope_of_curves_falling_as_a_power():
    marks = np.array(PILOT_MARKS, dtype=float)
    curves = np.stack([2.0 * marks**-0.4, 3.0 * marks**-0.4])
    assert decay_slope(curves) == pytest.approx(-0.4)
    assert decay_slope(np.full((2, len(marks)), np.nan)) == 0.0
    assert decay_slope(np.stack([marks**-3.0])) == -0.5  # clipped
    assert decay_slope(np.stack([marks**0.3])) == 0.0


def test_the_pilots_variance_raises_the_level_only_when_it_agrees_with_the_sessions():
    curves = np.tile([4.0, 2.0, 1.0, 0.5], (3, 1))  # median 2.0 at 200 labels, falling as n^-1
    curves[0, 1] = np.nan  # a pilot run without a defined variance is left out
    assert session_level(1.5, 200, curves, 0.0) == 2.0  # within a factor 2: the larger
    assert session_level(2.5, 200, curves, 0.0) == 2.5
    assert session_level(0.9, 200, curves, 0.0) == 0.9  # more than a factor 2 apart: the session's alone
    assert session_level(0.6, 800, curves, -0.5) == 1.0  # the pilots' 2.0 at 200, times (800 / 200)^-1/2
    assert session_level(0.6, 200, np.full((3, 4), np.nan), 0.0) == 0.6


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.make_pool(5000, prevalence=0.2, separation=2.5, seed=9)


def test_session_plan_from_its_own_variance_and_the_designs_slope(pool):
    measure = make_measure("f1", pool)
    session = lw.Session(pool, measure, "importance", seed=0, budget=400)
    est = session.run(TruthOracle(pool), 400)
    plan = session.labels_needed(0.02)
    curves = pilot_curves(pool, measure, session.design, 400)
    slope = decay_slope(curves)
    lo, hi = est.interval()
    V = est.n_labels * ((hi[0] - lo[0]) / (2 * Z)) ** 2  # the interval's half-width is z sqrt(V / n)
    V = session_level(V, 400, curves, slope)
    spread = 2 * math.sqrt(2 / 400)  # the range is the variance's, V (1 +- 2 sqrt(2 / n))
    need = [math.ceil(labels_for(V * f, 400, slope, 0.02, 0.95, pool.n_items, True)) - 400
            for f in (1, 1 - spread, 1 + spread)]
    assert [plan.labels_needed, plan.low, plan.high] == need and plan.labels_so_far == 400
    assert plan.low < plan.labels_needed < plan.high
    assert session.labels_needed(1.0).labels_needed == 0  # already narrower


def test_plans_before_any_label_are_reproducible_and_ordered(pool):
    measure = make_measure("f1", pool)
    plans = plan_designs(pool, measure, 0.05, designs=["passive", "importance"], seed=3)
    assert [p.design for p in plans] == ["passive", "importance"]
    assert plans == plan_designs(pool, measure, 0.05, designs=["passive", "importance"], seed=3)
    assert all(p.low <= p.labels_needed <= p.high and p.labels_so_far == 0 for p in plans)
    # importance sampling needs fewer labels than uniform sampling on an imbalanced pool
    assert plans[1].labels_needed < plans[0].labels_needed
    assert set(plans[0].to_dict()) == {"design", "labels_needed", "low", "high", "labels_so_far"}


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="known miss of issue 17's planning target: importance's interval now adds the "
                   "oracle model's part, and its variance at 200 labels is too noisy (0.28-0.62 per label across "
                   "seeds, about 0.25 by 1000 labels); 5 of 8 runs land within +-30%. Passes again when it is fixed.")
def test_plan_at_200_labels_predicts_the_realized_labels(pool):
    """Realized labels to reach the half-width within +-30% of the plan in most seeded runs."""
    measure = make_measure("f1", pool)
    hits = []
    for seed in range(8):
        session = lw.Session(pool, measure, "importance", seed=seed, budget=3000)
        session.run(TruthOracle(pool), 200)
        planned = 200 + session.labels_needed(0.03).labels_needed
        while session.n_labels < 3000:
            lo, hi = session.estimate().interval()
            if (hi[0] - lo[0]) / 2 <= 0.03:
                break
            session.run(TruthOracle(pool), session.n_labels + 50)
        hits.append(abs(session.n_labels - planned) <= 0.3 * planned)
    assert np.mean(hits) >= 0.75
