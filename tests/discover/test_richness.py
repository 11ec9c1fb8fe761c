"""Good-Turing, Chao1 and the remaining-positives interval: exact values and seeded coverage."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from labelwise.discover.richness import (
    chao1_unseen,
    good_turing_unseen,
    remaining_interval,
)


def test_frequency_counts_and_chao1_by_hand(stats):
    n, seen, f1, f2 = stats(np.array([1, 1, 2, 3, 0]))
    assert (n, seen, f1, f2) == (7, 4, 2, 1)
    assert chao1_unseen(n, f1, f2) == pytest.approx(6 / 7 * 2 * 1 / (2 * 2))
    assert good_turing_unseen(n, f1) == pytest.approx(2 / 7)
    assert good_turing_unseen(0, 0) == 0.0


def test_good_turing_expectation_enumerated(stats):
    """E[f1/n] = sum_i p_i (1 - p_i)^(n-1) over every sequence of n = 4 draws from three species."""
    p = np.array([0.5, 0.3, 0.2])
    n = 4
    expected = 0.0
    for draws in itertools.product(range(3), repeat=n):
        counts = np.bincount(draws, minlength=3)
        _, _, f1, _ = stats(counts)
        expected += np.prod(p[list(draws)]) * good_turing_unseen(n, f1)
    assert expected == pytest.approx(float(np.sum(p * (1 - p) ** (n - 1))))


def test_no_singletons_means_nothing_remains():
    out = remaining_interval(np.array([2, 3, 5]))
    assert out == {"total": 3.0, "remaining": 0.0, "interval": [0.0, 0.0]}


def test_positives_found_elsewhere_count_as_seen():
    counts = np.array([1, 1, 1, 2])  # n = 5, S = 4, f0 = 4/5 * 3 * 2 / 4 = 1.2
    alone = remaining_interval(counts)
    assert alone["total"] == pytest.approx(5.2) and alone["remaining"] == pytest.approx(1.2)
    more = remaining_interval(counts, found=5)
    assert more["remaining"] == pytest.approx(0.2)
    assert more["interval"][0] == pytest.approx(max(alone["interval"][0] - 1, 0))


def coverage(weights: np.ndarray, n: int, runs: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    hits = np.empty(runs, dtype=bool)
    for r in range(runs):
        counts = rng.multinomial(n, weights / weights.sum())
        out = remaining_interval(counts)
        lo, hi = out["interval"]
        hits[r] = lo <= np.sum(counts == 0) <= hi
    return hits


def test_interval_covers_under_equal_popularity():
    """95% log-normal interval, 300 draws from 200 equally popular positives: coverage within 3 SE of 0.95."""
    hits = coverage(np.ones(200), 300, 300, seed=1)
    assert hits.mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / hits.size)


@pytest.mark.slow
def test_interval_under_covers_under_zipf_1_5():
    """The documented failure: with Zipf(1.5) popularity most unseen positives leave no trace in f1, f2."""
    hits = coverage(1.0 / np.arange(1, 501) ** 1.5, 300, 200, seed=2)
    assert hits.mean() < 0.5
