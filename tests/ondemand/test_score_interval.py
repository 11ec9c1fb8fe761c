"""The score interval of the joint precision estimator: its design variance at the hypothesized precision.

Chaganty et al., "Importance sampling for unbiased on-demand evaluation of
knowledge base population", EMNLP 2017, Eq. 2; the variance is checked
exactly by enumerating every sample of a tiny universe (in test_estimators.py), the
interval by a seeded simulation with a binomial tolerance.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from labelwise.ondemand.estimators import finite_population_correction, joint_precision
from labelwise.ondemand.intervals import (
    floored_normal_interval,
    score_interval,
    wilson_interval,
)
from labelwise.ondemand.planning import exchangeable_variance

Z = NormalDist().inv_cdf(0.975)


def test_score_interval_of_a_proportion_is_the_union_of_wilson_and_normal():
    n, p = np.array([20.0, 20.0, 50.0]), np.array([0.9, 0.5, 1.0])
    var = p * (1 - p) / n
    lo, hi = score_interval(p, var, 1 / n, 1 / n, 0.95, np.inf)
    w_lo, w_hi = wilson_interval(p, var, 0.95, n)  # Wilson at n draws
    n_lo, n_hi = floored_normal_interval(p, var, 0.95)
    np.testing.assert_allclose(lo, np.minimum(w_lo, n_lo), atol=1e-12)
    np.testing.assert_allclose(hi, np.maximum(w_hi, n_hi), atol=1e-12)
    # textbook Wilson lower end at p = 0.9, n = 20 (below the normal one); the normal upper end is clipped at 1
    centre = (0.9 + Z**2 / 40) / (1 + Z**2 / 20)
    half = Z / (1 + Z**2 / 20) * np.sqrt(0.9 * 0.1 / 20 + Z**2 / 1600)
    assert (lo[0], hi[0]) == (pytest.approx(centre - half, abs=1e-12), 1.0)
    # all-correct draws: the plug-in variance is 0, the score interval still reaches down
    assert lo[2] == pytest.approx(1 / (1 + Z**2 / 50), abs=1e-12)


def test_score_interval_census_is_a_point():
    lo, hi = score_interval(np.array([0.4]), np.array([0.0]), np.array([0.0]), np.array([0.0]), 0.95, np.inf)
    assert lo[0] == hi[0] == pytest.approx(0.4)


def test_score_interval_covers_where_the_plug_in_interval_does_not(near_copy):
    # the near-copy corpus: the plug-in normal interval of the first system under-covers (0.91)
    c = near_copy
    fpc = finite_population_correction(c.support, c.n, c.wor)
    alpha, beta = exchangeable_variance(c.P, c.n, c.support, c.wor)
    runs = 1000
    est, coverage, width = c.score_coverage(lambda idx, grp, f: joint_precision(c.P, idx, grp, f, c.n, fpc),
                                            alpha, beta, seed=7, runs=runs)
    assert np.all(coverage >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs))
    rmse = np.sqrt(((est - c.precision) ** 2).mean(axis=0))
    assert np.all(width <= 2 * 3.92 * rmse)
