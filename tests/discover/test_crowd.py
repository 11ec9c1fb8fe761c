"""The simulated crowd draws by popularity without replacement, inside the node, outside the exclude list."""

from __future__ import annotations

import numpy as np
import pandas as pd

from labelwise.discover.costs import CostModel
from labelwise.discover.crowd import SimulatedCrowd, best_query
from labelwise.discover.hierarchy import Hierarchy
from labelwise.discover.policy import Query, QueryPolicy


def crowd_of(weights, groups=None):
    n = len(weights)
    frame = pd.DataFrame({"g": groups if groups is not None else ["x"] * n})
    hierarchy = Hierarchy.from_frame(frame, ["g"])
    return hierarchy, SimulatedCrowd(hierarchy, np.ones(n, dtype=bool), np.asarray(weights, dtype=float))


def query(node=0, k=1, exclude=()):
    return Query(node, 0, k, np.asarray(exclude, dtype=np.int64), 1.0)


def test_two_of_three_by_successive_sampling():
    """P(i among 2 draws without replacement) = sum_j [w_i/W w_j/(W-w_i) + w_j/W w_i/(W-w_j)], within 3 SE."""
    w = np.array([6.0, 3.0, 1.0])
    W = w.sum()
    exact = np.array([sum(w[i] / W * w[j] / (W - w[i]) + w[j] / W * w[i] / (W - w[j]) for j in range(3) if j != i)
                      for i in range(3)])
    _, crowd = crowd_of(w)
    rng = np.random.default_rng(0)
    runs = 4000
    hits = np.zeros(3)
    for _ in range(runs):
        answer = crowd.answer(query(k=2), rng)
        assert answer.size == 2 and np.unique(answer).size == 2
        hits[answer] += 1
    se = np.sqrt(exact * (1 - exact) / runs)
    assert np.all(np.abs(hits / runs - exact) <= 3 * se)


def test_answers_stay_in_the_node_and_off_the_exclude_list():
    hierarchy, crowd = crowd_of(np.ones(6), groups=["a", "a", "a", "b", "b", "b"])
    node_a = hierarchy.item_node[0, 1]
    rng = np.random.default_rng(1)
    answer = crowd.answer(query(node_a, k=5, exclude=[1]), rng)
    assert sorted(answer) == [0, 2]  # fewer than k: only two eligible positives
    assert crowd.answer(query(node_a, k=3, exclude=[0, 1, 2]), rng).size == 0


def test_oracle_yields_are_exact_at_equal_popularity():
    """Equal weights: k answers among E eligible positives, U of them unfound, bring k U / E new (exact)."""
    hierarchy, crowd = crowd_of(np.ones(6), groups=["a", "a", "a", "b", "b", "b"])
    costs = CostModel(per_query=1.0, per_item=0.5, per_excluded=0.0, per_level=1.0, k=(1, 2), l=(0, 1))
    state = QueryPolicy(hierarchy, costs, "root")
    state.record(state.query_at(0, 0, np.random.default_rng(0)), np.array([0]))  # item 0 (in a) found
    node_a, node_b = hierarchy.item_node[0, 1], hierarchy.item_node[3, 1]
    k = state.k.astype(float)
    new = np.zeros((hierarchy.n_nodes, k.size))
    new[0] = np.where(state.l == 0, 5 * k / 6, k)  # the exclude list of 1 takes out the one found
    new[node_a] = np.where(state.l == 0, 2 * k / 3, k)
    new[node_b] = k  # nothing found there
    rate = crowd.yield_per_cost(state, np.inf)
    assert np.allclose(rate, new / state.price)
    query = best_query(state, rate, np.random.default_rng(1))
    assert (query.node, query.config) == np.unravel_index(np.argmax(rate), rate.shape)
    cheapest = float(state.price.min())
    assert np.isneginf(crowd.yield_per_cost(state, cheapest)[state.price > cheapest]).all()
    assert best_query(state, crowd.yield_per_cost(state, cheapest - 0.01), np.random.default_rng(1)) is None
