"""The interval of exceptions left unlabeled as an exact count (labelwise.estimators.missed)."""

import numpy as np
import pytest
from scipy.special import ndtri, pdtr
from scipy.stats import nbinom, poisson

from labelwise.estimators import missed_count_variance, negative_binomial_sum_pmf
from labelwise.estimators.missed import MAX_COUNT, TAIL_MASS

Z = ndtri(0.975)


def _smallest_count(cdf, level=0.95):
    """Smallest k with cdf(k) >= level, by enumeration."""
    k = 0
    while cdf(k) < level:
        k += 1
    return k


def test_without_noise_the_interval_ends_at_the_counts_quantile():
    """base 0, jump 1: the interval [-h, h] covers K ~ Poisson(2) exactly when h reaches its 95% quantile
    (P(K <= 4) = 0.947, P(K <= 5) = 0.983, so h = 5)."""
    k = _smallest_count(lambda k: pdtr(k, 2.0))
    assert k == 5
    var = missed_count_variance(np.zeros(1), np.ones(1), 0.95, np.array([2.0]))
    assert var[0] == pytest.approx((k / Z) ** 2, rel=1e-9)


def test_uncertain_count_is_a_mixture_of_poisson_counts():
    """Multipliers 0 and 2 with probability 1/2 each: P(K <= k) = 1/2 + P(Poisson(2) <= k) / 2."""
    k = _smallest_count(lambda k: 0.5 + 0.5 * pdtr(k, 2.0))
    var = missed_count_variance(np.zeros(1), np.full(1, 0.5), 0.95, np.array([[0.0], [2.0]]), np.array([0.5, 0.5]))
    assert var[0] == pytest.approx((0.5 * k / Z) ** 2, rel=1e-9)


def test_predicted_exceptions_centre_the_count():
    """An estimate that counts all of the expected exceptions: the error is K - 3, K ~ Poisson(3); the interval
    covers |K - 3| <= h, enumerated."""
    pmf = np.diff(np.concatenate([[0.0], pdtr(np.arange(60), 3.0)]))
    dist = np.abs(np.arange(60) - 3.0)
    h = min(d for d in np.unique(dist) if pmf[dist <= d].sum() >= 0.95)
    var = missed_count_variance(np.zeros(1), np.ones(1), 0.95, np.array([3.0]), offset=3.0)
    assert var[0] == pytest.approx((h / Z) ** 2, rel=1e-9)


def test_no_exception_keeps_the_base_variance():
    base = np.array([0.3, 0.0])
    assert np.array_equal(missed_count_variance(base, np.ones(2), 0.95, np.zeros(1)), base)
    assert np.array_equal(missed_count_variance(base, np.zeros(2), 0.95, np.array([4.0])), base)


def test_a_large_centred_count_is_normal():
    """At a mean of 1e4, all of it predicted, K - 1e4 is close to Normal(0, 1e4): the half-width is 1.96 x 100."""
    var = missed_count_variance(np.zeros(1), np.ones(1), 0.95, np.array([1e4]), offset=1e4)
    assert np.sqrt(var[0]) * Z == pytest.approx(Z * 100.0, rel=0.02)


def test_normal_plus_count_covers_at_the_level():
    """Seeded simulation of X + j (K - o), X ~ N(0, base), K ~ Poisson(count * rho) with rho uncertain: the
    returned variance's interval covers 95% within 3 standard errors of 200,000 draws."""
    rng = np.random.default_rng(0)
    base, jump, count, offset = np.array([0.04]), np.array([0.1]), 1.5, 0.45
    rho, weights = np.array([0.5, 1.0, 3.0]), np.array([0.3, 0.5, 0.2])
    var = missed_count_variance(base, jump, 0.95, count * rho[:, None], weights, offset=offset)
    n = 200_000
    k = rng.poisson(count * rho[rng.choice(3, size=n, p=weights)])
    error = rng.normal(0.0, np.sqrt(base[0]), n) + jump[0] * (k - offset)
    coverage = np.mean(np.abs(error) <= Z * np.sqrt(var[0]))
    assert abs(coverage - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / n)


def _negative_binomial(mean, d, n):
    """pmf of a negative binomial of that mean and variance mean (1 + d) on 0..n-1 (Poisson at d = 0)."""
    k = np.arange(n)
    return poisson.pmf(k, mean) if d == 0 else nbinom.pmf(k, mean / d, 1.0 / (1.0 + d))


def test_sum_of_negative_binomials_is_their_convolution():
    """Three parts (a Poisson and two overdispersed counts), two rows of means: the recursion against the
    convolution of the three pmfs (scipy's)."""
    means = np.array([[1.5, 0.4, 2.0], [0.0, 3.0, 0.7]])
    d = np.array([0.0, 2.5, 0.6])
    pmf = negative_binomial_sum_pmf(means, d)
    for row, m in zip(pmf, means):
        parts = [_negative_binomial(mean, di, 400) for mean, di in zip(m, d)]
        exact = np.convolve(np.convolve(parts[0], parts[1]), parts[2])[:row.size]
        computed = row > 0  # a row that ends earlier than another is zero beyond its end
        assert np.abs(row - exact)[computed].max() < 1e-14
        assert 1.0 - row.sum() < 1e-9  # cut only where less than TAIL_MASS is left


def test_overdispersed_count_widens_the_interval_to_its_quantile():
    """base 0, jump 1, one negative binomial part of mean 2, variance 2 (1 + 3): the interval ends at its 95%
    quantile, enumerated, which is beyond the Poisson count's (5)."""
    pmf = _negative_binomial(2.0, 3.0, 200)
    k = _smallest_count(lambda k: pmf[: k + 1].sum())
    assert k > 5
    var = missed_count_variance(np.zeros(1), np.ones(1), 0.95, np.array([2.0]), overdispersion=np.array([3.0]))
    assert var[0] == pytest.approx((k / Z) ** 2, rel=1e-9)


def test_normal_plus_overdispersed_counts_cover_at_the_level():
    """Seeded simulation of X + j (K - o), K the sum of a Poisson and a negative binomial part whose means depend
    on an uncertain model: the returned variance's interval covers 95% within 3 standard errors of 200,000 draws."""
    rng = np.random.default_rng(1)
    base, jump, offset = np.array([0.02]), np.array([0.1]), 0.3
    means, weights, d = np.array([[0.5, 1.0], [1.5, 4.0]]), np.array([0.7, 0.3]), np.array([0.0, 4.0])
    var = missed_count_variance(base, jump, 0.95, means, weights, d, offset)
    n = 200_000
    row = rng.choice(2, size=n, p=weights)
    k = rng.poisson(means[row, 0]) + rng.negative_binomial(means[row, 1] / d[1], 1.0 / (1.0 + d[1]))
    error = rng.normal(0.0, np.sqrt(base[0]), n) + jump[0] * (k - offset)
    coverage = np.mean(np.abs(error) <= Z * np.sqrt(var[0]))
    assert abs(coverage - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / n)


def test_large_means_are_normal_and_cheap():
    """A multiplier of 1e6 (a posterior point far out in the tail) gives a Poisson(1e5) component, taken normal:
    with half the mass at 0, covering 95% takes 90% of that component, which lies far above 0, so
    h = 1e5 + 1.2816 sqrt(1e5)."""
    var = missed_count_variance(np.zeros(1), np.ones(1), 0.95, np.array([[0.0], [1e5]]), np.array([0.5, 0.5]))
    assert np.sqrt(var[0]) * Z == pytest.approx(1e5 + ndtri(0.9) * np.sqrt(1e5), rel=1e-3)


def test_a_long_tail_is_exact_up_to_the_largest_count():
    """A part of overdispersion 5000 (a leaf of many items and few labels) leaves more than 1e-9 beyond
    MAX_COUNT: the pmf runs to MAX_COUNT and every probability is the convolution's (scipy's) within 1e-13,
    though most of the tail's mass lies beyond (the transform is tilted against it folding back)."""
    means, d = np.array([[0.05, 2.0], [0.2, 0.5]]), np.array([5000.0, 1.5])
    pmf = negative_binomial_sum_pmf(means, d)
    assert pmf.shape == (2, MAX_COUNT + 1)
    n = 20 * MAX_COUNT
    for row, m in zip(pmf, means):
        exact = np.convolve(*(_negative_binomial(mean, di, n) for mean, di in zip(m, d)))[: MAX_COUNT + 1]
        assert 1.0 - exact.sum() > 1e-6  # the mass beyond the last count is far more than TAIL_MASS
        assert np.abs(row - exact).max() < 1e-13
        assert np.all(row > 0)


def test_a_sum_of_many_parts_has_their_mean_and_variance():
    """256 parts, means summing to 500, overdispersion up to 2: the pmf (ending before MAX_COUNT, where less than
    TAIL_MASS is left) has the sum's mean, sum_b m_b, and variance, sum_b m_b (1 + d_b)."""
    rng = np.random.default_rng(3)
    means = 500.0 * rng.dirichlet(np.ones(256))[None, :]
    d = rng.uniform(0.0, 2.0, 256)
    pmf = negative_binomial_sum_pmf(means, d)[0]
    k = np.arange(pmf.size)
    assert pmf.size < MAX_COUNT
    assert 1.0 - pmf.sum() < 1e-9
    mean = pmf @ k / pmf.sum()
    assert mean == pytest.approx(500.0, rel=1e-9)
    assert pmf @ (k - mean) ** 2 / pmf.sum() == pytest.approx(means[0] @ (1.0 + d), rel=1e-6)


def test_each_row_ends_where_its_own_remaining_mass_is_below_the_tail_mass():
    """A Poisson row of mean 20 ends before an overdispersed row of mean 0.3 (variance 1.2, a longer tail): it is
    0 from the first count where less than TAIL_MASS of it is left, and the pmf runs to where the other's is."""
    pmf = negative_binomial_sum_pmf(np.array([[20.0, 0.0], [0.0, 0.3]]), np.array([0.0, 3.0]))
    for row in pmf:
        end = np.argmax(np.cumsum(row) >= 1.0 - TAIL_MASS) + 1
        assert np.all(row[end:] == 0.0)
    ends = [np.argmax(np.cumsum(row) >= 1.0 - TAIL_MASS) + 1 for row in pmf]
    assert ends[0] < ends[1] == pmf.shape[1]
    np.testing.assert_allclose(pmf[0, : ends[0]], poisson.pmf(np.arange(ends[0]), 20.0), rtol=1e-9, atol=1e-15)
