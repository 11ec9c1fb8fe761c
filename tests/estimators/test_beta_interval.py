"""The Jeffreys interval on an effective count (``beta_interval`` with ``n``): at and near the boundary."""

import numpy as np
import pytest
from scipy import stats

from labelwise.designs import make_design
from labelwise.estimators import beta_interval, jeffreys_count
from labelwise.measures import make_measure
from labelwise.oracle.annotators import TruthOracle
from labelwise.pool import Pool
from labelwise.session import Session
from labelwise.simulate import true_value


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


def test_the_smaller_moment_count_is_kept_near_the_bound():
    """mu = 0.98, sd 0.0163: the moment count 72.8 sees 1.5 errors and is below the Jeffreys count, so it is kept.

    The Jeffreys posterior at its own count (90.6) is pulled towards 1/2 and its upper end would be
    0.9962 (such intervals missed an importance-sampled AUC of 0.997 by a hair).
    """
    mu, var = 0.98, 0.0163**2
    k = mu * (1 - mu) / var - 1
    assert k < jeffreys_count(mu, var)
    lo, hi = beta_interval(mu, var, 0.95, n=500)
    assert (lo, hi) == pytest.approx(stats.beta.ppf([0.025, 0.975], mu * k + 0.5, (1 - mu) * k + 0.5))


def test_zero_variance_is_the_jeffreys_interval_of_n_draws():
    lo, hi = beta_interval(np.array([1.0, 0.0]), 0.0, 0.95, n=200)
    assert (lo[0], hi[1]) == pytest.approx((stats.beta.ppf(0.025, 200.5, 0.5), stats.beta.ppf(0.975, 0.5, 200.5)))
    assert (hi[0], lo[1]) == (1.0, 0.0)


@pytest.mark.slow
def test_precision_of_a_near_perfect_system_covers():
    """A 2,000-item pool, 10% positives, 154 predicted positives of which 3 false: most runs label none.

    Over 200 runs at 100 and 200 labels (stratified design, whose label floor gives s2 > 0 at
    precision 1) the interval must hold its estimate every time and cover the truth at least
    at 0.95 minus three binomial standard errors, sqrt(0.95 * 0.05 / 200) = 0.015.  At
    precision 1 the interval is the Jeffreys interval on a count k whose posterior has the
    estimate's variance, ``Beta(k + 1/2, 1/2)``: 1 - lower is a fixed multiple of its standard
    deviation for each k (3.553 as k -> infinity, where 1 - p is Gamma(1/2, k); at most 3.632,
    near k = 5), so a few standard errors of the estimate.
    """
    rng = np.random.default_rng(1)
    n, prev = 2000, 0.1
    y = rng.random(n) < prev
    logit = rng.normal(0, 1, n) + np.where(y, 3.0, -1.0) + np.log(prev / (1 - prev))
    prob = 1 / (1 + np.exp(-logit))
    pool = Pool.from_arrays(preds=(prob > 0.5).astype(int), scores=logit, probs=prob, labels=y.astype(int))
    measure = make_measure("precision", pool)
    truth = true_value(pool, measure)[0]
    assert truth == pytest.approx(151 / 154)
    marks, runs = [100, 200], 200
    design = make_design("stratified", pool, measure)
    value, std, lower, upper = (np.empty((len(marks), runs)) for _ in range(4))
    for r, seed in enumerate(np.random.SeedSequence(5).spawn(runs)):
        def record(n_labels, est, r=r):
            c = marks.index(n_labels)
            value[c, r], std[c, r] = est.value[0], est.std[0]
            (lower[c, r],), (upper[c, r],) = est.interval()

        session = Session(pool, measure, design, budget=marks[-1], seed=np.random.default_rng(seed))
        session.run(TruthOracle(pool), marks[-1], 50, checkpoints=marks, on_checkpoint=record)
    assert np.all((lower <= value) & (value <= upper))
    at_one = value == 1.0
    assert np.mean(at_one) > 0.3  # the boundary case is the common one
    coverage = np.mean((lower <= truth) & (truth <= upper), axis=1)
    assert np.all(coverage >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)), coverage
    # the old moment fit gave [0.0015, 1] at every precision of 1
    ks = np.geomspace(0.01, 1e6, 2000)
    ratio = (1 - stats.beta.ppf(0.025, ks + 0.5, 0.5)) / stats.beta.std(ks + 0.5, 0.5)
    assert ratio.max() == pytest.approx(3.632, abs=1e-3)
    assert np.all(1 - lower[at_one] <= ratio.max() * std[at_one] * (1 + 1e-9))
