"""The Jeffreys interval on an effective count (``beta_interval`` with ``n``): at and near the boundary."""

import numpy as np
import pytest
from scipy import stats

from labelwise.estimators import beta_interval, jeffreys_count
from labelwise.measures import make_measure
from labelwise.pool import Pool
from labelwise.simulate import simulate


def test_jeffreys_count_inverts_the_jeffreys_posterior_variance():
    mu = np.array([0.0, 1.0, 0.7, 0.9997])
    var = np.array([1e-4, 0.002**2, 0.01, 0.0141**2])
    k = jeffreys_count(mu, var)
    np.testing.assert_allclose(stats.beta.var(mu * k + 0.5, (1 - mu) * k + 0.5), var, rtol=1e-9)
    # at the boundary the variance is about 1 / (2 k^2)
    assert k[1] == pytest.approx(np.sqrt(0.5) / 0.002, rel=0.01)
    # a zero variance gives n, a positive one does not depend on n; a variance above 1/8 (Beta(1/2, 1/2)) gives 0
    assert jeffreys_count(1.0, 0.002**2, n=100) == k[1]
    assert jeffreys_count(0.5, 0.0, n=100) == 100
    assert jeffreys_count(0.5, 0.2) == 0


def test_estimate_on_the_upper_bound_with_a_variance():
    """mu = 1 with s2 > 0 (a label floor's variance): the moment fit gave k = -1, Beta(1/2, 1/2), [0.0015, 1]."""
    var = 0.002**2
    lo, hi = beta_interval(1.0, var, 0.95, n=500)
    k = jeffreys_count(1.0, var)
    assert hi == 1.0
    assert lo == pytest.approx(stats.beta.ppf(0.025, k + 0.5, 0.5))
    # the width is in line with the standard error: a few of them
    assert 1 - 4 * np.sqrt(var) < lo < 1 - np.sqrt(var)
    # on the range [-1, 1] (e.g. MCC) the same interval, rescaled
    lo2, hi2 = beta_interval(1.0, 4 * var, 0.95, -1.0, 1.0, n=500)
    assert (lo2, hi2) == pytest.approx((2 * lo - 1, 1.0))


def test_estimate_on_the_lower_bound_with_a_variance():
    var = 1e-4
    lo, hi = beta_interval(0.0, var, 0.95, n=500)
    k = jeffreys_count(0.0, var)
    assert lo == 0.0
    assert hi == pytest.approx(stats.beta.ppf(0.975, 0.5, k + 0.5))
    assert np.sqrt(var) < hi < 4 * np.sqrt(var)


def test_estimate_near_the_bound_with_a_large_variance_stays_inside():
    """mu = 0.9997, sd 0.0141 (s2 >= mu (1 - mu)): the moment fit gave Beta(1, 1/2), [0.055, 0.9994]."""
    mu, var = 0.9997, 0.0141**2
    lo, hi = beta_interval(mu, var, 0.95, n=300)
    k = jeffreys_count(mu, var)
    a, b = mu * k + 0.5, (1 - mu) * k + 0.5
    assert lo == pytest.approx(stats.beta.ppf(0.025, a, b))
    assert hi == pytest.approx(max(stats.beta.ppf(0.975, a, b), mu))
    assert lo < mu <= hi <= 1.0
    assert lo > 1 - 6 * np.sqrt(var)


def test_zero_variance_is_the_jeffreys_interval_of_n_draws():
    lo, hi = beta_interval(np.array([1.0, 0.0]), 0.0, 0.95, n=200)
    assert (lo[0], hi[1]) == pytest.approx((stats.beta.ppf(0.025, 200.5, 0.5), stats.beta.ppf(0.975, 0.5, 200.5)))
    assert (hi[0], lo[1]) == (1.0, 0.0)


@pytest.mark.slow
def test_precision_of_a_near_perfect_system_covers():
    """A 2,000-item pool, 10% positives, 154 predicted positives of which 3 false: most runs label none.

    Over 400 runs at 100 and 200 labels (stratified design, whose label floor gives s2 > 0 at
    precision 1) the interval must hold its estimate every time and cover the truth at least
    at 0.95 minus three binomial standard errors, sqrt(0.95 * 0.05 / 400) = 0.011, with
    intervals no wider than needed.
    """
    rng = np.random.default_rng(1)
    n, prev = 2000, 0.1
    y = rng.random(n) < prev
    logit = rng.normal(0, 1, n) + np.where(y, 3.0, -1.0) + np.log(prev / (1 - prev))
    prob = 1 / (1 + np.exp(-logit))
    pool = Pool.from_arrays(preds=(prob > 0.5).astype(int), scores=logit, probs=prob, labels=y.astype(int))
    measure = make_measure("precision", pool)
    res = simulate(pool, measure, "stratified", budget=200, batch_size=50, repeats=400, seed=5,
                   checkpoints=[100, 200])
    assert res.true_value[0] == pytest.approx(151 / 154)
    assert np.all((res.lower <= res.values) & (res.values <= res.upper))
    assert np.mean(res.values == 1.0) > 0.3  # the boundary case is the common one
    coverage = np.mean((res.lower <= res.true_value) & (res.true_value <= res.upper), axis=1)[:, 0]
    assert np.all(coverage >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 400)), coverage
    # no wider than needed (2 x 3.92 x RMSE); the old moment fit gave [0.0015, 1] at every precision of 1
    rmse = np.sqrt(np.mean((res.values - res.true_value) ** 2, axis=1))[:, 0]
    assert np.all(np.mean(res.upper - res.lower, axis=1)[:, 0] <= 2 * 3.92 * rmse)
