"""Water-filling inclusion probabilities for Poisson sampling (seed 002, Algorithm 3)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from labelwise.designs.poisson import inclusion_probabilities


def _objective(h, b):
    return np.sum(h**2 / b)


@pytest.mark.parametrize("seed", range(5))
def test_matches_a_generic_convex_solver(seed):
    rng = np.random.default_rng(seed)
    h = rng.lognormal(0, 1.5, size=12)  # heavy tail: several items saturate
    M = 5.0
    b = inclusion_probabilities(h, M)
    assert b.sum() == pytest.approx(M)
    assert np.all((b > 0) & (b <= 1))
    res = minimize(lambda x: _objective(h, x), np.full(h.size, M / h.size), method="SLSQP",
                   bounds=[(1e-9, 1.0)] * h.size, constraints=[{"type": "eq", "fun": lambda x: x.sum() - M}],
                   options={"ftol": 1e-14, "maxiter": 1000})
    assert _objective(h, b) <= res.fun * (1 + 1e-7)
    np.testing.assert_allclose(b, res.x, atol=1e-4)


def test_optimality_conditions():
    """Saturated items have the largest h; the others are proportional to h (seed 002 eq. 74)."""
    rng = np.random.default_rng(7)
    h = np.concatenate([rng.random(1000), [50.0, 40.0, 30.0]])
    b = inclusion_probabilities(h, 40.0)
    sure = b == 1.0
    assert sure.sum() == 3
    ratio = b[~sure] / h[~sure]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
    assert h[sure].min() >= h[~sure].max()
    # without saturation, b is simply proportional to h
    b2 = inclusion_probabilities(rng.random(100) + 1.0, 10.0)
    assert b2.max() < 1 and b2.sum() == pytest.approx(10.0)


def test_budget_beyond_informative_items():
    h = np.array([0.0, 2.0, 0.0, 1.0])
    np.testing.assert_array_equal(inclusion_probabilities(h, 3.0), [0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(inclusion_probabilities(np.ones(3), 10.0), [1.0, 1.0, 1.0])


def test_ties_and_fractional_budget():
    b = inclusion_probabilities(np.ones(4), 2.5)
    np.testing.assert_allclose(b, 0.625)
    b = inclusion_probabilities(np.array([10.0, 10.0, 1.0, 1.0]), 2.5)
    np.testing.assert_allclose(b, [1.0, 1.0, 0.25, 0.25])


@pytest.mark.parametrize("h, budget, match", [
    (np.array([1.0, -1.0]), 1.0, "non-negative"),
    (np.array([1.0, np.nan]), 1.0, "finite"),
    (np.array([[1.0]]), 1.0, "1-d"),
    (np.array([1.0, 2.0]), 0.0, "budget"),
])
def test_bad_input(h, budget, match):
    with pytest.raises(ValueError, match=match):
        inclusion_probabilities(h, budget)
