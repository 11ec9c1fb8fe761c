"""The label-variance floor of strata whose sample holds no positive (:mod:`labelwise.estimators.label_floor`)."""

from itertools import combinations

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import beta

import labelwise as lw
from labelwise.estimators import stratified_moments
from labelwise.estimators.label_floor import (
    floor_stratum_covariance,
    label_variance_floor,
    stratum_slope_moments,
)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (0, 4), (1, 4), (4, 4), (3, 17)])
def test_floor_is_n_times_the_jeffreys_posterior_variance(k, n):
    positive = np.r_[np.ones(k), np.zeros(n - k)]
    floor = label_variance_floor(positive, np.zeros(n, dtype=np.int64), 2)
    assert floor[0] == pytest.approx(n * beta(k + 0.5, n - k + 0.5).var(), rel=1e-12)
    assert floor[1] == 0.0  # no label in stratum 1


def test_slope_moments_are_each_strata_mean_of_b_b_transposed():
    # F1's loss is [y f, (y + f) / 2]: b = [f, 1/2]
    pool = lw.Pool.from_arrays(None, preds=np.array([1, 0, 0, 1, 1]), probs=np.full(5, 0.5),
                               labels=np.zeros(5, dtype=int))
    measure = lw.make_measure("f1", pool)
    strata = np.array([0, 0, 0, 1, 1])
    got = stratum_slope_moments(measure, pool.outputs(), strata, 2)
    b = np.stack([pool.outputs().preds[:, 0], np.full(5, 0.5)], axis=1).astype(float)
    for h in range(2):
        np.testing.assert_allclose(got[h], b[strata == h].T @ b[strata == h] / np.sum(strata == h), rtol=1e-12)


def test_floor_only_raises_variances_and_keeps_larger_ones():
    S = np.array([[[0.5, 0.1], [0.1, 0.0]], [[0.0, 0.0], [0.0, 2.0]]])
    moments = np.array([[[1.0, 0.0], [0.0, 1.0]]] * 2)
    positive = np.zeros(6)
    strata = np.array([0, 0, 0, 1, 1, 1])
    out = floor_stratum_covariance(S, moments, np.eye(2), positive, strata)
    floor = label_variance_floor(positive, strata, 2)
    np.testing.assert_array_equal(out[:, 0, 1], S[:, 0, 1])
    np.testing.assert_allclose(np.einsum("hii->hi", out), np.fmax(np.einsum("hii->hi", S), floor[:, None]))


def _rare_strata_pool():
    """Two strata of 8 items: stratum 0 holds one positive the system misses, stratum 1 none."""
    labels = np.zeros(16, dtype=int)
    labels[0] = 1
    pool = lw.Pool.from_arrays(None, preds=np.zeros(16, dtype=int), probs=np.full(16, 0.1), labels=labels)
    return pool, np.repeat([0, 1], 8)


@pytest.mark.parametrize("floored", [True, False])
def test_exact_coverage_of_accuracy_when_a_stratum_sample_misses_its_one_error(floored):
    # every sample of 3 of stratum 0's 8 items (stratum 1 has no error: any 3 of its items give the same losses);
    # the normal interval for accuracy covers in every sample with the floor, and only when the error is drawn
    # (3 / 8 of the samples) without it
    pool, strata = _rare_strata_pool()
    measure = lw.make_measure("accuracy", pool)
    truth = 1 - 1 / 16
    sizes = np.array([8, 8])
    z = ndtri(0.975)
    moments = stratum_slope_moments(measure, pool.outputs(), strata, 2)
    covered = []
    for chosen in combinations(range(8), 3):
        items = np.r_[chosen, 8, 9, 10]
        y = pool.labels[items]
        floor = {"slope_moments": moments, "positive": y == 1} if floored else {}
        _, G, cov, _ = stratified_moments(measure, measure.loss(pool.outputs(items), y), strata[items], sizes,
                                          **floor)
        covered.append(abs(G[0] - truth) <= z * np.sqrt(cov[0, 0]))
    assert np.mean(covered) == (1.0 if floored else 3 / 8)



@pytest.mark.parametrize("names", ["accuracy", "f1,precision"])
def test_an_undefined_covariance_stays_undefined(names):
    # one label per stratum: no stratum's variance can be estimated (the plug-in S is NaN), and a floor must not
    # make it look defined (for several components: a finite diagonal beside NaN covariances); the system
    # predicts every item positive, so the measures and their Jacobians are defined
    rare, strata = _rare_strata_pool()
    pool = lw.Pool.from_arrays(None, preds=np.ones(16, dtype=int), probs=np.full(16, 0.9), labels=rare.labels)
    measure = lw.make_measure(names, pool)
    moments = stratum_slope_moments(measure, pool.outputs(), strata, 2)
    items = np.array([1, 9])
    y = pool.labels[items]
    losses = measure.loss(pool.outputs(items), y)
    _, _, plain, _ = stratified_moments(measure, losses, strata[items], np.array([8, 8]))
    _, _, floored, _ = stratified_moments(measure, losses, strata[items], np.array([8, 8]), slope_moments=moments,
                                          positive=y == 1)
    assert np.isfinite(measure.jacobian(measure.loss(pool.outputs(items), y).mean(axis=0))).all()
    assert np.isnan(plain).all() and np.isnan(floored).all()
    m = measure.size
    S = np.full((2, m, m), np.nan)
    out = floor_stratum_covariance(S, moments, np.eye(m, measure.dim), np.zeros(2), np.array([0, 1]))
    assert np.isnan(out).all()


def test_slope_moments_with_counts_and_an_empty_stratum_are_each_strata_weighted_mean():
    # three systems (d = 18 for f1,precision,recall), weighted rows, stratum 2 empty: its moments are 0
    pool = lw.make_pool(n_items=3_000, prevalence=0.2, n_systems=3, seed=2)
    measure = lw.make_measure("f1,precision,recall", pool, "all")
    rng = np.random.default_rng(3)
    strata = rng.choice([0, 1, 3], size=pool.n_items)
    counts = rng.integers(1, 5, pool.n_items)
    n = pool.n_items
    b = measure.loss(pool.outputs(), np.ones(n, dtype=int)) - measure.loss(pool.outputs(), np.zeros(n, dtype=int))
    got = stratum_slope_moments(measure, pool.outputs(), strata, 4, counts)
    assert got.shape == (4, measure.dim, measure.dim)
    for h in (0, 1, 3):
        rows = strata == h
        want = np.einsum("j,jd,je->de", counts[rows], b[rows], b[rows]) / counts[rows].sum()
        np.testing.assert_allclose(got[h], want, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got[2], 0.0)
