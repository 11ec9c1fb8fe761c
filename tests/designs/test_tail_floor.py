"""The floor under the recalibrated scores (positives the scores cannot see): exact values and a hidden-positive pool."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logit

import labelwise as lw
from labelwise.designs.tail_floor import (
    FLOOR_GRID,
    floor_loglik,
    floor_rate,
    with_floor,
)


def test_loglik_exact_on_a_tiny_case():
    q = np.array([0.2, 0.5, 0.1])
    y = np.array([1, 0, 1])
    r = np.concatenate([[0.0], FLOOR_GRID])
    # prod over positives of (r + (1 - r) q), times (1 - r) per negative
    expected = np.log(r + (1 - r) * 0.2) + np.log(r + (1 - r) * 0.1) + np.log1p(-r)
    np.testing.assert_allclose(floor_loglik(q, y), expected)


def test_no_floor_without_a_positive():
    assert floor_rate(np.full(5, 0.01), np.zeros(5, dtype=int)) == 0.0


def test_floor_posterior_mean_exact_where_the_scores_explain_the_positive():
    # the one positive had probability 1: the likelihood is (1 - r0)^2, the prior half on 0, half on the grid
    likelihood = (1 - FLOOR_GRID) ** 2
    on_grid = 0.5 / FLOOR_GRID.size
    expected = on_grid * (FLOOR_GRID @ likelihood) / (0.5 + on_grid * likelihood.sum())
    assert floor_rate(np.array([1.0, 0.0, 0.0]), np.array([1, 0, 0])) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("k, n", [(5, 200), (20, 400), (50, 5000)])
def test_floor_is_the_share_of_positives_the_scores_give_nothing(k, n):
    # q = 0: the likelihood is r^k (1 - r)^(n - k); with the prior even in log r (density 1 / r) the posterior is
    # close to Beta(k, n - k + 1), mean k / (n + 1) (the grid is fine: 240 points over 6.7 decades)
    y = np.zeros(n, dtype=int)
    y[:k] = 1
    assert floor_rate(np.zeros(n), y) == pytest.approx(k / (n + 1), rel=0.02)


def test_with_floor_raises_every_leaf_to_it():
    prior = np.array([0.0, 0.01, 0.5, 1.0])
    y = np.zeros(100, dtype=int)
    y[:3] = 1
    r0 = floor_rate(np.zeros(100), y)
    np.testing.assert_allclose(with_floor(prior, np.zeros(100), y), r0 + (1 - r0) * prior)
    np.testing.assert_array_equal(with_floor(prior, np.full(100, 0.01), np.zeros(100, dtype=int)), prior)


def hidden_pool(n_items: int, prevalence: float, share: float, seed: int) -> lw.Pool:
    """A pool whose ``share`` of positives score like negatives; the probabilities a model's that never saw them."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(n_items) < prevalence).astype(np.int8)
    hidden = (labels == 1) & (rng.random(n_items) < share)
    x = rng.standard_normal(n_items) + 3.0 * ((labels == 1) & ~hidden)
    probs = expit(logit(prevalence * (1 - share)) + 3.0 * x - 4.5)
    preds = (probs >= np.quantile(probs, 1 - prevalence)).astype(np.int8)
    return lw.Pool.from_arrays(None, preds=preds, scores=logit(np.clip(probs, 1e-12, 1 - 1e-12)), probs=probs,
                               labels=labels)


def test_floor_refused_off_score_blocks():
    pool = hidden_pool(2000, 0.05, 0.3, 0)
    design = lw.OnlinePoissonDesign(tail_floor=True)
    with pytest.raises(ValueError, match="tail_floor"):
        design.start(pool, lw.make_measure("f1", pool), rng=np.random.default_rng(0), oracle="stochastic")


def test_floor_needs_the_platt_recalibration():
    with pytest.raises(ValueError, match="calibration='platt'"):
        lw.OnlinePoissonDesign(tail_floor=True, calibration="none")


@pytest.mark.slow
def test_floor_covers_when_positives_hide_in_the_tail():
    """The default covered 0.60 / 0.40 at 1000 / 2000 labels here (30 runs): its model calls the tail empty.  With
    the floor, a 95% interval covers at least 0.95 - 3 s.e. over 30 runs (0.83)."""
    pool = hidden_pool(50_000, 0.005, 0.3, 0)
    measure = lw.make_measure("f1", pool)
    result = lw.simulate(pool, measure, "online-poisson", budget=2000, batch_size=50, repeats=30, seed=1,
                         checkpoints=[1000, 2000], design_params={"tail_floor": True}).to_dict()
    floor = 0.95 - 3 * np.sqrt(0.95 * 0.05 / 30)
    assert min(c["coverage"] for c in result["checkpoints"]) >= floor
