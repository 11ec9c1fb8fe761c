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
from labelwise.ondemand.floors import own_region_floor
from labelwise.ondemand.intervals import (
    floored_normal_interval,
    score_interval,
    wilson_interval,
)
from labelwise.ondemand.planning import exchangeable_variance
from labelwise.ondemand.universe import is_uniform, stack_systems, system_distribution

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


def test_score_interval_covers_where_the_plug_in_interval_does_not():
    # a high-precision system (0.945, 40 draws) and a near-copy of it with 10% of its output swapped for
    # instances of precision 0.3 (10 draws): the plug-in normal interval of the first under-covers (0.91)
    rng = np.random.default_rng(7)
    size, shared, own = 400, 360, 40
    truth = np.zeros(size + own)
    truth[: round(0.95 * shared)] = 1
    truth[shared: shared + round(0.9 * (size - shared))] = 1
    truth[size: size + round(0.3 * own)] = 1
    members = [np.arange(size), np.r_[np.arange(shared), np.arange(size, size + own)]]
    P2 = stack_systems([system_distribution(mb, truth.size) for mb in members])
    support, wor, n = np.array([size, shared + own]), is_uniform(P2), np.array([40, 10])
    fpc = finite_population_correction(support, n, wor)
    alpha, beta = exchangeable_variance(P2, n, support, wor)
    grp = np.repeat([0, 1], n)
    truth_p = P2 @ truth
    runs = 1000
    est, inside, width = np.empty((runs, 2)), np.zeros(2), np.zeros(2)
    for r in range(runs):
        idx = np.concatenate([rng.choice(mb, k, replace=False) for mb, k in zip(members, n, strict=True)])
        e = joint_precision(P2, idx, grp, truth[idx], n, fpc)
        var = np.maximum(e.var, own_region_floor(P2, idx, grp, truth[idx], n))
        lo, hi = score_interval(e.value, var, alpha, beta, 0.95, e.ess)
        est[r], inside, width = e.value, inside + ((lo <= truth_p) & (truth_p <= hi)), width + hi - lo
    coverage = inside / runs
    assert np.all(coverage >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs))
    rmse = np.sqrt(((est - truth_p) ** 2).mean(axis=0))
    assert np.all(width / runs <= 2 * 3.92 * rmse)
