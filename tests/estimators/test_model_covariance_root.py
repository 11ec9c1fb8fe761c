"""The bisection behind ``mixture_variance``'s interval: the root of an increasing function to 1e-12 relative."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from labelwise.estimators.model_covariance import root_of_increasing


@pytest.mark.parametrize(("target", "hi"), [(0.8, 5.0), (0.975, 3.0), (0.5001, 1e-3), (0.95, 1e6)])
def test_bisection_finds_the_normal_quantile(target, hi):
    root = root_of_increasing(lambda h: float(ndtr(h)) - target, hi)
    assert root == pytest.approx(ndtri(target), rel=1e-9, abs=1e-12 * hi)
    assert 0.0 < root < hi and np.isfinite(root)
