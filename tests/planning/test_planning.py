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
    MODEST_DECAY,
    PILOT_MARKS,
    PILOT_RUNS,
    decay_slope,
    labels_for,
    per_label_variance,
    pilot_curves,
    pilot_levels,
    plan_designs,
    session_projection,
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


def test_the_finite_population_factor_is_applied_once():
    # without replacement the interval already has the factor 1 - n / N: V is taken without it, so a static
    # design's plan for the half-width it has now is the labels it has now (not fewer)
    pool = lw.make_pool(1000, prevalence=0.3, separation=2.0, seed=4)
    session = lw.Session(pool, make_measure("f1", pool), "stratified", seed=1, budget=400)
    est = session.run(TruthOracle(pool), 400)
    lo, hi = est.interval()
    h = float(np.max(hi - lo) / 2)
    V = per_label_variance(est, pool.n_items, with_replacement=False)
    assert V == pytest.approx(400 * (h / Z) ** 2 / (1 - 400 / 1000))
    assert labels_for(V, 400, 0.0, h, 0.95, pool.n_items, False) == pytest.approx(400, abs=0.5)
    assert per_label_variance(est, pool.n_items, with_replacement=True) == pytest.approx(400 * (h / Z) ** 2)
    assert math.isnan(per_label_variance(est, 400, with_replacement=False))  # a census: no per-label variance


def test_decay_slope_of_curves_falling_as_a_power():
    marks = np.array(PILOT_MARKS, dtype=float)
    curves = np.stack([2.0 * marks**-0.4, 3.0 * marks**-0.4])
    assert decay_slope(curves) == pytest.approx(-0.4)
    assert decay_slope(np.full((2, len(marks)), np.nan)) == 0.0
    assert decay_slope(np.stack([marks**-3.0])) == pytest.approx(-3.0)  # a steep decay is kept
    assert decay_slope(np.stack([marks**0.3])) == 0.0  # a rising variance is taken constant
    # the local slope: from the given column on (the last two marks when fewer are left)
    bent = np.stack([np.where(marks <= 200, 1.0, (marks / 200) ** -1.0)])  # flat to 200 labels, then 1 / n
    assert decay_slope(bent, 1) == pytest.approx(-1.0) and decay_slope(bent, 3) == pytest.approx(-1.0)
    assert decay_slope(bent) > -1.0  # the flat start pulls the pooled slope up
    with_zero = np.stack([marks**-1.0, np.r_[marks[:-1] ** -1.0, 0.0]])  # a variance of 0 is left out
    assert decay_slope(with_zero) == pytest.approx(-1.0)


def test_the_session_counts_as_one_more_pilot_run_only_when_they_agree():
    marks = np.array(PILOT_MARKS, dtype=float)
    curves = np.stack([v * (marks / 200) ** -0.5 for v in (1.0, 2.0, 4.0)])  # median 2.0 at 200, slope -1/2
    curves[0, 0] = np.nan  # a missing value elsewhere changes nothing
    spread = math.log(2)  # the standard deviation of log 1, log 2, log 4
    # within a factor 4 of the pilots' median: the median over the session and the three runs
    level, slope, s = session_projection(3.0, 200, curves)
    assert level == pytest.approx(math.sqrt(2.0 * 3.0))  # the middle two of 1, 2, 3, 4 on the log scale
    assert slope == pytest.approx(-0.5) and s == pytest.approx(spread)
    # more than a factor 4 apart: the session's own level, the slope no steeper than MODEST_DECAY
    steep = np.stack([v * (marks / 200) ** -2.0 for v in (1.0, 2.0, 4.0)])
    assert session_projection(9.0, 200, steep) == (9.0, MODEST_DECAY, pytest.approx(spread))
    assert session_projection(1.9, 200, steep).slope == pytest.approx(-2.0)
    # at 800 labels: the pilots' values at 800
    level, _, s = session_projection(1.0, 800, curves)
    assert level == pytest.approx(1.0) and s == pytest.approx(spread)  # the median of 1 and of 1/2, 1, 2
    # no pilot value: the session's level, and the spread of a variance estimated from n normal draws
    assert session_projection(0.6, 200, np.full((3, 4), np.nan)) == (0.6, 0.0, math.sqrt(2 / 200))


def test_the_pilots_level_is_their_last_mark_brought_back_along_the_slope():
    # each run falls as n^-1/2 but its early values are off by a factor (the noise of a variance estimated
    # from few labels): the level at 200 labels is read from the last mark, 1600 labels, so the early noise
    # leaves the plan's level and spread alone
    marks = np.array(PILOT_MARKS, dtype=float)
    assert marks[-1] == 1600
    exact = np.stack([v * (marks / 200) ** -0.5 for v in (1.0, 2.0, 4.0)])
    noisy = exact.copy()
    noisy[:, 1] *= [3.0, 1 / 3, 1.0]  # at 200 labels: 3, 2/3, 4 (their median 3); the fitted slope stays -1/2
    assert np.exp(pilot_levels(noisy, 200, -0.5)) == pytest.approx([1.0, 2.0, 4.0])
    assert np.exp(pilot_levels(exact, 800, -0.5)) == pytest.approx([0.5, 1.0, 2.0])
    level, slope, spread = session_projection(2.0, 200, noisy)  # the median of 2 (the session's), 1, 2, 4
    assert level == pytest.approx(2.0) and slope == pytest.approx(-0.5) and spread == pytest.approx(math.log(2))
    # runs without a positive variance at the last mark are left out
    exact[0, -1], exact[1, -1] = np.nan, 0.0
    assert np.exp(pilot_levels(exact, 200, -0.5)) == pytest.approx([4.0])


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.make_pool(5000, prevalence=0.2, separation=2.5, seed=9)


def test_session_plan_from_its_own_variance_and_the_designs_slope(pool):
    measure = make_measure("f1", pool)
    session = lw.Session(pool, measure, "importance", seed=0, budget=400)
    est = session.run(TruthOracle(pool), 400)
    plan = session.labels_needed(0.02)
    curves = pilot_curves(pool, measure, session.design, 400)
    lo, hi = est.interval()
    V = est.n_labels * ((hi[0] - lo[0]) / (2 * Z)) ** 2  # the interval's half-width is z sqrt(V / n)
    V, slope, spread = session_projection(V, 400, curves)
    # the range: one run's log V one standard deviation either side
    need = [math.ceil(labels_for(V * math.exp(f), 400, slope, 0.02, 0.95, pool.n_items, True)) - 400
            for f in (0, -spread, spread)]
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


def test_a_pool_below_the_first_pilot_mark_is_planned_from_a_census():
    tiny = lw.make_pool(60, prevalence=0.3, separation=2.5, seed=1)
    measure = make_measure("f1", tiny)
    assert pilot_curves(tiny, measure, lw.make_design("passive", tiny)).shape == (PILOT_RUNS, 1)
    for plan in plan_designs(tiny, measure, 0.1, designs=["importance", "passive"]):
        assert 0 <= plan.low <= plan.labels_needed <= plan.high <= tiny.n_items


@pytest.mark.slow
def test_plan_at_200_labels_predicts_the_realized_labels(pool):
    """Realized labels to reach the half-width within +-30% of the plan in most seeded runs, and in the
    plan's range (about two runs in three) in most of them."""
    measure = make_measure("f1", pool)
    hits, in_range = [], []
    for seed in range(8):
        session = lw.Session(pool, measure, "importance", seed=seed, budget=3000)
        session.run(TruthOracle(pool), 200)
        plan = session.labels_needed(0.03)
        while session.n_labels < 3000:
            lo, hi = session.estimate().interval()
            if (hi[0] - lo[0]) / 2 <= 0.03:
                break
            session.run(TruthOracle(pool), session.n_labels + 50)
        planned, realized = 200 + plan.labels_needed, session.n_labels
        hits.append(abs(realized - planned) <= 0.3 * planned)
        in_range.append(200 + plan.low <= realized < 200 + plan.high + 50)  # realized to a batch of 50
    assert np.mean(hits) >= 0.75 and np.mean(in_range) >= 0.5
