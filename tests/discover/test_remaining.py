"""The remaining-positives interval: exact values, the checks of its assumptions, and seeded coverage."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.discover.remaining import COVERAGE_LIMIT, CV2_LIMIT, remaining_interval
from labelwise.discover.richness import ichao1


def test_no_singletons_means_nothing_remains():
    out = remaining_interval(np.array([2, 3, 5]))
    assert out["total"] == 3.0 and out["remaining"] == 0.0 and out["interval"] == [0.0, 0.0]
    assert not out["lower_bound_only"] and out["doubts"] == [] and out["unseen_share"] == 0.0


def test_positives_found_elsewhere_count_as_seen():
    counts = np.array([1, 1, 1, 2, 3, 3, 4])  # n = 15, S = 7, f = (3, 1, 2, 1)
    f0 = ichao1(15, np.array([3.0, 1.0, 2.0, 1.0]))[0]
    alone = remaining_interval(counts)
    assert alone["total"] == pytest.approx(7 + f0) and alone["remaining"] == pytest.approx(f0)
    more = remaining_interval(counts, found=8)
    assert more["remaining"] == pytest.approx(f0 - 1)
    assert more["interval"][0] == pytest.approx(max(alone["interval"][0] - 1, 0))
    assert more["interval"][1] == pytest.approx(alone["interval"][1] - 1)


def test_doubts_make_a_lower_bound_only():
    counts = np.array([1, 1, 1, 2, 3, 3, 4])
    assert not remaining_interval(counts)["lower_bound_only"]
    unsampled = remaining_interval(counts, unsampled=40)
    assert unsampled["lower_bound_only"] and "40 items" in unsampled["doubts"][0]
    too_many = remaining_interval(counts, found=30)
    assert too_many["lower_bound_only"] and "30 positives are found" in too_many["doubts"][0]
    spread = remaining_interval(np.array([1] * 6 + [2] + [9] * 3))  # squared CV of the rare ones 1.21
    assert any("squared CV" in d for d in spread["doubts"]) and CV2_LIMIT < 1.21
    rising = remaining_interval(np.array([1] * 8 + [2]))  # coverage 1 - 8/10 * 72 / 74
    assert any("would still be new" in d for d in rising["doubts"]) and 1 - 0.8 * 72 / 74 < COVERAGE_LIMIT
    assert rising["unseen_share"] == pytest.approx(0.8 * 72 / 74)


def coverage(weights: np.ndarray, n: int, runs: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run of ``n`` draws: interval covers, lower end holds, flagged."""
    rng = np.random.default_rng(seed)
    out = np.empty((3, runs), dtype=bool)
    for r in range(runs):
        counts = rng.multinomial(n, weights / weights.sum())
        estimate = remaining_interval(counts)
        low, high = estimate["interval"]
        unseen = np.sum(counts == 0)
        out[:, r] = low <= unseen <= high, low <= unseen, estimate["lower_bound_only"]
    return out[0], out[1], out[2]


def test_interval_covers_under_equal_popularity():
    """95% interval, 300 draws from 200 equally popular positives: coverage within 3 SE of 0.95, rarely flagged."""
    covered, _, flagged = coverage(np.ones(200), 300, 300, seed=1)
    assert covered.mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / covered.size)
    assert flagged.mean() <= 0.1


@pytest.mark.slow
def test_zipf_1_5_is_flagged_and_its_lower_end_holds():
    """Zipf(1.5): the interval misses, but it is flagged a lower bound only, and that bound holds."""
    covered, above_low, flagged = coverage(1.0 / np.arange(1, 501) ** 1.5, 300, 200, seed=2)
    assert covered.mean() < 0.5
    assert flagged.mean() >= 0.9
    assert above_low.mean() >= 0.975 - 3 * np.sqrt(0.975 * 0.025 / above_low.size)
