"""Spline and isotonic calibration, the weighted expected calibration error, and the weighted regression."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import betabinom

from labelwise.logs import (
    cross_validated_ece,
    equal_count_bins,
    expected_calibration_error,
    fit_calibration,
    fit_weighted_logistic,
    keep_weights,
    shrunk_rates,
)
from labelwise.oracle.calibration import STRENGTHS


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



def test_shrunk_bin_without_a_positive_keeps_its_prior_rate_share():
    """Two bins, four labels: the labels cannot reject the largest strength s = 500, so bin 1 (scores 0.1
    and 0.2 weighted 1 and 3, both negative) gets ``s phi_1 / (s + n_1)`` with ``phi_1 = 0.7 / 4`` and Kish
    size ``n_1 = 4^2 / 10 = 1.6`` (the weight 3 is not three labels), not 0; bin 2 (0.3 and 0.4, one
    positive) ``(s 0.35 + 1) / (s + 2)``; the end points are the raw probabilities 0 and 1."""
    spline = fit_calibration([0.1, 0.2, 0.3, 0.4], [0, 0, 0, 1], [1.0, 3.0, 1.0, 1.0], n_bins=2, shrink=True)
    s = STRENGTHS[-1]
    assert spline.strength == s
    np.testing.assert_allclose(spline.knot_scores, [0, 0.175, 0.35, 1])
    np.testing.assert_allclose(spline.knot_values, [0, s * 0.175 / (s + 1.6), (s * 0.35 + 1) / (s + 2), 1])
    assert spline(0.0875) == pytest.approx(spline.knot_values[1] / 2)  # halfway to the first knot, not 0
    unshrunk = fit_calibration([0.1, 0.2, 0.3, 0.4], [0, 0, 0, 1], [1.0, 3.0, 1.0, 1.0], n_bins=2,
                               score_range=(0, 1), reward_range=(0, 1))
    assert unshrunk(0.0875) == 0.0


def test_labels_that_reject_the_scores_choose_the_most_likely_strength():
    """A bin at raw rate 0.1 whose 40 labels hold 30 positives rejects s = 500; the strength is then the
    candidate with the largest beta-binomial likelihood (computed here with scipy), and the bin's value the
    posterior mean under it."""
    phi, n, k = np.array([0.1, 0.5]), np.array([40.0, 40.0]), np.array([30.0, 20.0])
    values, strength = shrunk_rates(phi, k / n, n)
    loglik = [betabinom.logpmf(k, n, s * phi, s * (1 - phi)).sum() for s in STRENGTHS]
    assert strength == STRENGTHS[np.argmax(loglik)] < STRENGTHS[-1]
    # the posterior means (0.75-ish and 0.5) are out of order: pooled by their weights s + n
    raw = (strength * phi + k) / (strength + n)
    assert raw[0] > raw[1]
    np.testing.assert_allclose(values, np.full(2, raw @ (strength + n) / (2 * strength + n.sum())))


@pytest.mark.parametrize("method", ["spline", "isotonic"])
def test_shrunk_map_is_monotone_and_never_certain(method):
    """Scores whose labels run against them in places (rates falling with the score): the map stays
    non-decreasing, inside (0, 1) on (0, 1), and at 0 and 1 on the end points."""
    rng = np.random.default_rng(8)
    score = rng.uniform(size=300)
    reward = (rng.uniform(size=300) < 0.3 + 0.2 * np.sin(12 * score)).astype(float)
    calibrator = fit_calibration(score, reward, rng.uniform(0.5, 4.0, 300), method=method, n_bins=15, shrink=True)
    grid = np.r_[0.0, np.logspace(-12, -1e-12, 2000), 1.0]
    mapped = calibrator(grid)
    assert np.all(np.diff(mapped) >= 0)
    assert mapped[0] == 0.0 and mapped[-1] == 1.0 and np.all((mapped[1:-1] > 0) & (mapped[1:-1] < 1))


def test_cross_validated_ece_judges_each_row_by_a_map_fitted_without_it():
    """Folds {rows 0, 2} (both 0) and {1, 3} (both 1), one bin: fitted on the second fold the spline is
    (0, 0), (0.6, 1), (1, 1), giving rows 0 and 2 the values 1/3 and 1; on the first (0, 0), (0.4, 0), (1, 1),
    giving rows 1 and 3 the values 0 and 2/3; one row per ECE bin, the error is the mean of
    |1/3 - 0|, |0 - 1|, |1 - 0|, |2/3 - 1|."""
    ece = cross_validated_ece([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1], folds=2, ece_bins=4, method="spline", n_bins=1,
                              score_range=(0, 1), reward_range=(0, 1))
    assert ece == pytest.approx(2 / 3)
