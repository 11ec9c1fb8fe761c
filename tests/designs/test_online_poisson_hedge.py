"""online-poisson's hedge: a round is uniform when the oracle model promises little from adapting."""

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs.poisson_rounds import _round_variance


def test_round_variance_is_the_models_poisson_variance():
    """sum_g U_g (1/b_g - 1) E_pi ||u||^2 (Yilmaz et al. 2021, eq. 25), empty groups left out."""
    U = np.array([10.0, 5.0, 0.0])
    b = np.array([0.1, 0.5, 0.0])
    pi = np.array([[0.9, 0.1], [0.5, 0.5], [0.5, 0.5]])
    inf = np.array([[1.0, 0.0, 7.0], [4.0, 2.0, 7.0]])  # (C, G)
    assert _round_variance(b, U, pi, inf) == pytest.approx(10 * 9 * 1.3 + 5 * 1 * 1.0)


def _inclusions(pool, hedge, deviation="auto"):
    session = lw.Session(pool, lw.make_measure("f1", pool),
                         lw.OnlinePoissonDesign(n_strata=16, branching=16, hedge=hedge, deviation=deviation), seed=3)
    session.run(lw.TruthOracle(pool), budget=300)
    sampler = session.sampler
    live = [b[b < 1.0] for b in sampler._inclusion]  # blocks with unlabeled members
    return live


def test_hedge_zero_is_uniform_sampling_and_a_large_one_always_adapts():
    pool = lw.make_pool(5000, prevalence=0.01, seed=2)
    for b in _inclusions(pool, hedge=0.0):
        np.testing.assert_allclose(b, b[0])  # every unlabeled item alike
    adapted = _inclusions(pool, hedge=1e9)
    assert all(b.max() > 5 * b.min() for b in adapted[1:])


def test_a_hedge_below_one_adapts_under_imbalance_and_not_on_a_balanced_weak_pool():
    """The model's promised gain decides: 1:100 with a good system adapts every round; a balanced pool
    with a weak system (every item about as uncertain) draws most rounds of the mean deviations uniformly
    (the root mean square ones are the model's optimum, which never promises less than uniform sampling)."""
    rare = _inclusions(lw.make_pool(5000, prevalence=0.01, separation=3.0, seed=2), hedge=0.9)
    assert sum(b.max() > 1.5 * b.min() for b in rare) == len(rare)
    balanced = _inclusions(lw.make_pool(5000, prevalence=0.5, separation=1.0, seed=2), hedge=0.9, deviation="mean")
    assert sum(np.allclose(b, b[0]) for b in balanced) >= 0.8 * len(balanced)
