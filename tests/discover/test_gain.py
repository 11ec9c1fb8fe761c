"""The gain estimator: Good-Turing at k = 1, successive sampling of distinct answers, exclusion, the bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.discover.gain import MIN_VARIANCE, expected_new, gain_with_variance


def summary(counts, stats):
    """``n, S, f1, f2, sum c^2`` of a sample's counts."""
    return *stats(counts), int(np.sum(np.square(counts)))


@pytest.mark.parametrize("counts", [[1, 1, 2], [1, 2, 2, 5, 1, 1], [3, 1], [1]])
def test_one_answer_without_exclusion_is_good_turing(counts, stats):
    n, seen, f1, f2, squares = summary(counts, stats)
    assert expected_new(n, seen, f1, f2, squares, seen, 1, 0) == pytest.approx(f1 / n)


def test_no_singletons_no_gain(stats):
    n, seen, f1, f2, squares = summary([2, 3, 2], stats)
    assert expected_new(n, seen, f1, f2, squares, seen, 10, 5) == 0.0


def test_two_answers_by_hand(stats):
    """Counts 1, 1, 2: u = 1/2; Chao1 f0 = 3/4 * 2 * 1 / (2 * 2) = 3/8, floored at 1 (singletons are left):
    one new positive of mass 1/2, found mass 1/2.  The first answer is new with chance 1/2; then half the
    new positive (1/4) and half a found one (size-biased mass (1 - u) sum c^2 / n^2 = 3/16, so 3/32) have
    left the pool."""
    n, seen, f1, f2, squares = summary([1, 1, 2], stats)
    second = 0.25 / (0.25 + 0.5 - 3 / 32)
    assert expected_new(n, seen, f1, f2, squares, seen, 2, 0) == pytest.approx(0.5 + second)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_excluding_everything_found_makes_every_answer_new(k, stats):
    """l >= found: the k distinct answers are all new, as far as the g = f0 unseen positives go."""
    n, seen, f1, f2, squares = summary([1, 1, 1, 1, 2, 3], stats)  # Chao1 f0 = 8/9 * 4 * 3 / (2 * 2)
    assert expected_new(n, seen, f1, f2, squares, seen, k, 100) == pytest.approx(min(k, 8 / 3))


def test_gain_grows_with_k_and_l_and_is_bounded(stats):
    """Below saturation more answers or a longer exclude list bring more; asking for more answers than the
    node has left (11 found + f0 = 8.71 unseen < 20) returns every unseen one."""
    n, seen, f1, f2, squares = summary([1] * 8 + [2, 2, 3], stats)  # Chao1 f0 = 14/15 * 8 * 7 / (2 * 3)
    k = np.array([1, 5, 20, 50])[:, None]
    l = np.array([0, 2, 7])[None, :]
    r = expected_new(n, seen, f1, f2, squares, seen, k, l)
    assert np.all(np.diff(r[:2], axis=0) > 0) and np.all(np.diff(r[:2], axis=1) > 0)
    f0 = 14 / 15 * 8 * 7 / 6
    assert np.all(r <= np.minimum(k, f0) + 1e-12)
    assert r[2:] == pytest.approx(np.full((2, 3), f0))


def test_positives_found_elsewhere_are_not_new(stats):
    """Found by other queries but absent from this sample: they lower the gain."""
    n, seen, f1, f2, squares = summary([1, 1, 1, 1, 1, 2], stats)
    alone = expected_new(n, seen, f1, f2, squares, seen, 5, 0)
    assert expected_new(n, seen, f1, f2, squares, seen + 3, 5, 0) < alone


def test_point_estimate_is_the_unresampled_gain_and_variance_is_floored(stats):
    counts = np.array([1, 1, 2, 1, 3, 4])
    node = np.array([0, 0, 0, 1, 1, 1])
    found = np.array([3, 3])
    k, l = np.array([1, 5]), np.array([0, 1])
    rng = np.random.default_rng(0)
    r, v = gain_with_variance(node, counts, found, k, l, rng, replicates=200)
    for j in range(2):
        n, seen, f1, f2, squares = summary(counts[node == j], stats)
        assert r[j] == pytest.approx(expected_new(n, seen, f1, f2, squares, found[j], k, l))
    assert np.all(v >= MIN_VARIANCE) and v[0, 1] > MIN_VARIANCE


@pytest.mark.parametrize("exposed", [0.0, 1.5, 2.0])
def test_good_turing_mass_reads_the_exposed_singletons(exposed, stats):
    """Counts 1, 1, 2 (two singletons): singletons weighted down by their exposure (answers of exclude lists)
    lower the mass never returned to ``exposed / n``, while the number unseen still comes from ``f_1``."""
    n, seen, f1, f2, squares = summary([1, 1, 2], stats)
    assert expected_new(n, seen, f1, f2, squares, seen, 1, 0, exposed) == pytest.approx(exposed / n)
    everything = expected_new(n, seen, f1, f2, squares, seen, 5, 100, exposed)  # all found excluded
    assert everything == pytest.approx(expected_new(n, seen, f1, f2, squares, seen, 5, 100))


def test_bootstrap_weights_singletons_by_their_exposure(stats):
    counts, node, found = np.array([1, 1, 2]), np.zeros(3, dtype=int), np.array([3])
    k, l = np.array([1]), np.array([0])
    r, _ = gain_with_variance(node, counts, found, k, l, np.random.default_rng(0), 8, np.array([0.5, 0.0, 1.0]))
    assert r[0, 0] == pytest.approx(0.5 / 4)
