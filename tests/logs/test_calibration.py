"""Spline and isotonic calibration, the weighted expected calibration error, and the weighted regression."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from labelwise.logs import (
    equal_count_bins,
    expected_calibration_error,
    fit_calibration,
    fit_weighted_logistic,
    keep_weights,
)


def test_spline_knots_are_weighted_bin_means_between_the_end_points():
    score = np.array([0.1, 0.2, 0.3, 0.4])
    reward = np.array([0.0, 1.0, 1.0, 1.0])
    weight = np.array([3.0, 1.0, 1.0, 1.0])
    spline = fit_calibration(score, reward, weight, n_bins=2, score_range=(0, 1), reward_range=(0, 1))
    # bins {0.1, 0.2} and {0.3, 0.4} (equal counts); the first's means weight 0.1 three times
    np.testing.assert_allclose(spline.knot_scores, [0, (0.3 + 0.2) / 4, 0.35, 1])
    np.testing.assert_allclose(spline.knot_values, [0, 0.25, 1, 1])
    assert spline(0.35) == pytest.approx(1.0)
    assert spline(0.0625) == pytest.approx(0.125)  # halfway between the first two knots


def test_equal_count_bins_keep_ties_together():
    bins = equal_count_bins([1, 1, 1, 1, 2, 3], 3)
    assert bins[0] == bins[1] == bins[2] == bins[3]
    assert len(np.unique(bins)) <= 3 and bins[5] > bins[3]


def test_isotonic_is_weighted_pool_adjacent_violators():
    iso = fit_calibration([1, 2, 3, 4], [1, 0, 1, 1], [1, 3, 1, 1], method="isotonic")
    np.testing.assert_allclose(iso([1, 2, 3, 4]), [0.25, 0.25, 1, 1])


def test_integer_weights_are_repeated_rows():
    rng = np.random.default_rng(2)
    prob = rng.uniform(size=50)
    reward = (rng.uniform(size=50) < prob).astype(float)
    weight = rng.integers(1, 4, 50)
    repeated = np.repeat(np.arange(50), weight)
    assert expected_calibration_error(prob, reward, weight) == pytest.approx(
        expected_calibration_error(prob[repeated], reward[repeated]))
    iso, iso_rows = (fit_calibration(prob, reward, weight, method="isotonic"),
                     fit_calibration(prob[repeated], reward[repeated], method="isotonic"))
    np.testing.assert_allclose(iso(prob), iso_rows(prob))
    np.testing.assert_allclose(fit_weighted_logistic(prob[:, None], reward, weight),
                               fit_weighted_logistic(prob[repeated, None], reward[repeated]))


def test_ece_of_a_constant_prediction_is_its_distance_to_the_mean_reward():
    reward = np.array([1.0, 0.0, 1.0, 1.0])
    assert expected_calibration_error(np.full(4, 0.5), reward, n_bins=1) == pytest.approx(0.25)
    assert expected_calibration_error(np.full(4, 0.75), reward) == pytest.approx(0.0)


def test_weighted_logistic_solves_its_first_order_condition():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(400, 2))
    reward = (rng.uniform(size=400) < expit(x @ [1.0, -2.0] - 1)).astype(float)
    weight = keep_weights(reward, 0.2)
    beta = fit_weighted_logistic(x, reward, weight, ridge=0.0)
    X = np.column_stack([np.ones(400), x])
    np.testing.assert_allclose(X.T @ (weight * (expit(X @ beta) - reward)), 0.0, atol=1e-8)


def test_weighted_spline_recovers_the_calibration_of_the_full_log():
    """Kept at l = 1/20 and weighted, the control points estimate the full log's bin means: the spline's
    error against the true conditional mean stays within what the bins' sampling error allows."""
    rng = np.random.default_rng(6)
    n = 200_000
    score = rng.uniform(size=n)
    truth = 0.2 * score**2  # miscalibrated raw scores: the true mean reward is 0.2 s^2
    reward = (rng.uniform(size=n) < truth).astype(float)
    kept = (reward != 0) | (rng.uniform(size=n) < 0.05)
    weight = keep_weights(reward[kept], 0.05)
    spline = fit_calibration(score[kept], reward[kept], weight, n_bins=10, score_range=(0, 1),
                             reward_range=(0, 1))
    unweighted = fit_calibration(score[kept], reward[kept], n_bins=10, score_range=(0, 1), reward_range=(0, 1))
    grid = np.linspace(0.1, 0.9, 9)
    # a bin holds ~ n/10 logged rows, of which ~ 1/20 of the zeros are kept: its mean's standard error is
    # about sqrt(r (1 - r) / (kept zeros)) <= sqrt(0.2 / 900) ~ 0.015; the spline also bends between knots
    assert np.max(np.abs(spline(grid) - 0.2 * grid**2)) < 0.05
    assert np.min(unweighted(grid[4:]) - 0.2 * grid[4:] ** 2) > 0.1  # unweighted: rewards over-represented

