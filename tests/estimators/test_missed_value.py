"""The exceptions left as a count through the measure's own value: exact on small cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm, poisson

from labelwise.estimators import (
    MissedErrors,
    ModelCovariance,
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
    expected[-1] += 1.0 - expected.sum()
    np.testing.assert_allclose(out.pmf, expected, rtol=1e-12, atol=1e-15)
    assert out.pmf.size > 3.0 + 10 * np.sqrt(3.0)  # far enough that the last count takes a negligible mass
    values = measure.value(R[None] + k[:, None] * delta / N)[:, 0]
    np.testing.assert_allclose(out.errors[:, 0], values[0] - values, rtol=1e-12)
    assert np.all(np.diff(out.errors[:, 0]) > 0)  # each missed positive lowers F1: the estimate is too high


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
