"""The self-normalized joint precision: exact variance by enumeration, never worse than the own draws.

Chaganty et al., "Importance sampling for unbiased on-demand evaluation of
knowledge base population", EMNLP 2017, Eq. 2, self-normalized with capped
mixture weights (Owen and Zhou, JASA 2000, Thm 2, for stratified draws).
"""

from __future__ import annotations

import itertools
from statistics import NormalDist

import numpy as np
import pytest

from labelwise.ondemand.estimators import (
    _group_sums,
    design_factor,
    finite_population_correction,
    importance_coefficients,
    mixture_weights,
)
from labelwise.ondemand.normalized import capped_weights, normalized_joint_precision
from labelwise.ondemand.planning import (
    exchangeable_variance,
    predicted_joint_variance,
    predicted_simple_variance,
)
from labelwise.ondemand.universe import is_uniform, stack_systems, system_distribution

# three overlapping systems on 6 instances, drawn uniformly without replacement
K = 6
MEMBERS = [np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4]), np.array([2, 3, 4, 5])]
P = stack_systems([system_distribution(mb, K) for mb in MEMBERS])
SIZES = np.array([mb.size for mb in MEMBERS])
WOR = is_uniform(P)
LABELLINGS = np.array(list(itertools.product([0.0, 1.0], repeat=K)))
DRAWS = [(2, 2, 2), (3, 1, 2), (1, 3, 3), (3, 3, 1)]


def linear_part_variance(every_sample, n, truth, W):
    """Enumerated variance of :math:`\\sum_j \\frac1{n_j}\\sum w_{ij} r_i (f - \\pi_i)`, every target."""
    n = np.array(n)
    pi = P @ truth
    values = [_group_sums(importance_coefficients(P, idx, grp, W)[0] * (truth[idx][None, :] - pi[:, None]), grp, n)
              for idx, grp in every_sample(MEMBERS, n)]
    return np.var(values, axis=0)


def own_draws_variance(n, truth):
    return np.array([predicted_simple_variance(n[i], truth, P[i], SIZES[i], True) for i in range(len(MEMBERS))])


@pytest.mark.parametrize("scheme", ["overlap", "size", "uniform"])
@pytest.mark.parametrize("n", DRAWS)
def test_variance_formula_is_the_exact_variance_of_the_linear_part(scheme, n, every_sample):
    truth = LABELLINGS[45]  # 1 0 1 1 0 1
    factor = design_factor(SIZES, np.array(n), WOR)
    W = capped_weights(mixture_weights(P, np.array(n), scheme), np.array(n), factor)
    formula = [predicted_joint_variance(P, np.array(n, dtype=float), i, truth, SIZES, WOR, scheme, normalized=True)
               for i in range(len(MEMBERS))]
    np.testing.assert_allclose(formula, linear_part_variance(every_sample, n, truth, W), atol=1e-12)


@pytest.mark.parametrize("scheme", ["overlap", "size", "uniform"])
@pytest.mark.parametrize("n", DRAWS)
def test_never_worse_than_the_own_draws_for_every_labelling(scheme, n):
    for truth in LABELLINGS:
        joint = [predicted_joint_variance(P, np.array(n, dtype=float), i, truth, SIZES, WOR, scheme, normalized=True)
                 for i in range(len(MEMBERS))]
        assert np.all(np.array(joint) <= own_draws_variance(n, truth) + 1e-15)


def test_without_the_cap_the_bound_fails(every_sample):
    # 'uniform' weights give system 1's single draw as much weight as system 0's three
    n, truth = (3, 1, 2), LABELLINGS[45]
    uncapped = linear_part_variance(every_sample, n, truth, mixture_weights(P, np.array(n), "uniform"))
    assert uncapped[0] > own_draws_variance(n, truth)[0] + 1e-6


def test_capped_weights_meet_the_condition_and_leave_undrawn_targets_alone():
    n = np.array([3.0, 1.0, 0.0])
    factor = design_factor(SIZES, n, WOR)
    W0 = mixture_weights(P, n, "uniform")
    W = capped_weights(W0, n, factor)
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    for i, k in ((0, 1), (1, 0)):
        assert factor[k] * W[i, k] / n[k] <= 2 * factor[i] * W[i, i] / n[i] + 1e-12
    np.testing.assert_array_equal(W[2], W0[2])  # no own draws: nothing to beat
    census = capped_weights(W0, np.array([4.0, 1.0, 0.0]), design_factor(SIZES, np.array([4.0, 1, 0]), WOR))
    np.testing.assert_array_equal(census[0], [1.0, 0.0, 0.0])  # X_0 drawn in full: its own draws are exact


@pytest.mark.parametrize("n", DRAWS)
def test_all_correct_labels_give_precision_one_exactly(n, every_sample):
    n = np.array(n)
    fpc, factor = finite_population_correction(SIZES, n, WOR), design_factor(SIZES, n, WOR)
    for idx, grp in every_sample(MEMBERS, n):
        est = normalized_joint_precision(P, idx, grp, np.ones(idx.size), n, fpc, factor)
        np.testing.assert_allclose(est.value, 1.0, atol=1e-12)
        np.testing.assert_allclose(est.var, 0.0, atol=1e-24)


def count_vectors(n, cells):
    """Every multinomial count vector of ``n`` draws over ``cells`` cells."""
    for cut in itertools.combinations(range(n + cells - 1), cells - 1):
        edges = (-1, *cut, n + cells - 1)
        yield np.diff(edges) - 1


def exact_moments_with_replacement(k, truth, P2, members):
    """Exact mean and MSE of the estimate (and the own-draws one) with ``k`` draws with replacement each."""
    from math import factorial

    n = np.array([k, k])
    ones = np.ones(2)
    mean = np.zeros(2)
    mse = np.zeros(2)
    pi = P2 @ truth
    for counts in itertools.product(*(list(count_vectors(k, mb.size)) for mb in members)):
        prob = 1.0
        for c, mb, p in zip(counts, members, P2, strict=True):
            prob *= factorial(k) * np.prod(p[mb] ** c / [factorial(x) for x in c])
        idx = np.concatenate([np.repeat(mb, c) for mb, c in zip(members, counts, strict=True)])
        grp = np.repeat([0, 1], n)
        value = normalized_joint_precision(P2, idx, grp, truth[idx], n, ones, ones).value
        mean += prob * value
        mse += prob * (value - pi) ** 2
    return mean, mse


def test_bias_is_of_order_one_over_n_and_the_mse_stays_below_the_own_draws():
    # scored systems (drawn with replacement) on 4 instances, overlapping on two
    truth = np.array([1.0, 0.0, 1.0, 1.0])
    members = [np.array([0, 1, 2]), np.array([1, 2, 3])]
    P2 = stack_systems([system_distribution(members[0], 4, np.array([1.0, 2.0, 1.0])),
                        system_distribution(members[1], 4, np.array([1.0, 1.0, 2.0]))])
    pi = P2 @ truth
    bias, mse = {}, {}
    for k in (3, 6, 12):
        mean, mse[k] = exact_moments_with_replacement(k, truth, P2, members)
        bias[k] = np.abs(mean - pi)
        own = pi * (1 - pi) / k
        assert np.all(mse[k] <= own)
    # O(1/n): doubling the draws about halves the bias
    assert np.all(bias[6] <= 0.6 * bias[3]) and np.all(bias[12] <= 0.6 * bias[6])


def test_exchangeable_variance_is_alpha_pi_one_minus_pi():
    n = np.array([3.0, 1.0, 2.0])
    alpha, beta = exchangeable_variance(P, n, SIZES, WOR, normalized=True)
    np.testing.assert_array_equal(alpha, beta)
    for pi in (0.3, 0.9):
        expected = [predicted_joint_variance(P, n, i, np.full(K, pi), SIZES, WOR, normalized=True) for i in range(3)]
        np.testing.assert_allclose(alpha * pi * (1 - pi), expected, rtol=1e-12)


def test_score_interval_of_the_normalized_estimate_covers_a_high_precision_system(near_copy):
    # the near-copy corpus, 1000 seeded runs, tolerance 3 binomial standard errors
    c = near_copy
    fpc, factor = finite_population_correction(c.support, c.n, c.wor), design_factor(c.support, c.n, c.wor)
    alpha, beta = exchangeable_variance(c.P, c.n, c.support, c.wor, normalized=True)
    runs = 1000
    est, coverage, width = c.score_coverage(
        lambda idx, grp, f: normalized_joint_precision(c.P, idx, grp, f, c.n, fpc, factor), alpha, beta,
        seed=11, runs=runs)
    truth_p = c.precision
    assert np.all(coverage >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs))
    rmse = np.sqrt(((est - truth_p) ** 2).mean(axis=0))
    assert np.all(width <= 2 * 3.92 * rmse)
    # and each system's MSE is below the variance of its own draws alone
    z = NormalDist().inv_cdf(0.975)
    own = factor * truth_p * (1 - truth_p) * c.support / (c.support - 1) / c.n
    assert np.all(rmse**2 <= own * (1 + z * np.sqrt(2 / runs)))
