"""The interval's recalibration: the design-weighted Platt map unless the labels counted once show it too low."""

import numpy as np

from labelwise.engines.block_leaves import MISFIT, contradicted


def test_only_a_count_in_the_lower_tail_of_the_posterior_is_a_misfit():
    at_points = np.array([1.0, 10.0, 100.0, 1000.0])
    weights = np.array([0.02, 0.48, 0.48, 0.02])
    assert MISFIT == 0.025
    assert contradicted(0.5, at_points, weights)  # P(count <= 0.5) = 0
    assert contradicted(5.0, at_points, weights)  # P(count <= 5) = 0.02
    assert not contradicted(10.0, at_points, weights)  # P(count <= 10) = 0.5
    assert not contradicted(5000.0, at_points, weights)  # too high: the interval stays conservative


def test_the_boundary_is_inclusive():
    at_points = np.array([1.0, 2.0, 3.0])
    assert contradicted(1.0, at_points, np.array([0.025, 0.95, 0.025]))  # P(count <= 1) = 0.025 exactly
    assert not contradicted(1.0, at_points, np.array([0.03, 0.94, 0.03]))
