"""The width floor of ``benchmarks/anytime_bounds.py``: nothing the Chernoff bound does not prove is counted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bounds(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import anytime_bounds

    return anytime_bounds


def _chernoff_log_tail(q: np.ndarray, n: float, d: int) -> float:
    mu = float(np.sum(1 - (1 - q) ** n))
    delta = d / mu - 1
    return mu * (delta - (1 + delta) * np.log(1 + delta))


def test_the_drawn_quantile_is_the_first_count_the_bound_proves_else_beyond_every_item(bounds):
    q = np.full(10, 0.1)
    d = bounds.drawn_quantile(q, 5, 0.2)  # E[D] = 10 (1 - 0.9^5) = 4.10
    assert _chernoff_log_tail(q, 5, d) <= np.log(0.2) < _chernoff_log_tail(q, 5, d - 1)
    # at d = 10 the bound is exp(4.10 (1 - 2 ln 2)) = 0.21: no count is proven below a tail of 1e-6
    assert bounds.drawn_quantile(q, 5, 1e-6) == 11
    assert bounds.drawn_quantile(q, 10_000, 0.2) == 11  # every item drawn: E[D] = 10, no d above it


def test_no_hidden_negative_is_counted_when_every_item_is_surely_drawn(bounds):
    # ten true negatives of probability 0.1 among 1000 draws: all drawn, none can hide (at level 0.99 a
    # quantile of d = m - 1 would count one)
    assert bounds.hidden_negatives(np.full(10, 0.1), np.ones(10, bool), 1000, 0.01) == 0
