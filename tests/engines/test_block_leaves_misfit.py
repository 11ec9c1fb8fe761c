"""The interval's recalibration: the design-weighted Platt map unless the labels counted once show it too low."""

import numpy as np

from labelwise.engines.block_leaves import contradicted

COUNTED_ONCE = np.array([1.0, 10.0, 100.0, 1000.0])


def test_only_a_weighted_count_below_every_point_of_the_posterior_is_a_misfit():
    assert contradicted(0.99, COUNTED_ONCE)
    assert not contradicted(1.0, COUNTED_ONCE)  # at the lowest point: within the posterior's reach
    assert not contradicted(50.0, COUNTED_ONCE)
    assert not contradicted(5000.0, COUNTED_ONCE)  # too high: the interval stays conservative
