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
