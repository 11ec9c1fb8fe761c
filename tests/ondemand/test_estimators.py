"""Exact checks of the on-demand estimators by enumerating every sample on tiny universes.

Chaganty et al., "Importance sampling for unbiased on-demand evaluation of
knowledge base population", EMNLP 2017, Sec. 3.2-3.3.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from labelwise.ondemand.control_variate import own_region
from labelwise.ondemand.estimators import (
    f1_delta,
    finite_population_correction,
    joint_precision,
    mixture_weights,
    pooled_recall,
    ratio_estimate,
    simple_precision,
)
from labelwise.ondemand.intervals import wilson_interval
from labelwise.ondemand.planning import exchangeable_variance, predicted_joint_variance
from labelwise.ondemand.universe import is_uniform, stack_systems, system_distribution

# 7 candidate instances; correct ones: 0, 2, 3, 5
TRUTH = np.array([1, 0, 1, 1, 0, 1, 0])
K = TRUTH.size
MEMBERS = [np.array([0, 1, 2, 3]), np.array([2, 3, 4]), np.array([4, 5, 6])]
P = stack_systems([system_distribution(mb, K) for mb in MEMBERS])
SIZES = np.array([mb.size for mb in MEMBERS])


def enumerate_estimator(every_sample, fn, n):
    values, variances = [], []
    fpc = finite_population_correction(SIZES, np.array(n), is_uniform(P))
    for idx, grp in every_sample(MEMBERS, n):
        est = fn(idx, grp, TRUTH[idx].astype(float), np.array(n), fpc)
        values.append(est.value)
        variances.append(est.var)
    return np.array(values), np.array(variances)


TRUE_PRECISION = P @ TRUTH


@pytest.mark.parametrize("n", [(2, 1, 2), (3, 2, 2), (1, 3, 1)])
def test_simple_precision_unbiased_with_unbiased_variance(n, every_sample):
    vals, vars_ = enumerate_estimator(every_sample, lambda i, g, f, nn, fpc: simple_precision(g, f, nn, fpc), n)
    np.testing.assert_allclose(vals.mean(axis=0), TRUE_PRECISION)
    # the variance estimator is unbiased (systems with n_j >= 2)
    exact = vals.var(axis=0)
    ok = np.array(n) >= 2
    np.testing.assert_allclose(vars_.mean(axis=0)[ok], exact[ok], atol=1e-12)


@pytest.mark.parametrize("scheme", ["overlap", "size", "uniform"])
@pytest.mark.parametrize("n", [(2, 2, 2), (3, 1, 2), (1, 2, 3)])
def test_joint_precision_unbiased_by_enumeration(scheme, n, every_sample):
    vals, vars_ = enumerate_estimator(every_sample,
        lambda i, g, f, nn, fpc: joint_precision(P, i, g, f, nn, fpc, scheme, control_variate=False), n)
    np.testing.assert_allclose(vals.mean(axis=0), TRUE_PRECISION, atol=1e-12)
    # the variance formula sum_j fpc_j S_j^2 / n_j is the exact variance when every n_j >= 2,
    # and the within-sample variances estimate it unbiasedly
    if min(n) >= 2:
        np.testing.assert_allclose(vars_.mean(axis=0), vals.var(axis=0), atol=1e-12)


def test_joint_precision_weights_follow_overlap():
    W = mixture_weights(P, np.array([2, 2, 2]), "overlap")
    assert W[0, 2] == 0.0 and W[2, 0] == 0.0  # disjoint systems share nothing
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    # identical systems: w proportional to n_j
    P2 = np.vstack([P[0], P[0]])
    np.testing.assert_allclose(mixture_weights(P2, np.array([1, 3]))[0], [0.25, 0.75])


def test_joint_precision_beats_simple_on_overlapping_systems(every_sample):
    n = (2, 2, 2)
    simple, _ = enumerate_estimator(every_sample, lambda i, g, f, nn, fpc: simple_precision(g, f, nn, fpc), n)
    joint, _ = enumerate_estimator(every_sample,
        lambda i, g, f, nn, fpc: joint_precision(P, i, g, f, nn, fpc, control_variate=False), n)
    assert joint.var(axis=0)[1] < simple.var(axis=0)[1]  # system 1 overlaps both others


def test_own_region_is_what_no_other_sampled_system_predicts():
    alone = own_region(P, np.array([2, 2, 2]))
    np.testing.assert_array_equal([np.flatnonzero(row) for row in alone[[0, 2]]], [[0, 1], [5, 6]])
    assert not alone[1].any()
    # a system without draws covers nothing: system 1's instance 4 is then system 2's alone
    assert own_region(P, np.array([2, 0, 2]))[2, 4]


def test_control_variate_is_exact_when_every_instance_is_correct(every_sample):
    """System 1's output is all shared: at precision 1 its adjusted estimate is 1 in every sample."""
    n = (2, 2, 2)
    ones = np.ones(K)
    fpc = finite_population_correction(SIZES, np.array(n), is_uniform(P))
    plain, adjusted = [], []
    for idx, grp in every_sample(MEMBERS, n):
        plain.append(joint_precision(P, idx, grp, ones[idx], np.array(n), fpc, control_variate=False).value)
        est = joint_precision(P, idx, grp, ones[idx], np.array(n), fpc, control_variate=True)
        assert est.var[1] == pytest.approx(0.0, abs=1e-24)
        adjusted.append(est.value)
    np.testing.assert_allclose(np.array(adjusted)[:, 1], 1.0)
    assert np.var(plain, axis=0)[1] > 0.01  # the plain estimator's weights vary even at precision 1


def _simulated_universe(seed=0):
    """Three overlapping systems over 120 instances; the second is nearly all correct."""
    rng = np.random.default_rng(seed)
    truth = rng.random(120) < 0.5
    members = [np.arange(0, 60), np.flatnonzero(truth[30:100]) + 30, np.arange(50, 120)]
    members[1] = np.union1d(members[1], [31 + int(np.flatnonzero(~truth[31:100])[0])])  # one wrong instance
    return truth.astype(float), stack_systems([system_distribution(mb, truth.size) for mb in members])


@pytest.mark.slow
def test_control_variate_nearly_unbiased_with_honest_variance_and_lower_mse():
    """3000 seeded samples of (20, 10, 20) uniform draws without replacement: the regression estimator's
    bias is within 3 standard errors of 0, its variance estimate matches its spread within 15%, and its MSE
    on the high-precision system is a fraction of the plain estimator's."""
    truth, PP = _simulated_universe()
    true = PP @ truth
    n = np.array([20, 10, 20])
    support = (PP > 0).sum(axis=1)
    fpc = finite_population_correction(support, n, is_uniform(PP))
    rng = np.random.default_rng(1)
    plain, adj, var = [], [], []
    for _ in range(3000):
        idx = np.concatenate([rng.choice(np.flatnonzero(PP[j]), n[j], replace=False) for j in range(3)])
        grp = np.repeat(np.arange(3), n)
        plain.append(joint_precision(PP, idx, grp, truth[idx], n, fpc, control_variate=False).value)
        est = joint_precision(PP, idx, grp, truth[idx], n, fpc, control_variate=True)
        adj.append(est.value)
        var.append(est.var)
    adj, plain, var = np.array(adj), np.array(plain), np.array(var)
    se = adj.std(axis=0) / np.sqrt(len(adj))
    assert np.all(np.abs(adj.mean(axis=0) - true) <= 3 * se + 1e-3)
    np.testing.assert_allclose(var.mean(axis=0), adj.var(axis=0), rtol=0.15)
    mse = ((adj - true) ** 2).mean(axis=0)
    mse_plain = ((plain - true) ** 2).mean(axis=0)
    assert mse[1] < 0.5 * mse_plain[1]
    assert np.all(mse <= 1.05 * mse_plain)


def test_joint_precision_nan_when_support_not_covered():
    idx, grp = np.array([0, 1]), np.array([0, 0])
    est = joint_precision(P, idx, grp, TRUTH[idx].astype(float), np.array([2, 0, 0]), np.ones(3))
    assert np.isfinite(est.value[0]) and np.isnan(est.value[1]) and np.isnan(est.value[2])


def test_pooled_recall_exact_on_census_and_nearly_unbiased(every_sample):
    pool_correct = TRUTH * (P.sum(axis=0) > 0)
    true_nu = ((P > 0) * pool_correct).sum(axis=1) / pool_correct.sum()
    # census: every instance of every system drawn -> exact
    n = tuple(SIZES)
    vals, vars_ = enumerate_estimator(every_sample, lambda i, g, f, nn, fpc: pooled_recall(P, i, g, f, nn, fpc), n)
    np.testing.assert_allclose(vals[0], true_nu)
    np.testing.assert_allclose(vars_[0], 0.0, atol=1e-15)
    # small samples: a ratio estimator, bias well below its standard deviation
    vals, _ = enumerate_estimator(every_sample, lambda i, g, f, nn, fpc: pooled_recall(P, i, g, f, nn, fpc), (3, 2, 2))
    ok = np.isfinite(vals).all(axis=1)
    assert ok.mean() > 0.9  # samples without any correct draw leave nu undefined
    bias = vals[ok].mean(axis=0) - true_nu
    assert np.all(np.abs(bias) < 0.5 * vals[ok].std(axis=0) + 1e-12)


def test_pooled_recall_numerator_and_denominator_unbiased(every_sample):
    # nu_i = A_i / B: E[A_i] = sum_x u f g_i and E[B] = sum_x u f over the pool (u = 1 here)
    n = np.array([2, 2, 2])
    fpc = finite_population_correction(SIZES, n, is_uniform(P))
    A, B = [], []
    for idx, grp in every_sample(MEMBERS, tuple(n)):
        est = pooled_recall(P, idx, grp, TRUTH[idx].astype(float), n, fpc)
        q = (n / n.sum()) @ P
        base = (n[grp] / n.sum()) * TRUTH[idx] / q[idx]
        b = sum(base[grp == j].mean() for j in range(3))
        a = np.array([sum((base * (P[i, idx] > 0))[grp == j].mean() for j in range(3)) for i in range(3)])
        if b > 0:
            np.testing.assert_allclose(est.value, a / b)
        A.append(a)
        B.append(b)
    np.testing.assert_allclose(np.mean(B), (TRUTH * (P.sum(axis=0) > 0)).sum())
    np.testing.assert_allclose(np.mean(A, axis=0), ((P > 0) * TRUTH).sum(axis=1))


def test_pool_recall_ratio_unbiased_with_equal_document_sizes():
    # 4 documents with 2 correct instances each; pool holds 2, 1, 0, 2 of them
    a = np.array([[2.0, 1.0, 0.0, 2.0]])
    b = np.array([2.0, 2.0, 2.0, 2.0])
    theta = a.sum() / b.sum()
    vals, vars_ = [], []
    for docs in itertools.combinations(range(4), 2):
        v, var = ratio_estimate(a[:, docs], b[list(docs)], 4, variance="linear")
        vals.append(v[0])
        vars_.append(var[0])
    assert np.mean(vals) == pytest.approx(theta)
    assert np.mean(vars_) == pytest.approx(np.var(vals))  # equal sizes: the linearization is exact
    v, var = ratio_estimate(a, b, 4)
    assert v[0] == pytest.approx(theta) and var[0] == 0.0


def test_f1_delta_matches_finite_difference():
    p, r = np.array([0.7]), np.array([0.4])
    cov = np.array([[0.002, 0.0005], [0.0005, 0.003]])
    f, var = f1_delta(p, r, cov[0, 0], cov[1, 1], cov[0, 1])
    eps = 1e-6
    grad = np.array([(f1_delta(p + eps, r, 0, 0)[0] - f) / eps, (f1_delta(p, r + eps, 0, 0)[0] - f) / eps]).ravel()
    assert f[0] == pytest.approx(2 * 0.28 / 1.1)
    assert var[0] == pytest.approx(grad @ cov @ grad, rel=1e-4)


def test_wilson_interval_reduces_to_binomial_wilson_and_handles_edges():
    lo, hi = wilson_interval(np.array([0.8]), np.array([0.8 * 0.2 / 50]))
    z = 1.959963984540054
    n = 50
    centre = (0.8 + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(0.16 / n + z**2 / (4 * n**2))
    assert lo[0] == pytest.approx(centre - half) and hi[0] == pytest.approx(centre + half)
    # all-correct sample: variance 0, the cap gives a proper one-sided interval
    lo, hi = wilson_interval(np.array([1.0]), np.array([0.0]), ess_cap=np.array([30.0]))
    assert hi[0] == 1.0 and 0.85 < lo[0] < 0.9
    # census: zero width
    lo, hi = wilson_interval(np.array([0.6]), np.array([0.0]), ess_cap=np.array([np.inf]))
    assert lo[0] == hi[0] == 0.6


@pytest.mark.parametrize("scheme", ["overlap", "size", "uniform"])
@pytest.mark.parametrize("n", [(2, 1, 2), (3, 2, 2), (1, 3, 1)])
def test_exchangeable_variance_is_exact_when_every_instance_is_correct(scheme, n, every_sample):
    # with f = 1 everywhere the estimator still varies (draws land in X_i or not); alpha - beta is its variance
    n = np.array(n)
    fpc = finite_population_correction(SIZES, n, is_uniform(P))
    values = np.array([joint_precision(P, idx, grp, np.ones(idx.size), n, fpc, scheme).value
                       for idx, grp in every_sample(MEMBERS, n)])
    alpha, beta = exchangeable_variance(P, n, SIZES, is_uniform(P), scheme)
    np.testing.assert_allclose(values.mean(axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(alpha - beta, values.var(axis=0), atol=1e-12)


@pytest.mark.parametrize("precision", [0.0, 0.3, 0.85])
def test_exchangeable_variance_is_the_planning_variance_at_a_constant_label(precision):
    n = np.array([3, 2, 2])
    alpha, beta = exchangeable_variance(P, n, SIZES, is_uniform(P))
    expected = [predicted_joint_variance(P, n, i, np.full(K, precision), SIZES, is_uniform(P)) for i in range(3)]
    np.testing.assert_allclose(alpha * precision - beta * precision**2, expected, atol=1e-15)
