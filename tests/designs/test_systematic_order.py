"""online-poisson's rounds in score order: every group's count keeps its mean, and a uniform round is a
proportional stratified sample over the scores (implicit stratification, Cochran, Sampling Techniques, ch. 8)."""

import itertools

import numpy as np
import pytest

from labelwise.designs import make_design
from labelwise.designs.poisson_rounds import group_scores, systematic_counts

# five groups, scores with ties (broken by the permutation), expected counts summing to 3
EXPECTED = np.array([0.25, 0.5, 0.75, 1.0, 0.5])
SCORES = np.array([0.2, 0.1, 0.2, 0.9, 0.1])


class _Fixed:
    """A generator stand-in that returns a given permutation and a given start ``u``."""

    def __init__(self, order: tuple[int, ...], u: float):
        self.order, self.u = np.array(order), u

    def permutation(self, n: int) -> np.ndarray:
        return self.order

    def random(self) -> float:
        return self.u


@pytest.mark.parametrize("scores", [SCORES, None])
def test_every_group_s_mean_count_over_every_permutation_and_start_is_its_expected_count(scores):
    # the counts are step functions of u with steps at multiples of 1/4 (the cumulative expected counts): the
    # midpoints of 8 equal parts of [0, 1) give the exact mean over u
    mean = np.zeros(EXPECTED.size)
    orders = list(itertools.permutations(range(EXPECTED.size)))
    for order in orders:
        for u in (np.arange(8) + 0.5) / 8:
            counts = systematic_counts(EXPECTED, _Fixed(order, u), scores)
            assert counts.sum() == 3
            mean += counts / (len(orders) * 8)
    np.testing.assert_allclose(mean, EXPECTED, atol=1e-12)


def test_score_order_puts_the_groups_in_increasing_score_ties_by_the_permutation():
    # permutation (4, 3, 2, 1, 0) by scores: 4 and 1 (0.1, in permutation order), 2 and 0 (0.2), 3 (0.9);
    # cumulative 0.5, 1.0, 1.75, 2.0, 3.0, so u = 0.9 puts the points 0.9, 1.9, 2.9 in groups 1, 0, 3
    counts = systematic_counts(EXPECTED, _Fixed((4, 3, 2, 1, 0), 0.9), SCORES)
    np.testing.assert_array_equal(counts, [1, 1, 0, 1, 0])


def test_a_uniform_round_in_score_order_gives_every_score_stratum_its_proportional_share_within_one():
    # 30 groups of 0.45 expected items each in three score strata of 8, 12 and 10 groups (3.6, 5.4, 4.5 expected)
    scores = np.repeat([0.9, 0.1, 0.5], [8, 12, 10])
    expected = np.full(scores.size, 0.45)
    share = np.array([np.sum(expected[scores == s]) for s in (0.1, 0.5, 0.9)])
    by_order = {}
    for order in ("score", "random"):
        worst = 0.0
        for seed in range(300):
            counts = systematic_counts(expected, np.random.default_rng(seed), scores if order == "score" else None)
            got = np.array([counts[scores == s].sum() for s in (0.1, 0.5, 0.9)])
            worst = max(worst, float(np.max(np.abs(got - share))))
        by_order[order] = worst
    assert by_order["score"] < 1.0  # floor or ceil of each stratum's share
    assert by_order["random"] > 1.5  # in random order the strata's counts vary as a simple random sample's


def test_group_scores_rank_positives_on_binary_pools_and_leave_multiclass_pools_in_random_order():
    pi = np.array([[0.7, 0.3], [0.2, 0.8], [0.9, 0.1]])
    np.testing.assert_allclose(group_scores(pi), [0.3, 0.8, 0.1])
    pi3 = np.array([[0.6, 0.3, 0.1], [0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.2, 0.5, 0.3]])
    assert group_scores(pi3) is None


def test_order_is_checked():
    assert make_design("online-poisson").order == "score"
    with pytest.raises(ValueError, match="order"):
        make_design("online-poisson", order="sorted")
