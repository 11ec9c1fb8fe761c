"""online-poisson's count interval (variance="count"): the exceptions' expected count learned from the labels."""

import numpy as np
import pytest
from scipy.special import gammainc

import labelwise as lw
from labelwise.designs.group_model import COUNT_PRIOR


def _session(pool, budget, seed=1, **settings):
    session = lw.Session(pool, lw.make_measure("f1", pool), lw.OnlinePoissonDesign(variance="count", **settings),
                         seed=seed, budget=budget)
    session.run(lw.TruthOracle(pool), budget)
    return session


def test_count_multipliers_are_the_gamma_posterior_of_the_labels():
    """The multipliers sit at the midpoints of 64 equal-probability cells of Gamma(1 + Y, 1 + E): Y the
    exceptions found among the labeled items of each group's kind, E the recalibrated scores' expectation."""
    pool = lw.make_pool(3000, prevalence=0.05, seed=3)
    session = _session(pool, 300, n_strata=16, branching=16)
    gm = session.sampler.gm
    rho, weights = gm.count_spread()
    positive_mode = np.argmax(gm.posterior(interval=True), axis=1) == 1
    items, y = gm.groups.labeled_items, gm.labeled_y
    p = gm.platt(np.clip(np.log(pool.probs[items, 0] / (1 - pool.probs[items, 0])), -30, 30))
    mode = positive_mode[gm.groups.of_item[items]]
    found = np.sum(np.where(mode, y == 0, y == 1))
    expected = np.sum(np.where(mode, 1 - p, p))
    assert found > 0
    cells = (np.arange(64) + 0.5) / 64
    assert np.allclose(gammainc(COUNT_PRIOR + found, rho * (COUNT_PRIOR + expected)), cells)
    assert np.allclose(weights, 1 / 64)


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
