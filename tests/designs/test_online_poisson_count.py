"""online-poisson's count interval (variance="count"): the exceptions left unlabeled as a Poisson count."""

import numpy as np
import pytest

import labelwise as lw


def _session(pool, budget, seed=1, **settings):
    session = lw.Session(pool, lw.make_measure("f1", pool), lw.OnlinePoissonDesign(variance="count", **settings),
                         seed=seed, budget=budget)
    session.run(lw.TruthOracle(pool), budget)
    return session


def test_count_multipliers_scale_the_tail_by_the_posterior_points(monkeypatch):
    """A posterior point equal to the design's recalibration multiplies the count by 1; one whose intercept is
    log 2 higher, by 2 up to the exceptions' probability (sigmoid(x + log 2) = 2 sigmoid(x) (1 + O(p)))."""
    from labelwise.designs import group_model
    from labelwise.oracle.calibration import PlattPosterior

    pool = lw.make_pool(5000, prevalence=0.005, separation=4.0, seed=3)
    session = _session(pool, 300, n_strata=16, branching=16)
    gm = session.sampler.gm
    a, b = gm.platt.a, gm.platt.b
    points = PlattPosterior(np.array([a, a]), np.array([b, b + np.log(2.0)]), np.array([0.25, 0.75]))
    monkeypatch.setattr(group_model, "platt_posterior", lambda *args, **kw: points)
    rho, weights = gm.count_spread()
    assert weights.tolist() == [0.25, 0.75]
    assert rho[0] == pytest.approx(1.0, rel=1e-12)
    largest = np.max(np.min(gm.posterior(interval=True), axis=1)[gm.groups.unlabeled > 0])
    assert abs(rho[1] - 2.0) <= 2.0 * largest


def test_uncalibrated_scores_keep_the_count_known():
    pool = lw.make_pool(3000, prevalence=0.05, seed=3)
    session = _session(pool, 200, n_strata=16, branching=16, calibration="none")
    rho, weights = session.sampler.gm.count_spread()
    assert rho.tolist() == [1.0] and weights.tolist() == [1.0]


@pytest.mark.slow
def test_count_interval_covers_on_a_rare_pool():
    """1:500 pool, F1 at 600 labels, 60 runs: coverage >= 0.95 - 3 s.e. (0.866)."""
    pool = lw.make_pool(20000, prevalence=0.002, separation=3.0, seed=11)
    truth = lw.true_value(pool, lw.make_measure("f1", pool))[0]
    runs, inside = 60, 0
    for r in range(runs):
        lo, hi = _session(pool, 600, seed=r).estimate().interval()
        inside += bool(lo[0] <= truth <= hi[0])
    assert inside / runs >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)
