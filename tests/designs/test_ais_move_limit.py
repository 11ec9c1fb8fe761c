"""``move_limit``: the largest ``|u|`` whose draw moves an AIS estimate of ``n`` draws by at most the measure's range."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

from labelwise.designs.ais import move_limit


def test_a_draw_at_the_limit_moves_the_estimate_by_exactly_the_range():
    # N = 1000 items, n = 50 draws: a draw of proposal q moves the estimate by u / (N q n)
    N, n = 1000, 50
    q = np.array([0.0, 1e-20, 2e-3, 0.5])
    span = np.array([1.0, 2.0, np.inf])
    limit = move_limit(q, N * n, span)
    assert limit.shape == (4, 3)
    assert_array_equal(limit[0], np.inf)  # q = 0: no draw, nothing to hold
    assert_array_equal(limit[:, 2], np.inf)  # an unbounded component: no range
    assert_allclose(limit[1:, :2] / (N * q[1:, None] * n), np.broadcast_to(span[:2], (3, 2)), rtol=1e-14)
