"""The gain estimator: Good-Turing at k = 1, saturation, exclusion, and the bootstrap variance."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.discover.gain import MIN_VARIANCE, expected_new, gain_with_variance


@pytest.mark.parametrize("counts", [[1, 1, 2], [1, 2, 2, 5, 1, 1], [3, 1], [1]])
def test_one_answer_without_exclusion_is_good_turing(counts, stats):
    n, seen, f1, _ = stats(counts)
    assert expected_new(n, seen, f1, seen, 1, 0) == pytest.approx(f1 / n)


def test_no_singletons_no_gain(stats):
    n, seen, f1, _ = stats([2, 3, 2])
    assert expected_new(n, seen, f1, seen, 10, 5) == 0.0


def test_excluding_everything_found_leaves_only_new_answers(stats):
    """l >= found: every answer is new; k answers spread over g = f0 unseen positives."""
    n, seen, f1, _ = stats([1, 1, 1, 1, 2, 3])  # jackknife f0 = 4 * 8 / 9
    g = 4 * 8 / 9
    assert expected_new(n, seen, f1, seen, 3, 100) == pytest.approx(g * (1 - (1 - 1 / g) ** 3))


def test_gain_grows_with_k_and_l_and_is_bounded(stats):
    n, seen, f1, _ = stats([1] * 8 + [2, 2, 3])  # jackknife f0 = 8 * 14 / 15
    k = np.array([1, 5, 20, 50])[:, None]
    l = np.array([0, 2, 7])[None, :]
    r = expected_new(n, seen, f1, seen, k, l)
    assert np.all(np.diff(r, axis=0) > 0) and np.all(np.diff(r, axis=1) > 0)
    f0 = f1 * (n - 1) / n
    assert np.all(r <= np.minimum(k, f0) + 1e-12)


def test_positives_found_elsewhere_are_not_new(stats):
    """Found by other queries but absent from this sample: they lower the gain."""
    n, seen, f1, _ = stats([1, 1, 1, 1, 1, 2])
    alone = expected_new(n, seen, f1, seen, 5, 0)
    assert expected_new(n, seen, f1, seen + 3, 5, 0) < alone


def test_point_estimate_is_the_unresampled_gain_and_variance_is_floored(stats):
    counts = np.array([1, 1, 2, 1, 3, 4])
    node = np.array([0, 0, 0, 1, 1, 1])
    found = np.array([3, 3])
    k, l = np.array([1, 5]), np.array([0, 1])
    rng = np.random.default_rng(0)
    r, v = gain_with_variance(node, counts, found, k, l, rng, replicates=200)
    for j in range(2):
        n, seen, f1, _ = stats(counts[node == j])
        assert r[j] == pytest.approx(expected_new(n, seen, f1, found[j], k, l))
    assert np.all(v >= MIN_VARIANCE) and v[0, 1] > MIN_VARIANCE

