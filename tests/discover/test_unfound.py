"""The recapture estimate of the positives not found: Chapman's exact unbiasedness, the pooled batches, the gain."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import hypergeom

from labelwise.discover.gain import recapture_new
from labelwise.discover.unfound import chapman_unfound


def one_batch(new: int, recaught: int, marked: int) -> float:
    """The estimate after one query of the node found ``new`` (nothing found since)."""
    unfound, informative = chapman_unfound(np.array([0]), np.array([new]), np.array([recaught]), np.array([marked]),
                                           np.array([10]), np.array([10.0 + new]), np.ones((1, 1)))
    assert informative[0, 0]
    return float(unfound[0, 0])


@pytest.mark.parametrize("unfound", range(5))
@pytest.mark.parametrize("marked", range(1, 5))
def test_chapman_is_unbiased_when_the_query_asks_for_every_positive_not_found(unfound, marked):
    """Equal popularity: the new answers among C are hypergeometric; for every C >= U (and at most U + M
    eligible) the expected estimate is the true number not found after the query, U - E[new], exactly."""
    for answers in range(max(unfound, 1), unfound + marked + 1):
        law = hypergeom(unfound + marked, unfound, answers)
        new = np.arange(0, min(answers, unfound) + 1)
        mean = sum(law.pmf(x) * one_batch(x, answers - x, marked) for x in new)
        assert mean == pytest.approx(unfound - sum(law.pmf(x) * x for x in new), abs=1e-12)


def test_pooled_batches_subtract_what_was_found_since():
    """Two batches of one node: sum_b [M_b (C_b - R_b) - R_b D_b] / (sum_b R_b + 1), D_b found since."""
    node, new, recaught = np.array([0, 0]), np.array([3, 1]), np.array([2, 4])
    marked, before = np.array([5, 8]), np.array([5, 8])
    unfound, _ = chapman_unfound(node, new, recaught, marked, before, np.array([9.0]), np.ones((1, 2)))
    assert unfound[0, 0] == pytest.approx((5 * 3 - 2 * 4 + 8 * 1 - 4 * 1) / 7)


def test_no_batch_is_not_informative_and_weights_resample_batches():
    node = np.array([1, 1])
    unfound, informative = chapman_unfound(node, np.array([2, 2]), np.array([1, 1]), np.array([4, 4]),
                                           np.array([4, 4]), np.array([0.0, 6.0]), np.array([[1, 1], [2, 0]]))
    assert not informative[:, 0].any() and informative[:, 1].all()
    assert unfound[1, 1] == pytest.approx(2 * (4 * 2 - 1 * 2) / (2 + 1))


@pytest.mark.parametrize("unfound, found, k, l", [(3, 4, 2, 0), (3, 4, 5, 1), (2, 6, 10, 0), (4, 4, 3, 9)])
def test_equal_popularity_gain_is_the_hypergeometric_mean(unfound, found, k, l):
    eligible = unfound + found - min(l, found)
    draws = min(k, eligible)
    expected = sum(x * hypergeom(eligible, unfound, draws).pmf(x) for x in range(draws + 1))
    assert recapture_new(np.array(float(unfound)), np.array(float(unfound)), np.array(float(found)), np.array(k),
                         np.array(l)) == pytest.approx(expected)
