"""The census of each node's positives: the recapture likelihood given the exclude lists, the allocation of the
answers of queries above, the equal-popularity test, and crux's gains at the census count."""

from __future__ import annotations

from math import comb, log

import numpy as np
import pandas as pd
import pytest

from labelwise.discover.census import popularity_looks_equal
from labelwise.discover.costs import CostModel
from labelwise.discover.hierarchy import Hierarchy
from labelwise.discover.policy import Query, QueryPolicy

COSTS = CostModel(k=(2, 3, 10), l=(0, 1, 50))


def halves(items: int) -> Hierarchy:
    """Items ``0 .. items - 1`` with ``a = i % 2``: the root and two nodes (even, odd)."""
    return Hierarchy.from_frame(pd.DataFrame({"a": [str(i % 2) for i in range(items)]}), ["a"])


def ask(policy: QueryPolicy, node: int, returned, exclude=()) -> None:
    """Record a query at ``node`` answered in full (k = the answers' number)."""
    k = len(returned)
    config = int(np.flatnonzero(policy.k == k)[0])
    policy.record(Query(node, config, k, np.asarray(exclude, dtype=np.int64), 1.0), np.asarray(returned))


def posterior_mean(loglik, low: int, high: int) -> float:
    """Mean of ``N`` in ``low .. high`` under the flat prior and ``loglik(N)``."""
    values = np.arange(low, high + 1)
    weights = np.exp([loglik(n) for n in values] - np.max([loglik(n) for n in values]))
    return float(weights @ values / weights.sum())


def test_recapture_likelihood_of_a_hand_history():
    """Three queries at the even node (20 items, every grid point exact): 0, 2, 4 (all new: no information);
    excluding 0, two answers 2 and 6 (F = 3, e = 1, one new): P = C(N - 3, 1) C(2, 1) / C(N - 1, 2); then 0, 2,
    8 (F = 4, e = 0, one new): P = C(N - 4, 1) C(4, 2) / C(N, 3).  With 5 found, the likelihood at N = 5, 6, 7
    is 2/3 * 3/5 = 0.4, 3/5 * 3/5 = 0.36 and 8/15 * 18/35 = 0.274: the MLE is 5, and the census is the
    posterior mean over 5 .. 20 less the 5 found."""
    hierarchy = halves(40)
    even = int(hierarchy.item_node[0, 1])
    policy = QueryPolicy(hierarchy, COSTS, "crux")
    ask(policy, even, [0, 2, 4])
    ask(policy, even, [2, 6], exclude=[0])
    ask(policy, even, [0, 2, 8])

    def loglik(n: int) -> float:
        return log(comb(n - 3, 1) * comb(2, 1) / comb(n - 1, 2) * comb(n - 4, 1) * comb(4, 2) / comb(n, 3))

    assert [np.exp(loglik(n)) for n in (5, 6, 7)] == pytest.approx([0.4, 0.36, 8 / 15 * 18 / 35])
    census = policy.census
    grid = census.grid[census.grid >= 5]
    assert grid[np.argmax(census.loglik[even, census.grid >= 5])] == 5
    counted = census.count(np.array([even]), policy.found_in, policy.exhausted, 40.0)
    assert counted[0, 0] == pytest.approx(posterior_mean(loglik, 5, 20) - 5, rel=1e-9)


def test_answers_of_a_query_above_tell_the_count_by_their_share():
    """A root query's 4 answers, 3 of them even (all new): the even node's recapture term C(N, 3) / C(N, 3) is 1
    and its Poisson allocation m log N - N M / N_root = 3 log N - 4 N / 40: the posterior mean over 3 .. 20."""
    hierarchy = halves(40)
    even = int(hierarchy.item_node[0, 1])
    policy = QueryPolicy(hierarchy, CostModel(k=(4,), l=(0,)), "crux")
    ask(policy, 0, [0, 2, 4, 1])
    counted = policy.census.count(np.array([even]), policy.found_in, policy.exhausted, 40.0)
    assert counted[0, 0] == pytest.approx(posterior_mean(lambda n: 3 * log(n) - 4 * n / 40, 3, 20) - 3, rel=1e-9)


def test_equal_popularity_is_told_from_zipf_once_the_sample_can_tell():
    rng = np.random.default_rng(0)
    even = np.bincount(rng.integers(0, 500, 2000), minlength=500)
    weights = 1.0 / np.arange(1, 501)
    skewed = np.bincount(rng.choice(500, 2000, p=weights / weights.sum()), minlength=500)
    assert popularity_looks_equal(even)
    assert not popularity_looks_equal(skewed)
    assert not popularity_looks_equal(np.bincount(rng.integers(0, 500, 15)))  # 15 answers: too few to tell


def test_crux_gain_with_every_found_positive_excluded_is_the_census_count():
    """431 equally popular positives, 31 in node A (a = 0) and 400 in B, 40 root queries of 10 drawn uniformly:
    the root's clean counts look equally popular, so crux's count at A is its census, by hand: each root query
    adds log C(N - F, new) - log C(N, m) + m log N (F found in A before it, m answers in A, new of them new)
    and the answers expected per positive, -N sum M / N_root = -400 N / N_root, with N_root the root's
    estimate.  An exclude list of every positive found there makes every answer new: the gain is
    min(k, census)."""
    hierarchy = Hierarchy.from_frame(pd.DataFrame({"a": ["0"] * 31 + ["1"] * 400}), ["a"])
    node = int(hierarchy.item_node[0, 1])
    policy = QueryPolicy(hierarchy, CostModel(k=(10, 20), l=(0, 50)), "crux")
    rng = np.random.default_rng(3)
    history = []
    for j in range(40):  # the last one returns a positive of A, so A's gains are up to date
        returned = np.append(rng.choice(np.arange(31, 431), 9, replace=False), 30) if j == 39 else rng.choice(
            431, 10, replace=False)
        inside = returned[returned < 31]
        history.append((int(policy.found_in[node]), inside.size, int(np.sum(~policy.found[inside]))))
        ask(policy, 0, returned)
    assert popularity_looks_equal(policy.root_clean)
    root = policy.found_in[0] + policy.root_unfound(np.zeros(1, dtype=np.int64))[0]

    def loglik(n: int) -> float:
        return sum(log(comb(n - f, new) / comb(n, m)) + m * log(n) for f, m, new in history) - n * 400 / root

    found = int(policy.found_in[node])
    counted = posterior_mean(loglik, found, 31) - found
    assert 3 < counted < 20
    for config in np.flatnonzero(policy.l == 50):
        assert policy.gain[node, config] == pytest.approx(min(policy.k[config], counted), rel=1e-9)
