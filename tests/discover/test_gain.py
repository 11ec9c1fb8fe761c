"""The gain estimator: Good-Turing at k = 1, successive sampling of distinct answers, exclusion, the bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.discover.gain import (
    MIN_VARIANCE,
    Recaptures,
    capped_unseen_mass,
    doubletons,
    equal_popularity_share,
    equal_popularity_total,
    expected_new,
    gain_with_variance,
    recapture_unseen_mass,
)


def summary(counts, stats):
    """``n, S, f1, sum c^2`` of a sample's counts."""
    n, seen, f1, _ = stats(counts)
    return n, seen, f1, int(np.sum(np.square(counts)))


@pytest.mark.parametrize("counts", [[1, 1, 2], [1, 2, 2, 5, 1, 1], [3, 1], [1]])
def test_one_answer_without_exclusion_is_good_turing(counts, stats):
    n, seen, f1, squares = summary(counts, stats)
    assert expected_new(n, seen, f1, squares, seen, 1, 0) == pytest.approx(f1 / n)


def test_no_singletons_no_gain(stats):
    n, seen, f1, squares = summary([2, 3, 2], stats)
    assert expected_new(n, seen, f1, squares, seen, 10, 5) == 0.0


def test_two_answers_by_hand(stats):
    """Counts 1, 1, 2: u = 1/2, f0 = 3/2 new positives of mass 1/3 each, found mass 1/2.  The first answer is
    new with chance 1/2; then half a new positive (1/6) and half a found one (size-biased mass
    (1 - u) sum c^2 / n^2 = 3/16, so 3/32) have left the pool."""
    n, seen, f1, squares = summary([1, 1, 2], stats)
    second = (1.5 - 0.5) / 3 / ((1.5 - 0.5) / 3 + 0.5 - 3 / 32)
    assert expected_new(n, seen, f1, squares, seen, 2, 0) == pytest.approx(0.5 + second)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_excluding_everything_found_makes_every_answer_new(k, stats):
    """l >= found: the k distinct answers are all new, as far as the g = f0 unseen positives go."""
    n, seen, f1, squares = summary([1, 1, 1, 1, 2, 3], stats)  # jackknife f0 = 4 * 8 / 9
    assert expected_new(n, seen, f1, squares, seen, k, 100) == pytest.approx(min(k, 4 * 8 / 9))


@pytest.mark.parametrize(("k", "unfound", "expected"), [(5, 7.0, 5.0), (10, 7.0, 7.0), (10, 1.0, 4 * 8 / 9)])
def test_unfound_count_raised_from_outside(k, unfound, expected, stats):
    """Excluding everything found, the gain is min(k, new positives left): left raised to ``unfound`` when that is
    more than the sample's own 4 * 8 / 9, never lowered."""
    n, seen, f1, squares = summary([1, 1, 1, 1, 2, 3], stats)
    assert expected_new(n, seen, f1, squares, seen, k, 100, unfound) == pytest.approx(expected)


def test_gain_grows_with_k_and_l_and_is_bounded(stats):
    """Below saturation more answers or a longer exclude list bring more; asking for more answers than the
    node has left (11 found + f0 = 7.47 unseen < 20) returns every unseen one."""
    n, seen, f1, squares = summary([1] * 8 + [2, 2, 3], stats)  # jackknife f0 = 8 * 14 / 15
    k = np.array([1, 5, 20, 50])[:, None]
    l = np.array([0, 2, 7])[None, :]
    r = expected_new(n, seen, f1, squares, seen, k, l)
    assert np.all(np.diff(r[:2], axis=0) > 0) and np.all(np.diff(r[:2], axis=1) > 0)
    assert np.all(r <= np.minimum(k, f1 * (n - 1) / n) + 1e-12)
    assert r[2:] == pytest.approx(np.full((2, 3), 8 * 14 / 15))


def test_positives_found_elsewhere_are_not_new(stats):
    """Found by other queries but absent from this sample: they lower the gain."""
    n, seen, f1, squares = summary([1, 1, 1, 1, 1, 2], stats)
    alone = expected_new(n, seen, f1, squares, seen, 5, 0)
    assert expected_new(n, seen, f1, squares, seen + 3, 5, 0) < alone


def test_point_estimate_is_the_unresampled_gain_and_variance_is_floored(stats):
    counts = np.array([1, 1, 2, 1, 3, 4])
    node = np.array([0, 0, 0, 1, 1, 1])
    found = np.array([3, 3])
    k, l = np.array([1, 5]), np.array([0, 1])
    rng = np.random.default_rng(0)
    r, v = gain_with_variance(node, counts, found, k, l, rng, replicates=200)
    for j in range(2):
        n, seen, f1, squares = summary(counts[node == j], stats)
        assert r[j] == pytest.approx(expected_new(n, seen, f1, squares, found[j], k, l))
    assert np.all(v >= MIN_VARIANCE) and v[1, 1] > MIN_VARIANCE


class FixedDraws:
    """Stands in for the bootstrap's generator: every replicate's counts given."""

    def __init__(self, draws):
        self.draws = np.asarray(draws)

    def poisson(self, lam, size):
        assert self.draws.shape == size
        return self.draws


def test_a_replicate_that_drops_a_found_positive_counts_it_found_elsewhere():
    """Sample: a returned once, b twice, both found; k = 1 without exclude list.  The sample: unseen mass 1/3,
    the jackknife's 2/3 unseen floored at 1 (a singleton), the answer new with chance 1/3.  Replicate (a: 1,
    b: 0): one answer, a singleton (unseen mass 1); b stays found, absent from the sample like a positive found
    by a query below: 2 unseen (a's singleton floors the new ones at 1, plus b), the new one half the unseen
    mass against b's half: gain 1/2.  Replicate (1, 2): the sample, 1/3.  The upper semivariance about 1/3:
    (1/6)^2 / 2 = 1/72.  (Counting b not found in that replicate would give it gain 1 and 2/9; the two-sided
    variance of {1/2, 1/3} is 1/144.)"""
    node, counts, found = np.zeros(2, dtype=np.int64), np.array([1, 2]), np.array([2])
    r, v = gain_with_variance(node, counts, found, np.array([1]), np.array([0]), FixedDraws([[1, 0], [1, 2]]), 2)
    assert r[0, 0] == pytest.approx(1 / 3)
    assert v[0, 0] == pytest.approx(1 / 72)


def test_the_variance_is_the_replicates_excess_over_the_estimate():
    """The sample of the test above (gain 1/3).  Replicate (1, 1): two singletons, unseen mass 1, gain 1;
    replicate (1, 3): unseen mass 1/4 with 1 unseen positive, gain 1/4.  Only the first lies above the
    estimate: (2/3)^2 / 2 = 2/9 (the two-sided variance of {1, 1/4} is 9/64).  Replicates all at or below it
    leave the floor."""
    node, counts, found = np.zeros(2, dtype=np.int64), np.array([1, 2]), np.array([2])
    k, l = np.array([1]), np.array([0])
    _, v = gain_with_variance(node, counts, found, k, l, FixedDraws([[1, 1], [1, 3]]), 2)
    assert v[0, 0] == pytest.approx(2 / 9)
    _, v = gain_with_variance(node, counts, found, k, l, FixedDraws([[1, 3], [1, 2]]), 2)
    assert v[0, 0] == MIN_VARIANCE


def test_positives_found_elsewhere_stay_found_in_every_replicate():
    """Sample: b returned once; a found by another query (never in the sample), k = 1.  The sample: one
    singleton, unseen mass 1 shared by 2 unseen positives (b's singleton floors the new ones at 1, plus a):
    gain 1/2.  A replicate that keeps b is the sample; one that drops it has no answer: gain 0 (a stays found).
    Neither lies above the estimate: the variance is its floor (two-sided, {1/2, 0} would give 1/16)."""
    node, counts, found = np.zeros(1, dtype=np.int64), np.array([1]), np.array([2])
    r, v = gain_with_variance(node, counts, found, np.array([1]), np.array([0]), FixedDraws([[1], [0]]), 2)
    assert r[0, 0] == pytest.approx(0.5)
    assert v[0, 0] == MIN_VARIANCE


def test_recapture_unseen_mass_by_hand():
    """Node 0: 6 weighted new answers and 2 recaptures: at most 6 / 8 (Good-Turing's 1/2 is smaller, kept).
    Node 1: 3 new, 9 recaptured: 1/4, below Good-Turing's 1/2.  Node 2: nothing weighed (every answer came with
    an exclude list of every positive found): Good-Turing's 1/2."""
    n, f1 = np.array([10.0, 10.0, 10.0]), np.array([5.0, 5.0, 5.0])
    u = recapture_unseen_mass(Recaptures(np.array([6.0, 3.0, 0.0]), np.array([2, 9, 0])), n, f1)
    assert u == pytest.approx([0.5, 0.25, 0.5])


def test_the_unseen_mass_replaces_good_turing_in_the_gain(stats):
    """One answer without exclude list is new with the chance the unseen mass gives, whatever estimates it."""
    n, seen, f1, squares = summary([1, 1, 2], stats)
    assert expected_new(n, seen, f1, squares, seen, 1, 0, unseen_mass=np.array(0.2)) == pytest.approx(0.2)


def test_the_point_gain_uses_the_recaptures():
    """A large sample (Good-Turing: 1/2) with recaptures saying 1/4: the unresampled gain is the one at 1/4."""
    counts = np.array([1] * 600 + [3] * 200)
    node, found = np.zeros(counts.size, dtype=np.int64), np.array([counts.size])
    r, _ = gain_with_variance(node, counts, found, np.array([10]), np.array([0]), np.random.default_rng(0), 8,
                              Recaptures(np.array([40.0]), np.array([120])))
    stats = (counts.sum(), counts.size, 600, np.sum(counts ** 2))
    assert r[0, 0] == pytest.approx(expected_new(*stats, counts.size, 10, 0, unseen_mass=np.array(0.25)))


def test_equal_popularity_share_by_hand():
    """Node 0: counts 1, 1, 1, 1, 2, 2, 3 (n = 11, S = 7, f1 = 4, f2 = 2): jackknife 4 * 10 / 11 = 40/11 above
    Chao1's 10/11 * 4 * 3 / 6: share 40/11 / (7 + 40/11) = 40/117.  Node 1: six singletons: Chao1 5/6 * 6 * 5 / 2
    = 25/2 above the jackknife's 5: 25/2 / (6 + 25/2) = 25/37.  Node 2: counts 2, 3 and 4 found (2 elsewhere),
    no singleton: f0 = d = 2, raised to d + 3 unfound: 5/7."""
    n, seen, f1, f2 = (np.array(x, dtype=float) for x in ([11, 6, 5], [7, 6, 2], [4, 6, 0], [2, 0, 1]))
    found = np.array([7.0, 6.0, 4.0])
    share = equal_popularity_share(n, seen, f1, f2, found, np.array([0.0, 0.0, 3.0]))
    assert share == pytest.approx([40 / 117, 25 / 37, 5 / 7])


def test_an_exclude_list_of_every_positive_found_cannot_make_the_unseen_mass_one():
    """Six answers of queries whose exclude lists held every positive found: six singletons, nothing weighed by
    the recaptures, so Good-Turing's 1 is kept by :func:`recapture_unseen_mass`; with equal popularity the
    unseen would hold 25/37 (test above), the unseen mass used, and one answer is new with that chance."""
    n, seen, f1, f2 = (np.array([x], dtype=float) for x in (6, 6, 6, 0))
    nothing = Recaptures(np.zeros(1), np.zeros(1, dtype=np.int64))
    assert recapture_unseen_mass(nothing, n, f1) == pytest.approx([1.0])
    assert capped_unseen_mass(nothing, n, seen, f1, f2, seen) == pytest.approx([25 / 37])
    counts = np.ones(6, dtype=np.int64)
    r, _ = gain_with_variance(np.zeros(6, dtype=np.int64), counts, np.array([6]), np.array([1]), np.array([0]),
                              np.random.default_rng(0), 8, nothing)
    assert r[0, 0] == pytest.approx(25 / 37)


def test_equal_popularity_total_solves_the_distinct_count():
    """100 equally popular positives and 100 ln 2 draws show 100 (1 - 1/2) = 50 distinct ones on average: 50
    seen gives back 100; 229 of 300 the N with N (1 - exp(-300 / N)) = 229; no repeat (S = n) or no draw: S."""
    assert equal_popularity_total(100 * np.log(2), 50.0) == pytest.approx(100.0, rel=1e-9)
    total = equal_popularity_total(np.array([300.0, 5.0, 0.0]), np.array([229.0, 5.0, 0.0]))
    assert total[0] * -np.expm1(-300 / total[0]) == pytest.approx(229.0, rel=1e-9)
    assert total[1:] == pytest.approx([5.0, 0.0])


def test_an_unfound_count_given_raises_the_gain_and_its_equal_popularity_share():
    """``unfound`` reaches both the count of :func:`expected_new` and the share of :func:`capped_unseen_mass`."""
    counts = np.array([1] * 10 + [2] * 5)
    node, found = np.zeros(counts.size, dtype=np.int64), np.array([20])
    k, l = np.array([10]), np.array([0])
    recaptures = Recaptures(np.array([10.0]), np.array([5.0]))
    r, _ = gain_with_variance(node, counts, found, k, l, np.random.default_rng(0), 8, recaptures, np.array([[12.0]]))
    stats = (20, 15, 10, np.sum(counts ** 2))
    f2 = doubletons(node, counts, 1)[0]
    unseen = capped_unseen_mass(recaptures, 20.0, 15.0, 10.0, f2, 20.0, 12.0)
    assert r[0, 0] == pytest.approx(expected_new(*stats, 20, 10, 0, 12.0, unseen)[0, 0])
    plain, _ = gain_with_variance(node, counts, found, k, l, np.random.default_rng(0), 8, recaptures)
    assert r[0, 0] > plain[0, 0]
