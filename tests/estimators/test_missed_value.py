"""The exceptions left as a count through the measure's own value: exact on small cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import nbinom, norm, poisson

from labelwise.estimators import (
    MissedErrors,
    ModelCovariance,
    count_pmf,
    missed_errors,
    mixture_variance,
)
from labelwise.measures import FBeta


def test_the_count_is_the_posterior_mixture_of_poissons_and_each_error_the_measure_own():
    measure = FBeta()  # F1: R = [TP, (P + PP) / 2] / N
    N = 1000
    R = np.array([7.0, 20.0]) / N
    delta = np.array([0.0, 0.5])  # one missed positive: P one more, TP unchanged
    means, weights = np.array([0.5, 3.0]), np.array([0.75, 0.25])
    out = missed_errors(measure.value, R, delta, N, means, weights)
    k = np.arange(out.pmf.size)
    expected = 0.75 * poisson.pmf(k, 0.5) + 0.25 * poisson.pmf(k, 3.0)
    np.testing.assert_allclose(out.pmf, expected, rtol=1e-12, atol=1e-9)  # rows end where < 1e-9 is left
    assert 1.0 - out.pmf.sum() < 1e-9  # the mass left out, beyond the last count, is negligible
    values = measure.value(R[None] + k[:, None] * delta / N)[:, 0]
    np.testing.assert_allclose(out.errors[:, 0], values[0] - values, rtol=1e-12)
    assert np.all(np.diff(out.errors[:, 0]) > 0)  # each missed positive lowers F1: the estimate is too high


def test_the_count_is_the_exact_count_intervals_with_the_leaves_beta_spread():
    """Two leaves, one overdispersed (its rate Beta-distributed), two posterior points: the pmf is the exact-count
    interval's (count_pmf), the weighted convolution of a Poisson and a negative binomial (scipy's)."""
    measure = FBeta()
    N = 1000
    R, delta = np.array([7.0, 20.0]) / N, np.array([0.0, 0.5])
    means, weights, d = np.array([[0.5, 1.0], [2.0, 0.3]]), np.array([0.6, 0.4]), np.array([0.0, 4.0])
    out = missed_errors(measure.value, R, delta, N, means, weights, d)
    np.testing.assert_array_equal(out.pmf, count_pmf(means, weights, d))
    n = 400
    expected = sum(w * np.convolve(poisson.pmf(np.arange(n), m[0]), nbinom.pmf(np.arange(n), m[1] / 4.0, 0.2))[:n]
                   for m, w in zip(means, weights, strict=True))
    np.testing.assert_allclose(out.pmf, expected[:out.pmf.size], rtol=1e-10, atol=1e-9)
    assert 1.0 - out.pmf.sum() < 1e-9


def test_a_count_of_thousands_keeps_its_distribution():
    """5000 exceptions expected: the count is close to Normal(5000, 5000), not taken at a cap below it."""
    measure = FBeta()
    N = 10**6
    out = missed_errors(measure.value, np.array([100.0, 6000.0]) / N, np.array([0.0, 0.5]), N, np.array([5000.0]),
                        np.ones(1))
    k = np.arange(out.pmf.size)
    assert out.pmf.sum() == pytest.approx(1.0, abs=1e-9)
    assert out.pmf @ k == pytest.approx(5000.0, rel=1e-6)
    assert out.pmf @ (k - 5000.0) ** 2 == pytest.approx(5000.0, rel=1e-3)


def test_mixture_interval_covers_the_count_cases_at_the_level():
    """The returned variance's normal interval covers the three cases, the missed one count by count, with
    probability exactly ``level`` (enumerated with scipy's normal)."""
    base = np.array([0.01**2])
    pmf = np.array([0.5, 0.3, 0.15, 0.05])
    errors = np.array([[0.0], [0.04], [0.07], [0.09]])
    model = ModelCovariance(full=np.zeros((1, 1)), modal=np.zeros((1, 1)), miss=np.zeros(1), exceptions=1.0,
                            hits=0.1)
    full = base + 0.0  # no more than the usual case's: the hit case takes base
    var = mixture_variance(base, full, model, 0.95, MissedErrors(pmf, errors))
    h = 1.959963984540054 * np.sqrt(var[0])
    p_none, p_no_hit = pmf[0], np.exp(-0.1)
    sd = 0.01

    def inside(mean: float) -> float:
        return norm.cdf((h - mean) / sd) - norm.cdf((-h - mean) / sd)

    covered = (p_none * inside(0.0) + (p_no_hit - p_none) * sum(p / (1 - pmf[0]) * inside(e[0])
                                                                for p, e in zip(pmf[1:], errors[1:], strict=True))
               + (1 - p_no_hit) * inside(0.0))
    assert covered == pytest.approx(0.95, abs=1e-9)


def test_without_the_count_the_mixture_is_unchanged():
    """``missed=None`` keeps the one-normal missed case: its variance base + miss / P(K > 0)."""
    base, model = np.array([1e-4]), ModelCovariance(np.zeros((1, 1)), np.zeros((1, 1)), np.array([4e-4]), 2.0, 0.0)
    var = mixture_variance(base, base + 4e-4, model, 0.95)
    p_none = np.exp(-2.0)
    missed_sd = np.sqrt(base[0] + 4e-4 / (1 - p_none))
    h = 1.959963984540054 * np.sqrt(var[0])
    covered = p_none * (2 * norm.cdf(h / 0.01) - 1) + (1 - p_none) * (2 * norm.cdf(h / missed_sd) - 1)
    assert covered == pytest.approx(0.95, abs=1e-9)
