"""Planning the labels a half-width needs (:mod:`labelwise.planning`)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

import labelwise as lw
from labelwise import planning_pilots
from labelwise.estimators import Estimate
from labelwise.measures import make_measure
from labelwise.oracle import TruthOracle
from labelwise.planning import (
    AGREEMENT,
    CENTRAL_SE,
    MAX_PILOT_RUNS,
    MIN_NEAR,
    MISCALIBRATED,
    MISCALIBRATION_EFFECT,
    MODEST_DECAY,
    NEAR,
    TRIM,
    Projection,
    central_projection,
    labels_for,
    like_session,
    nested_projection,
    pilot_projection,
    plan_designs,
    power_law,
    present_projection,
    trimmed_mean,
)
from labelwise.planning_pilots import (
    PILOT_MARKS,
    PILOT_RUNS,
    RECENT_BATCHES,
    calibration_surprise,
    decay_slope,
    per_label_variance,
    pilot_curves,
    recent_variance,
    rotated_labels,
    rotation,
    run_variances,
)

Z = NormalDist().inv_cdf(0.975)


def test_labels_for_is_the_normal_sample_size_with_a_finite_population_factor():
    # a constant per-label variance (slope 0): n = z^2 V / eps^2, and 1 / (eps^2 / (z^2 V) + 1 / N) without
    # replacement; the bisection stops within half a label
    assert labels_for(power_law(0.25, 200, 0.0), 0.05, 0.95, 1000, True) == pytest.approx(Z**2 * 0.25 / 0.05**2,
                                                                                          abs=0.5)
    assert labels_for(power_law(0.25, 200, 0.0), 0.05, 0.95, 1000, False) == pytest.approx(
        1 / (0.05**2 / (Z**2 * 0.25) + 1e-3), abs=0.5)
    # a variance falling as n^-1/2 from V at 100 labels: z^2 V (n / 100)^-1/2 / n = eps^2
    n = (Z**2 * 0.25 * 10 / 0.05**2) ** (2 / 3)
    assert labels_for(power_law(0.25, 100, -0.5), 0.05, 0.95, 10**6, True) == pytest.approx(n, abs=0.5)
    assert labels_for(power_law(np.inf, 200, 0.0), 0.05, 0.95, 1000, True) == math.inf
    assert labels_for(power_law(np.nan, 200, 0.0), 0.05, 0.95, 1000, True) == math.inf
    assert labels_for(power_law(1e6, 200, 0.0), 0.05, 0.95, 1000, True) == 1000  # never more than the pool
    with pytest.raises(ValueError, match="half_width"):
        labels_for(power_law(0.25, 200, 0.0), 0.0, 0.95, 1000, True)


def test_labels_for_follows_a_curve_to_its_first_crossing():
    # V = 1 to 400 labels, then a cliff to 1e-4 at 800 (an adaptive design that has labeled every uncertain
    # item), then n^-1: eps = 0.01 needs z^2 V / n <= 1e-4, first met on the cliff, where log V falls
    # linearly in log n: log V(n) = -log(n / 400) / log 2 * log 1e4
    cliff = Projection((400.0, 800.0), (0.0, math.log(1e-4)), -1.0)
    assert cliff.variance(np.array([100.0, 400.0, 800.0, 1600.0])) == pytest.approx([1.0, 1.0, 1e-4, 0.5e-4])
    x = np.linspace(math.log(400), math.log(800), 200001)
    half = Z * np.sqrt(np.exp(-(x - math.log(400)) / math.log(2) * math.log(1e4)) / np.exp(x))
    expected = math.exp(x[np.argmax(half <= 0.01)])
    assert labels_for(cliff, 0.01, 0.95, 10**5, True) == pytest.approx(expected, abs=0.5)
    # a curve that dips below eps and rises again: the first crossing, not the last
    dip = Projection((100.0, 200.0, 400.0), (math.log(1.0), math.log(0.01), math.log(100.0)), 0.0)
    assert labels_for(dip, 0.05, 0.95, 10**5, True) < 200
    assert cliff.scaled(math.log(2)).variance(np.array([400.0])) == pytest.approx([2.0])


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
    assert labels_for(power_law(V, 400, 0.0), h, 0.95, pool.n_items, False) == pytest.approx(400, abs=0.5)
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


def test_the_trimmed_mean_drops_a_quarter_at_each_end():
    assert TRIM == 0.25
    assert trimmed_mean(np.array([100.0, 1.0, 3.0, 2.0])) == 2.5  # 1 and 100 dropped
    assert trimmed_mean(np.array([1.0, 2.0, 9.0])) == 4.0  # floor(3 / 4) = 0 dropped
    assert trimmed_mean(np.arange(8.0) ** 2) == pytest.approx(np.mean([4.0, 9.0, 16.0, 25.0]))


def test_the_central_curve_is_the_trimmed_mean_of_log_v_with_the_runs_slope_and_spread():
    marks = np.array(PILOT_MARKS, dtype=float)
    curves = np.stack([v * (marks / 200) ** -0.5 for v in (1.0, 2.0, 4.0, 64.0)])
    central = central_projection(curves, 200)
    # per mark the mean of the middle two logs (2 and 4): 2 sqrt 2 at 200 labels, then n^-1/2
    assert central.marks == tuple(marks) and central.slope == pytest.approx(-0.5)
    assert central.variance(np.array([200.0, 800.0, 3200.0])) == pytest.approx(
        2 * math.sqrt(2) * np.array([1, 0.5, 0.25]))
    assert central.spread == pytest.approx(np.std(np.log([1.0, 2.0, 4.0, 64.0]), ddof=1))
    # a missing value leaves its run out at that mark only; zero variances (a census) stay zero
    holed = curves.copy()
    holed[3, 0] = np.nan  # at 100 labels: the middle one of 1, 2, 4 (floor(3 / 4) = 0 trimmed: their mean)
    assert central_projection(holed, 200).log_v[0] == pytest.approx(np.mean(np.log([1.0, 2.0, 4.0]) + 0.5 * math.log(2)))
    zero = curves.copy()
    zero[:, 3:] = 0.0
    assert central_projection(zero, 200).variance(np.array([800.0, 5000.0])) == pytest.approx([0.0, 0.0])
    # the spread is at least that of a variance estimated from n normal draws
    assert central_projection(np.ones((3, len(marks))), 200).spread == pytest.approx(math.sqrt(2 / 200))


def test_pilot_runs_like_the_session_lie_within_a_factor_near_of_its_variance():
    assert NEAR == 8.0
    curves = np.outer([1.0, 7.9, 8.1, 0.13, np.nan], np.ones(len(PILOT_MARKS)))
    assert like_session(1.0, 200, curves).tolist() == [True, True, False, True, False]
    assert not like_session(0.0, 200, curves).any()


class CountingCurves:
    """``curves_of(runs)`` for :func:`pilot_projection`: the first ``runs`` rows of ``curves``, recording each ask."""

    def __init__(self, curves: np.ndarray):
        self.curves, self.asked = curves, []

    def __call__(self, runs: int) -> np.ndarray:
        self.asked.append(runs)
        return self.curves[:runs]


def test_the_pilot_runs_double_while_the_central_curve_is_uncertain():
    assert (PILOT_RUNS, MAX_PILOT_RUNS, CENTRAL_SE, MIN_NEAR, AGREEMENT) == (8, 32, 0.1, 2, 4.0)
    flat = np.ones(len(PILOT_MARKS))
    # runs that agree (spread sqrt(2 / 200) = 0.1 over root 8 < 0.1): the first 8 do
    agree = CountingCurves(np.outer(np.exp(0.01 * np.arange(32)), flat))
    assert pilot_projection(1.0, 200, agree) == central_projection(agree.curves[:8], 200) and agree.asked == [8]
    # runs spread over a factor 4 (log V 0 or log 4 in turn: spread about 0.74): doubled to 32, where the standard
    # error 0.74 / sqrt(32) = 0.13 still exceeds 0.1, then the central curve of all 32
    spread = CountingCurves(np.outer(np.tile([1.0, 4.0], 16), flat))
    central = pilot_projection(2.0, 200, spread)
    assert spread.asked == [8, 16, 32] and central == central_projection(spread.curves, 200)
    assert central.variance(np.array([200.0])) == pytest.approx([2.0])
    # no run like the session among the first 8: no projection, and no more runs asked
    far = CountingCurves(np.outer(np.full(32, 100.0), flat))
    assert pilot_projection(1.0, 200, far) is None and far.asked == [8]
    # one run like it among 8: more runs, until MIN_NEAR are like it
    one = CountingCurves(np.outer(np.r_[1.0, np.full(7, 100.0), 1.0, np.full(23, 100.0)], flat))
    assert pilot_projection(1.0, 200, one) == central_projection(one.curves[[0, 8]], 200) and one.asked == [8, 16]
    # runs like it whose central curve lies beyond a factor 4 of the session's (5 and 6 against 1.2): none
    assert pilot_projection(1.2, 200, CountingCurves(np.outer(np.tile([5.0, 6.0], 16), flat))) is None


def test_a_projection_behind_the_present_gives_way_to_the_sessions_own_variance():
    # the projection has 0.05 reached at 200 labels (V = 0.01), the session's interval is wider (V = 0.25):
    # the session's own constant variance, n = z^2 0.25 / 0.05^2; a steep slope is trusted only to MODEST_DECAY
    ahead = power_law(0.01, 200, 0.0, 0.3)
    own = present_projection(ahead, 0.25, 200, 0.05, 0.95, 10**6, True)
    assert own == ((200.0,), pytest.approx((math.log(0.25),)), 0.0, 0.3, 0.0, 1.0)
    assert labels_for(own, 0.05, 0.95, 10**6, True) == pytest.approx(Z**2 * 0.25 / 0.05**2, abs=0.5)
    assert present_projection(power_law(0.01, 200, -2.0), 0.25, 200, 0.05, 0.95, 10**6, True).slope == MODEST_DECAY
    # a projection not yet there, or a session already narrower: unchanged
    behind = power_law(1.0, 200, 0.0)
    assert present_projection(behind, 0.25, 200, 0.05, 0.95, 10**6, True) is behind
    assert present_projection(ahead, 0.02, 200, 0.05, 0.95, 10**6, True) is ahead


def test_run_variances_interpolate_each_run_in_log_n():
    marks = np.array(PILOT_MARKS, dtype=float)
    curves = np.stack([marks**-1.0, np.full(len(marks), np.nan), np.r_[np.nan, 4.0, np.nan, 1.0, 0.5]])
    # between 200 and 800 labels the third run falls from 4 to 1, linearly in log n; before its first value
    # and beyond its last it keeps them
    assert run_variances(curves, 300) == pytest.approx([1 / 300, np.nan, 4.0 * 4 ** -math.log(1.5, 4)],
                                                       nan_ok=True)
    assert run_variances(curves, 50)[2] == pytest.approx(4.0) and run_variances(curves, 3000)[2] == 0.5


def test_recent_variance_is_the_geometric_mean_over_the_last_batches():
    # importance's estimate from the labels up to a batch is the estimate it gave after that batch
    pool = lw.make_pool(3000, prevalence=0.1, separation=2.0, seed=2)
    measure = make_measure("f1", pool)
    session = lw.Session(pool, measure, "importance", seed=3, budget=400)
    after = []
    session.run(TruthOracle(pool), 250, 50, checkpoints=[150, 200, 250],
                on_checkpoint=lambda n, est: after.append(per_label_variance(est, pool.n_items, True)))
    assert RECENT_BATCHES == 3
    assert recent_variance(session, None, 0.95) == pytest.approx(math.exp(np.mean(np.log(after))), rel=1e-9)
    first = session.estimate(prefix=int(np.searchsorted(session.draws.round, 3)))  # the first 3 batches
    assert first.n_labels == 150 and per_label_variance(first, pool.n_items, True) == pytest.approx(after[0])
    with pytest.raises(ValueError, match="prefix= and anytime=True"):
        session.estimate(prefix=150, anytime=True)


def test_pilot_labels_are_exact_draws_that_cover_the_probabilities_evenly_across_runs():
    assert [rotation(r) for r in range(8)] == [0, 0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875]
    rng = np.random.default_rng(5)
    prior = rng.dirichlet([0.3, 0.3, 0.3], size=20_000)  # three labels, many items near 0 or 1
    cdf, offset = np.cumsum(prior, axis=1), rng.random(20_000)
    labels = np.stack([rotated_labels(cdf, offset, r) for r in range(16)])
    for runs in (4, 8, 16):  # the first 2^k runs: an arc of length p holds floor(2^k p) or ceil(2^k p) of them
        counts = np.stack([(labels[:runs] == k).sum(axis=0) for k in range(3)], axis=1)  # (items, labels)
        assert np.all((counts >= np.floor(runs * prior)) & (counts <= np.ceil(runs * prior)))
    # each run alone is a draw from p(y | x): its share of each label is the mean probability within 3 s.e.
    share, mean = (labels[3][:, None] == np.arange(3)).mean(axis=0), prior.mean(axis=0)
    se = np.sqrt((prior * (1 - prior)).sum(axis=0)) / prior.shape[0]
    assert np.all(np.abs(share - mean) <= 3 * se)


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.make_pool(5000, prevalence=0.2, separation=2.5, seed=9)


def test_session_plan_follows_the_pilot_runs_like_it(pool):
    measure = make_measure("f1", pool)
    session = lw.Session(pool, measure, "importance", seed=0, budget=400)
    est = session.run(TruthOracle(pool), 400)
    plan = session.labels_needed(0.02)
    lo, hi = est.interval()
    V = est.n_labels * ((hi[0] - lo[0]) / (2 * Z)) ** 2  # the interval's half-width is z sqrt(V / n)
    assert calibration_surprise(session, MISCALIBRATION_EFFECT) <= MISCALIBRATED  # calibrated probabilities
    central = pilot_projection(V, 400, lambda runs: pilot_curves(pool, measure, session.design, 400, 0, runs))
    assert central is not None  # the pilot runs are like the session: their shape, the session's level
    projection = nested_projection(central, V, 400)
    # the range: one run's log V one standard deviation either side
    need = [math.ceil(labels_for(projection.scaled(f), 0.02, 0.95, pool.n_items, True)) - 400
            for f in (0, -projection.spread, projection.spread)]
    assert [plan.labels_needed, plan.low, plan.high] == need and plan.labels_so_far == 400
    assert plan.low < plan.labels_needed < plan.high
    assert session.labels_needed(1.0).labels_needed == 0  # already narrower


def test_pilot_curves_grow_by_runs_keeping_the_runs_made(pool):
    measure = make_measure("f1", pool)
    design = lw.make_design("passive", pool)
    two = pilot_curves(pool, measure, design, 400, seed=7, runs=2).copy()
    four = pilot_curves(pool, measure, design, 400, seed=7, runs=4)  # 2 more runs
    assert four.shape == (4, len(PILOT_MARKS)) and np.array_equal(four[:2], two)
    planning_pilots._pilots.clear()
    at_once = pilot_curves(pool, measure, design, 400, seed=7, runs=4)
    assert at_once is not four and np.array_equal(at_once, four)  # runs added later are the runs made at once
    assert not np.array_equal(pilot_curves(pool, measure, design, 400, seed=8, runs=2), two)  # another seed


def test_a_zero_standard_error_keeps_its_intervals_variance():
    # an F1 of 0.99 with no standard error, but a beta interval of width 0.03
    one = {"names": ("f1",), "cov": np.zeros((1, 1)), "lower_bound": np.zeros(1), "upper_bound": np.ones(1),
           "n_labels": 200, "n_draws": 200, "R": np.zeros(3)}
    est = Estimate(value=np.array([0.99]), defined=np.array([True]), **one).with_stored_interval([0.97], [1.0])
    assert per_label_variance(est, 10**6, True) == pytest.approx(200 * (0.015 / Z) ** 2)
    # an F1 of 1 from the labels so far: its one-sided interval says nothing of the variance once an error is seen
    at_one = Estimate(value=np.array([1.0]), defined=np.array([True]), **one).with_stored_interval([0.97], [1.0])
    assert math.isnan(per_label_variance(at_one, 10**6, True))
    undefined = Estimate(value=np.array([np.nan]), defined=np.array([False]), **one)
    assert math.isnan(per_label_variance(undefined, 10**6, True))
    # a normal interval around a zero standard error says nothing: not a variance of 0
    degenerate = Estimate(value=np.array([0.5]), defined=np.array([True]), **one).with_stored_interval([0.5], [0.5])
    assert math.isnan(per_label_variance(degenerate, 10**6, True))


def test_plans_before_any_label_are_reproducible_and_ordered(pool):
    measure = make_measure("f1", pool)
    plans = plan_designs(pool, measure, 0.05, designs=["passive", "importance"], seed=3)
    assert [p.design for p in plans] == ["passive", "importance"]
    assert plans == plan_designs(pool, measure, 0.05, designs=["passive", "importance"], seed=3)
    assert all(p.low <= p.labels_needed <= p.high and p.labels_so_far == 0 for p in plans)
    # importance sampling needs fewer labels than uniform sampling on an imbalanced pool
    assert plans[1].labels_needed < plans[0].labels_needed
    assert set(plans[0].to_dict()) == {"design", "labels_needed", "low", "high", "labels_so_far"}


def test_the_range_before_any_label_leaves_out_a_lone_pilot_that_met_no_positive(pool):
    """Eight pilot curves, one of them near 0 (a run that met no positive plans a handful of labels) and one far
    above: the range is the runs' second smallest and second largest plans, not the extremes."""
    from labelwise.planning import _pilot_plan
    from labelwise.planning_pilots import PILOT_MARKS

    design = lw.make_design("passive")
    levels = np.array([1e-4, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 50.0])
    curves = levels[:, None] * np.ones(len(PILOT_MARKS))[None, :]
    median, low, high = _pilot_plan(pool, design, curves, 0.05, 0.95)
    plans = sorted(_pilot_plan(pool, design, curves[[i]], 0.05, 0.95)[0] for i in range(levels.size))
    assert (low, high) == (plans[1], plans[-2]) and median == pytest.approx(np.median(plans))
    assert plans[0] < 0.1 * low and plans[-1] > 2 * high  # the extremes are far out (the pool caps the last)


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


def test_a_run_plans_no_sooner_than_its_first_mark_with_a_variance(pool):
    """Pilot runs whose estimate is undefined (no variance) before a mark reach the half-width no sooner than that
    mark even with a variance near 0 after it; a run with no variance at any mark plans the whole pool; a session
    still undefined at 250 labels follows the runs undefined up to 250 labels, each at least one label on."""
    from labelwise.planning import _pilot_plan

    design = lw.make_design("passive")
    first = [0, 1, 2, 2, 3, 3, 4, len(PILOT_MARKS)]  # index of each run's first mark with a variance
    curves = np.where(np.arange(len(PILOT_MARKS))[None, :] >= np.array(first)[:, None], 1e-9, np.nan)
    needs = sorted([1.0] + [float(PILOT_MARKS[i]) for i in first[1:-1]] + [math.inf])
    median, low, high = _pilot_plan(pool, design, curves, 0.05, 0.95)
    assert (median, low, high) == (np.median(needs), needs[1], needs[-2])
    like = [need for need in needs if need > 250]  # the runs without a variance up to 250 labels
    assert _pilot_plan(pool, design, curves, 0.05, 0.95, 250) == (np.median(like), like[0], like[-2])


def test_a_session_whose_estimate_is_undefined_has_not_reached_the_half_width():
    """A system that predicts no positive: F1 and precision stay undefined until a positive is labeled, and the
    plan does not say the half-width is reached (the pilot runs that met a positive early have F1 0, nearly
    certain)."""
    base = lw.make_pool(5000, prevalence=0.01, separation=2.5, seed=4)
    silent = lw.Pool.from_arrays(base.item_ids, preds=np.zeros(base.n_items, dtype=int), scores=base.scores[:, 0],
                                 probs=base.probs[:, 0])
    session = lw.Session(silent, make_measure("f1,precision,recall", silent), "online-poisson", seed=0)
    ids = session.next_batch(100)
    session.add_labels(ids, np.zeros(len(ids), dtype=int))
    assert not session.estimate().defined.any()
    plan = session.labels_needed(0.05)
    assert 1 <= plan.low <= plan.labels_needed <= plan.high and plan.labels_so_far == 100
