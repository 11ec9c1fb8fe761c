"""Fixtures shared by the discovery tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="session")
def stats():
    """A function: ``n, S, f1, f2`` of counts (times each positive was returned; zeros: never)."""

    def frequency(counts):
        counts = np.asarray(counts)
        return counts.sum(), (counts > 0).sum(), (counts == 1).sum(), (counts == 2).sum()

    return frequency
