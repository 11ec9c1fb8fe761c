"""The round-weighted estimator's design-based covariance: exact on a Poisson sample enumerated in full."""

import itertools

import numpy as np
import pytest

from labelwise.estimators import round_weights, rounds_plugin_covariance


def test_plugin_covariance_is_unbiased_for_a_poisson_round():
    """Every subset S of a 5-item pool with independent inclusions b: E[V-hat] = Var(sum_S u / b) exactly."""
    b = np.array([0.9, 0.5, 0.3, 0.2, 1.0])
    u = np.array([[1.0, 0.5], [-2.0, 1.0], [0.5, 0.0], [3.0, -1.0], [1.5, 2.0]])
    mean_cov = np.zeros((2, 2))
    second = np.zeros((2, 2))
    for mask in itertools.product([False, True], repeat=b.size):
        s = np.array(mask)
        p = np.prod(np.where(s, b, 1 - b))
        total = (u[s] / b[s, None]).sum(axis=0)
        second += p * np.outer(total, total)
        mean_cov += p * rounds_plugin_covariance(u[s], np.zeros(s.sum(), dtype=int), b[s], np.ones(1))
    variance = second - np.outer(u.sum(axis=0), u.sum(axis=0))
    np.testing.assert_allclose(mean_cov, variance, rtol=1e-12, atol=1e-12)


def test_plugin_covariance_weights_each_round_by_its_squared_weight():
    u = np.array([[1.0], [2.0], [3.0]])
    rounds = np.array([0, 1, 1])
    b = np.array([0.5, 0.25, 1.0])
    w = round_weights(np.array([1, 2]), gamma=1.0)  # n_r m_r: 1 * 1 and 2 * 3, normalised
    assert w == pytest.approx([1 / 7, 6 / 7])
    expected = w[0] ** 2 * 0.5 / 0.25 * 1.0 + w[1] ** 2 * 0.75 / 0.0625 * 4.0  # the certain item adds nothing
    assert rounds_plugin_covariance(u, rounds, b, w)[0, 0] == pytest.approx(expected)


def _one_round_difference(losses, b, predicted, mask):
    """rounds_moments on the subset ``mask`` of a one-round Poisson sample with a fixed prediction."""
    from labelwise.estimators import rounds_moments
    from labelwise.measures import Accuracy

    measure = Accuracy()
    s = np.flatnonzero(mask)
    n = losses.shape[0]
    return rounds_moments(measure, losses[s], np.zeros(s.size, dtype=int), b[s, None], n, 0.0,
                          predicted[s, None, :], predicted.sum(axis=0)[None, :])


def test_difference_estimator_is_unbiased_whatever_the_prediction():
    """Every subset of a 5-item pool: E[R-hat] = R, and the design-based covariance of the residuals is
    unbiased for Var(R-hat), exactly, for a poor prediction too."""
    losses = np.array([[1.0], [0.0], [1.0], [1.0], [0.0]])
    b = np.array([0.9, 0.5, 0.3, 0.2, 0.6])
    predicted = np.array([[0.2], [0.9], [0.5], [0.0], [0.4]])  # far from the losses
    mean_R, second, mean_cov = 0.0, 0.0, 0.0
    for mask in itertools.product([False, True], repeat=b.size):
        m = np.array(mask)
        p = np.prod(np.where(m, b, 1 - b))
        R, _, w, J = _one_round_difference(losses, b, predicted, m)
        mean_R += p * R[0]
        second += p * R[0] ** 2
        residuals = (losses[m] - predicted[m]) @ J.T / losses.shape[0]
        mean_cov += p * rounds_plugin_covariance(residuals, np.zeros(m.sum(), dtype=int), b[m], w)[0, 0]
    truth = losses.mean()
    assert mean_R == pytest.approx(truth, abs=1e-12)
    assert mean_cov == pytest.approx(second - truth**2, abs=1e-12)


def test_difference_estimator_with_a_perfect_prediction_is_exact():
    losses = np.array([[1.0], [0.0], [1.0], [1.0], [0.0]])
    b = np.array([0.9, 0.5, 0.3, 0.2, 0.6])
    R, cov, _, _ = _one_round_difference(losses, b, losses.copy(), np.array([True, False, True, False, False]))
    assert R[0] == pytest.approx(0.6)
    assert cov[0, 0] == pytest.approx(0.0)


def test_a_draw_beyond_the_measure_range_is_held_to_it():
    """Item 1 reached at b = 1e-6 in round 0 and drawn at b = 0.5 in round 1 (item 0: drawn in round 0 at 0.5):
    round 0's term of item 1 is the variance of a jump held to the measure's range (accuracy: 1), the other
    terms are the usual ones."""
    from labelwise.estimators import rounds_moments
    from labelwise.measures import Accuracy

    n_items, b = 1000, np.array([[0.5, 1.0], [1e-6, 0.5]])
    _, cov, w, J = rounds_moments(Accuracy(), np.array([[0.0], [1.0]]), np.array([0, 1]), b, n_items, 0.0)
    assert w == pytest.approx([0.5, 0.5])
    u = J[0, 0] / n_items  # Dg l / N of a loss of 1; item 0's loss is 0
    held = 1.0 * b[1, 0] / w[0]  # span b / w: item 1's draw in round 0 would move the estimate by exactly 1
    assert abs(u) > held  # its first-order jump w u / b exceeds the range
    expected = w[0] ** 2 * (1 / b[1, 0] - 1) * held**2 + w[1] ** 2 * (1 / b[1, 1] - 1) * u**2
    assert cov[0, 0] == pytest.approx(expected, rel=1e-12)
    assert cov[0, 0] < 1e-3 * (w[0] ** 2 * (1 / b[1, 0] - 1) * u**2)  # the unheld term: 1000 times more


def test_jump_limit_is_the_range_over_the_first_order_jump():
    from labelwise.estimators import jump_limit

    limit = jump_limit(np.array([[0.1, 0.02]]), np.array([0.25, 0.0]), np.array([1.0, np.inf]))
    assert limit.shape == (1, 2, 2)
    np.testing.assert_allclose(limit[0, 0], [0.4, np.inf])  # 0.25 * 0.4 / 0.1 = 1: the whole range
    assert np.all(np.isinf(limit[0, 1]))  # a round of weight 0 moves nothing


def test_held_second_moment_is_every_round_held_one_by_one():
    """The corrected sum equals the brute force over every (item, round) pair, unbounded components untouched."""
    from labelwise.estimators import JumpBound, held_second_moment

    rng = np.random.default_rng(3)
    e = rng.normal(size=(6, 2)) * np.array([0.05, 5.0])
    coef = rng.uniform(0.0, 2.0, size=(6, 3))
    bound = JumpBound(rng.uniform(1e-4, 0.5, size=(6, 3)), np.array([0.2, 0.3, 0.5]), np.array([1.0, np.inf]))
    brute = np.zeros((2, 2))
    for n in range(6):
        for r in range(3):
            limit = bound.span * bound.inclusion[n, r] / bound.weights[r]
            h = np.clip(e[n], -limit, limit)
            brute += coef[n, r] * np.outer(h, h)
    np.testing.assert_allclose(held_second_moment(e, coef, bound), brute, rtol=1e-12)
    assert held_second_moment(e, coef, bound)[1, 1] == pytest.approx((coef.sum(axis=1) * e[:, 1] ** 2).sum())
