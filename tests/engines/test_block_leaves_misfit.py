"""The interval's recalibration: the design-weighted Platt map unless the labels counted once show it too low."""

import numpy as np

from labelwise.engines.block_leaves import MISFIT, contradicted

COUNTED_ONCE = np.array([1.0, 10.0, 100.0, 1000.0])
PROBS = np.array([0.02, 0.48, 0.48, 0.02])


def test_a_weighted_posterior_wholly_below_the_counted_once_range_is_a_misfit():
    assert MISFIT == 0.025
    # the weighted posterior's upper 2.5% quantile is 5: P(count <= 5) = 0.02 counted once
    assert contradicted(np.array([0.1, 1.0, 5.0]), np.array([0.5, 0.48, 0.02]), COUNTED_ONCE, PROBS)
    # one weighted point of 3% at 20 reaches inside the range: no contradiction
    assert not contradicted(np.array([0.1, 1.0, 20.0]), np.array([0.5, 0.47, 0.03]), COUNTED_ONCE, PROBS)


def test_a_weighted_count_above_the_range_is_kept():
    assert not contradicted(np.array([5000.0]), np.ones(1), COUNTED_ONCE, PROBS)


def test_the_boundary_is_inclusive():
    once = np.array([1.0, 2.0, 3.0])
    assert contradicted(np.array([1.0]), np.ones(1), once, np.array([0.025, 0.95, 0.025]))  # P(count <= 1) = 0.025
    assert not contradicted(np.array([1.0]), np.ones(1), once, np.array([0.03, 0.94, 0.03]))
