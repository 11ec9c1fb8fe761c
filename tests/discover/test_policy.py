"""The CRUX policy: the score, the elimination, the expansion, the samples, and the baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelwise.discover.costs import CostModel
from labelwise.discover.gain import (
    Recaptures,
    capped_unseen_mass,
    equal_popularity_total,
    expected_new,
)
from labelwise.discover.hierarchy import Hierarchy
from labelwise.discover.policy import Query, QueryPolicy


@pytest.fixture
def hierarchy() -> Hierarchy:
    frame = pd.DataFrame({"a": ["x", "x", "y", "y", "x", "y"], "b": ["p", "q", "p", "q", "p", "p"]})
    return Hierarchy.from_frame(frame, ["a", "b"])


COSTS = CostModel(per_query=1.0, per_item=0.1, per_excluded=0.0, per_level=1.0, k=(1, 2), l=(0, 1))


def test_choice_maximises_upper_gain_per_cost(hierarchy):
    policy = QueryPolicy(hierarchy, COSTS, "crux")
    policy.active[:] = True
    policy.gain[:] = 0.5
    policy.gain[3, 2] = 2.0  # config 2 = (k=2, l=0)
    policy.variance[:] = 0.01
    sigma = np.sqrt(0.01 * np.log(2))
    score = (policy.gain + sigma) / policy.price
    query = policy.choose(100.0, np.random.default_rng(0))
    assert (query.node, query.config) == np.unravel_index(np.argmax(score), score.shape)
    assert query.k == 2 and query.cost == pytest.approx(policy.price[3, 2])
    assert policy.choose(float(policy.price.min()) - 0.01, np.random.default_rng(0)) is None


def test_elimination_drops_upper_bounds_below_the_best_lower_bound(hierarchy):
    policy = QueryPolicy(hierarchy, CostModel(per_item=0.0, per_excluded=0.0, per_level=0.0, k=(1, 2), l=(0, 1)),
                         "crux")  # every query costs 1
    policy.expanded[:] = True
    policy.gain[:] = 1.0
    policy.gain[0, 0] = 3.0
    policy.variance[:] = 0.01
    policy.asked[0] = 1  # every node is sampled by one query
    sigma = np.sqrt(0.01 * np.log(2))
    policy.gain[1, 1] = 3.0 - 2 * sigma + 1e-9  # upper bound just above the threshold: kept
    policy.eliminate()
    kept = np.zeros_like(policy.active)
    kept[0, 0] = kept[1, 1] = True
    assert np.array_equal(policy.active, kept)
    policy.gain[0, 0] = policy.gain[1, 1] = 1.0  # the best ones exhausted: the others come back
    policy.eliminate()
    assert policy.active.all()


def test_elimination_compares_gains_per_cost(hierarchy):
    """Equal gains: the configurations too expensive for their upper bound to reach the best lower one go."""
    policy = QueryPolicy(hierarchy, COSTS, "crux")
    policy.expanded[:] = True
    policy.gain[:] = 1.0
    policy.variance[:] = 0.01
    sigma = np.sqrt(0.01 * np.log(2))
    policy.eliminate()
    expected = (1 + sigma) / policy.price >= np.max((1 - sigma) / policy.price)
    assert np.array_equal(policy.active, expected) and 0 < expected.sum() < expected.size


def test_record_updates_the_samples_below_and_expands(hierarchy):
    policy = QueryPolicy(hierarchy, COSTS, "crux")
    query = policy.choose(100.0, np.random.default_rng(0))
    assert query.node == 0
    new = policy.record(query, np.array([0, 2]))
    assert new == 2 and policy.found_in[0] == 2
    x = hierarchy.item_node[0, 0b01]
    entry, items, counts = policy.sample(np.array([0, x]))
    assert list(zip(entry, items, counts)) == [(0, 0, 1), (0, 2, 1), (1, 0, 1)]
    assert policy.record(query, np.array([0])) == 0
    _, _, counts = policy.sample(np.array([x]))
    assert list(counts) == [2]


EXCLUDING = CostModel(per_query=1.0, per_item=0.1, per_excluded=0.0, per_level=1.0, k=(1, 2), l=(0, 5))


def answered_at_root(hierarchy, name):
    """A policy after one root query (k = 2, no exclude list) answered with items 0 = (x, p) and 1 = (x, q)."""
    policy = QueryPolicy(hierarchy, EXCLUDING, name)
    query = policy.choose(100.0, np.random.default_rng(0))
    assert (query.node, query.k, query.exclude.size) == (0, 2, 0)
    policy.record(query, np.array([0, 1]))
    return policy


def test_crux_bonus_reaches_the_gain_at_the_unfound_count_the_children_imply(hierarchy):
    """Node a=x saw two singletons in two answers: jackknife f0 = 2 (2 - 1) / 2 = 1 new positive.  Its children
    (x, p) and (x, q) saw one singleton each, f0 = 1 each (the floor d + 1 with d = 0): together 2.  Excluding
    both positives found (l = 5), a query of k = 2 brings min(2, 1) = 1 by the node's own count and 2 by its
    children's; crux's bonus is at least the difference, greedy's gain is the node's own."""
    x = hierarchy.item_node[0, 0b01]
    crux = answered_at_root(hierarchy, "crux")
    config = int(np.flatnonzero((crux.k == 2) & (crux.l == 5))[0])
    assert crux.own_unfound[x] == pytest.approx(1.0) and crux.implied[[x, 0]] == pytest.approx([2.0, 2.0])
    assert crux.gain[x, config] == pytest.approx(1.0) and crux.ceiling[x, config] == pytest.approx(2.0)
    assert crux.spread(np.array([x * crux.k.size + config]))[0] >= 1.0 - 1e-12
    greedy = answered_at_root(hierarchy, "greedy")
    assert greedy.gain[x, config] == pytest.approx(1.0) and not greedy.ceiling.any()


def test_an_exhausted_node_gets_no_raised_bonus(hierarchy):
    """A query at a=x answered with fewer than k: a=x and the nodes below hold nothing more, whatever their
    samples say; the root's implied count no longer counts them."""
    crux = answered_at_root(hierarchy, "crux")
    x = hierarchy.item_node[0, 0b01]
    config = int(np.flatnonzero((crux.k == 2) & (crux.l == 0))[0])
    crux.record(Query(x, config, 2, np.zeros(0, dtype=np.int64), float(crux.price[x, config])), np.array([4]))
    below = hierarchy.below(x, np.flatnonzero(hierarchy.members(x))).ravel()
    assert crux.exhausted[below].all() and not crux.ceiling[below].any() and not crux.implied[below].any()


def test_a_query_activates_the_children_of_its_node_and_the_nodes_its_answers_reached(hierarchy):
    """A root query answered with item 1 = (x, q): the root's children a = x, a = y, b = p, b = q join, and so
    does the leaf (x, q) below them that the answer fell in; the other leaves do not."""
    policy = QueryPolicy(hierarchy, COSTS, "greedy")  # no elimination: the expansion alone
    assert policy.active.sum() == COSTS.configurations()[0].size
    query = policy.choose(100.0, np.random.default_rng(0))
    policy.record(query, np.array([1]))
    expected = np.zeros(hierarchy.n_nodes, dtype=bool)
    expected[[0, *hierarchy.children(0), hierarchy.item_node[1, 0b11]]] = True
    assert np.array_equal(policy.active.all(axis=1), expected)
    assert expected.sum() == 6 and hierarchy.n_nodes == 9  # the three other leaves stay out


def test_exclude_list_is_drawn_from_the_positives_found_in_the_node(hierarchy):
    policy = QueryPolicy(hierarchy, COSTS, "crux")
    policy.found[[0, 1, 2, 4]] = True
    x = hierarchy.item_node[0, 0b01]
    rng = np.random.default_rng(0)
    drawn = {tuple(policy.exclude_list(x, 2, rng)) for _ in range(200)}
    assert drawn == {(0, 1), (0, 4), (1, 4)}
    assert list(policy.exclude_list(x, 10, rng)) == [0, 1, 4]


def test_baselines(hierarchy):
    rng = np.random.default_rng(0)
    root = QueryPolicy(hierarchy, COSTS, "root").choose(100.0, rng)
    assert root.node == 0 and root.k == 2 and root.exclude.size == 0
    picks = {QueryPolicy(hierarchy, COSTS, "random").choose(100.0, rng).node for _ in range(300)}
    assert picks == set(range(hierarchy.n_nodes))
    with pytest.raises(ValueError, match="not one of"):
        QueryPolicy(hierarchy, COSTS, "best")


def test_a_short_answer_exhausts_the_node_and_everything_below(hierarchy):
    policy = QueryPolicy(hierarchy, COSTS, "greedy")
    x = hierarchy.item_node[0, 0b01]
    query = policy.choose(100.0, np.random.default_rng(0))
    policy.record(query, np.array([0, 1]))  # k = 2 answers: nothing learnt about exhaustion
    assert not policy.exhausted.any()
    short = type(query)(x, 2, 2, np.zeros(0, dtype=np.int64), 1.0)  # config 2: k = 2, l = 0
    policy.record(short, np.array([4]))
    below = {x, *hierarchy.children(x)}
    assert set(np.flatnonzero(policy.exhausted)) == below
    assert np.all(policy.gain[list(below)] == 0.0)
    estimate = policy.remaining()
    assert estimate["total"] >= 3 and policy.found[[0, 1, 4]].all()


def same(got: dict, want: dict) -> bool:
    """Equal estimates, numbers up to rounding."""
    numbers = ("total", "remaining", "unseen_share")
    return (got["doubts"] == want["doubts"] and got["lower_bound_only"] == want["lower_bound_only"]
            and got["interval"] == pytest.approx(want["interval"])
            and [got[k] for k in numbers] == pytest.approx([want[k] for k in numbers]))


def test_remaining_leaves_out_the_answers_of_queries_excluding_part_of_the_stratum():
    """Three clean queries of 3 at the only stratum and one excluding item 0: its answers are not in the sample."""
    from labelwise.discover.remaining import remaining_interval

    one_leaf = Hierarchy.from_frame(pd.DataFrame({"a": ["x"] * 12}), ["a"])
    policy = QueryPolicy(one_leaf, CostModel(k=(3,), l=(0,)), "root")
    query = policy.choose(100.0, np.random.default_rng(0))
    policy.record(query, np.array([0, 1, 2]))
    policy.record(type(query)(0, 0, 3, np.array([0]), 1.0), np.array([3, 4, 5]))
    policy.record(query, np.array([1, 6, 7]))
    policy.record(query, np.array([2, 8, 9]))
    clean = np.array([1, 2, 2, 0, 0, 0, 1, 1, 1, 1, 0, 0])
    assert same(policy.remaining(), remaining_interval(clean, 10, units=3.0))


def test_remaining_pools_what_no_query_split(hierarchy):
    """Root queries only: one stratum; a query at a=x splits the root along a; one at b=p, into leaves.

    The strata's samples are pooled, with ``T`` from the singletons' strata: ``(T - 1) / T`` is the mean
    of ``(m - 1) / m`` over the singletons, ``m`` the queries that sampled their stratum.
    """
    from labelwise.discover.remaining import remaining_interval

    def units(m: list[int]) -> float:
        return 1.0 / np.mean(1.0 / np.array(m))

    policy = QueryPolicy(hierarchy, CostModel(k=(2,), l=(0,)), "root")
    root = policy.choose(100.0, np.random.default_rng(0))
    for answer in ([0, 1], [1, 2], [3, 5]):
        policy.record(root, np.array(answer))
    assert same(policy.remaining(), remaining_interval(policy.returns, 5, units=3.0))
    x = hierarchy.item_node[0, 0b01]
    policy.record(type(root)(x, 0, 2, np.zeros(0, dtype=np.int64), 1.0), np.array([0, 4]))
    # singletons 2, 3, 5 in a=y (3 queries), 4 in a=x (4 queries)
    assert same(policy.remaining(), remaining_interval(policy.returns, 6, units=units([3, 3, 3, 4])))
    p = hierarchy.item_node[0, 0b10]
    policy.record(type(root)(p, 0, 2, np.zeros(0, dtype=np.int64), 1.0), np.array([0, 2]))
    # singletons 3 in (y, q): 3 queries, 4 in (x, p): 5, 5 in (y, p): 4
    assert same(policy.remaining(), remaining_interval(policy.returns, 6, units=units([3, 5, 4])))


@pytest.mark.parametrize("name", ["crux", "greedy"])
def test_the_first_query_asks_the_root_for_the_most_new_answers_per_cost(hierarchy, name):
    """Nothing found yet: every answer is new, so the gain of (k, l) at the root is k and k = 2 at 1.2 beats
    k = 1 at 1.1 (the exclude list is empty either way)."""
    query = QueryPolicy(hierarchy, COSTS, name).choose(100.0, np.random.default_rng(0))
    assert (query.node, query.k, query.exclude.size) == (0, 2, 0)


def test_the_bonus_shrinks_with_the_queries_that_sampled_the_node(hierarchy):
    """n_{q,t} of a configuration: the queries at its node or above it (at least 1)."""
    policy = QueryPolicy(hierarchy, COSTS, "crux")
    x, p = hierarchy.item_node[0, 0b01], hierarchy.item_node[0, 0b10]
    xp, yp = hierarchy.item_node[0, 0b11], hierarchy.item_node[2, 0b11]
    nodes = np.array([0, x, p, xp, yp])
    assert list(policy.sampled_by(nodes)) == [0, 0, 0, 0, 0]
    root = policy.choose(100.0, np.random.default_rng(0))
    policy.record(root, np.array([0, 2]))
    policy.record(type(root)(x, 0, 1, np.zeros(0, dtype=np.int64), 1.0), np.array([1]))
    assert list(policy.sampled_by(nodes)) == [1, 2, 1, 2, 1]
    policy.variance[:] = 0.5
    flat = nodes * COSTS.configurations()[0].size
    assert policy.spread(flat) == pytest.approx(np.sqrt(0.5 * np.log(4) / np.array([1, 2, 1, 2, 1])))


def test_earlier_recaptures_of_a_node_weigh_its_found_count_then_over_now():
    """Two root queries without exclude list: 0-4 (all new), then 0, 2 (found before, in the node a=0) and 6 (new,
    in a=0).  The root's found count grows 5 -> 6: its 5 earlier new answers weigh 5/6, plus the new one.  Node
    a=0 (0, 2, 4 found) grows 3 -> 4: 3 * 3/4 + 1.  Node a=1 (1 and 3) gains no positive and keeps its sums."""
    frame = pd.DataFrame({"a": [str(i % 2) for i in range(20)], "b": [str(i % 5) for i in range(20)]})
    hierarchy = Hierarchy.from_frame(frame, ["a", "b"])
    policy = QueryPolicy(hierarchy, CostModel(k=(5,), l=(0,)), "crux")
    none = np.zeros(0, dtype=np.int64)
    policy.record(Query(0, 0, 5, none, 1.0), np.arange(5))
    policy.record(Query(0, 0, 5, none, 1.0), np.array([0, 2, 6]))
    even, odd = hierarchy.item_node[[0, 1], 1]  # the nodes a=0 and a=1
    assert policy.weighted_new[[0, even, odd]] == pytest.approx([5 * 5 / 6 + 1, 3 * 3 / 4 + 1, 2])
    assert policy.recaptured[[0, even, odd]] == pytest.approx([2, 2, 0])


def test_crux_unseen_mass_comes_from_recaptures_not_from_exclusion_made_singletons():
    """Root queries: 5 new (no exclude list), 10 new excluding those 5, 10 new excluding all 15, then 5 answers
    with no exclude list, all found before (3 of the first, 2 of the second).  The root's sample: 30 answers,
    20 singletons (Good-Turing's unseen mass 2/3: the excluded positives could not come back).  Recaptures: 5
    new answers weighed 1 (nothing found was excluded), each scaled by the found count then (5) over that now
    (25): 1 in all; 20 weighed 0 (everything found was); 5 recaptured: an unseen mass of 1 / 6.  crux's root
    gains are those at it; greedy keeps Good-Turing's."""
    frame = pd.DataFrame({"a": [str(i % 2) for i in range(40)], "b": [str(i % 3) for i in range(40)]})
    hierarchy = Hierarchy.from_frame(frame, ["a", "b"])
    costs = CostModel(k=(5, 10), l=(0, 50))
    none = np.zeros(0, dtype=np.int64)
    first, second, third = np.arange(5), np.arange(5, 15), np.arange(15, 25)
    answers = [(5, none, first), (10, first, second), (10, np.arange(15), third), (5, none, np.array([0, 1, 2, 5, 6]))]
    gains = {}
    for name in ("crux", "greedy"):
        policy = QueryPolicy(hierarchy, costs, name)
        for k, exclude, returned in answers:
            config = int(np.flatnonzero((policy.k == k) & (policy.l == (0 if exclude.size == 0 else 50)))[0])
            policy.record(Query(0, config, k, exclude, float(policy.price[0, config])), returned)
        gains[name] = policy.gain[0]
    counts = np.array([2] * 5 + [1] * 20)
    stats = (30, 25, 20, np.sum(counts ** 2))
    assert gains["crux"] == pytest.approx(expected_new(*stats, 25, policy.k, policy.l, unseen_mass=np.array(1 / 6)))
    assert gains["greedy"] == pytest.approx(expected_new(*stats, 25, policy.k, policy.l))
    assert gains["crux"][0] < gains["greedy"][0]  # k = 5 without exclude list: fewer new ones expected


@pytest.mark.parametrize("name", ["crux", "greedy"])
def test_crux_root_count_is_at_least_the_equal_popularity_estimate_of_its_clean_answers(name):
    """Two root queries without exclude list return items 0-9 and 5-14 (n = 20, S = 15, f1 = 10, f2 = 5); a
    query at the node a = 0 excluding what it found there returns 16, 18, .., 24 (20 found).  The jackknife
    leaves the root 10 * 19/20 - 5 = 4.5 unfound (5 of its unseen found elsewhere); with equal popularity 15
    of 20 draws say about 33 positives (:func:`equal_popularity_total`), 13 unfound, and crux's root gains are
    those at that count; greedy keeps the jackknife's."""
    frame = pd.DataFrame({"a": [str(i % 2) for i in range(40)], "b": [str(i % 3) for i in range(40)]})
    hierarchy = Hierarchy.from_frame(frame, ["a", "b"])
    costs = CostModel(k=(5, 10), l=(0, 50))
    policy = QueryPolicy(hierarchy, costs, name)
    none = np.zeros(0, dtype=np.int64)
    config = {(k, l): int(np.flatnonzero((policy.k == k) & (policy.l == l))[0]) for k in (5, 10) for l in (0, 50)}
    for returned in (np.arange(10), np.arange(5, 15)):
        policy.record(Query(0, config[10, 0], 10, none, float(policy.price[0, config[10, 0]])), returned)
    even = hierarchy.item_node[0, 0b01]
    policy.record(Query(even, config[5, 50], 5, np.arange(0, 15, 2), float(policy.price[even, config[5, 50]])),
                  np.arange(16, 25, 2))
    unfound = float(equal_popularity_total(20.0, 15.0)) - 20
    assert 12.5 < unfound < 13.5
    counts = np.array([1] * 5 + [2] * 5 + [1] * 5)
    stats = (20, 15, 10, np.sum(counts ** 2))
    if name == "greedy":
        assert policy.gain[0] == pytest.approx(expected_new(*stats, 20, policy.k, policy.l))
        return
    assert policy.own_unfound[0] == pytest.approx(unfound)
    recaptures = Recaptures(policy.weighted_new[:1], policy.recaptured[:1])
    unseen = capped_unseen_mass(recaptures, 20.0, 15.0, 10.0, 5.0, 20.0, unfound)
    assert policy.gain[0] == pytest.approx(expected_new(*stats, 20, policy.k, policy.l, unfound, unseen))
    assert policy.gain[0, config[10, 0]] > expected_new(*stats, 20, 10, 0, 4.5, unseen)[0]
