"""Tests of labelwise.partition.hierarchy: complete trees over leaf blocks.

Sections 4 and 5.2 of N. G. Marchant and B. I. P. Rubinstein, "Needle in a
Haystack: Label-Efficient Evaluation under Extreme Class Imbalance", KDD 2021.
"""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.partition import (
    Hierarchy,
    feature_hierarchy,
    make_strata,
    score_hierarchy,
)

SHAPES = [(1, 2), (1, 7), (2, 2), (3, 2), (2, 3), (4, 2), (2, 4)]


# ---------------------------------------------------------------- brute force
def brute_ancestor(leaf: int, level: int, depth: int, b: int) -> int:
    node = leaf
    for _ in range(depth - level):  # walk up parent links one at a time
        node = node // b
    return node


def brute_children(node: int, b: int) -> list[int]:
    return [node * b + c for c in range(b)]


# ---------------------------------------------------------------- Hierarchy
@pytest.mark.parametrize("depth,b", SHAPES)
def test_shapes_and_block_sizes(depth, b):
    rng = np.random.default_rng(depth * 10 + b)
    K = b**depth
    blocks = rng.integers(0, K, 50)
    h = Hierarchy(depth=depth, branching=b, blocks=blocks)
    assert h.n_leaves == K
    assert h.n_items == 50
    np.testing.assert_array_equal(h.block_sizes, [np.sum(blocks == k) for k in range(K)])
    assert [h.level_size(level) for level in range(depth + 1)] == [b**level for level in range(depth + 1)]


@pytest.mark.parametrize("depth,b", SHAPES)
def test_ancestors_match_parent_walk(depth, b):
    h = Hierarchy(depth=depth, branching=b, blocks=np.zeros(1, dtype=int))
    for level in range(depth + 1):
        anc = h.ancestors(level)
        assert anc.shape == (h.n_leaves,)
        expected = [brute_ancestor(k, level, depth, b) for k in range(h.n_leaves)]
        np.testing.assert_array_equal(anc, expected)
    np.testing.assert_array_equal(h.ancestors(0), 0)
    np.testing.assert_array_equal(h.ancestors(depth), np.arange(h.n_leaves))
    # children of node j at level l are j*b .. j*b+b-1 at level l+1
    for level in range(depth):
        up, down = h.ancestors(level), h.ancestors(level + 1)
        for j in range(b**level):
            assert sorted(set(down[up == j].tolist())) == brute_children(j, b)


@pytest.mark.parametrize("depth,b", SHAPES)
def test_subtree_sums_match_brute_force(depth, b):
    rng = np.random.default_rng(3)
    h = Hierarchy(depth=depth, branching=b, blocks=np.zeros(1, dtype=int))
    vals = rng.normal(size=(3, h.n_leaves, 2))  # a leading batch axis
    sums = h.subtree_sums(vals)
    assert len(sums) == depth + 1
    for level in range(depth + 1):
        assert sums[level].shape == (3, b**level, 2)
        for j in range(b**level):
            leaves = [k for k in range(h.n_leaves) if brute_ancestor(k, level, depth, b) == j]
            np.testing.assert_allclose(sums[level][:, j, :], vals[:, leaves, :].sum(axis=1))
    one_d = h.subtree_sums(vals[0, :, 0])
    for level in range(depth + 1):
        np.testing.assert_allclose(one_d[level], sums[level][0, :, 0])
    with pytest.raises(ValueError, match="leaf_values"):
        h.subtree_sums(np.ones((h.n_leaves + 1, 2)))


def test_item_nodes():
    h = Hierarchy(depth=3, branching=2, blocks=np.array([0, 5, 7, 2]))
    np.testing.assert_array_equal(h.item_nodes(1), [0, 1, 1, 0])
    np.testing.assert_array_equal(h.item_nodes(3), h.blocks)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(depth=0, branching=2, blocks=[0]), "depth"),
        (dict(depth=2, branching=1, blocks=[0]), "branching"),
        (dict(depth=2.0, branching=2, blocks=[0]), "depth"),
        (dict(depth=2, branching=2, blocks=[4]), "blocks"),
        (dict(depth=2, branching=2, blocks=[-1]), "blocks"),
        (dict(depth=2, branching=2, blocks=[]), "blocks"),
        (dict(depth=2, branching=2, blocks=[[0]]), "blocks"),
        (dict(depth=2, branching=2, blocks=["a"]), "blocks"),
        (dict(depth=40, branching=2, blocks=[0]), "depth, branching"),
    ],
)
def test_hierarchy_validation(kwargs, name):
    kwargs = dict(kwargs, blocks=np.asarray(kwargs["blocks"]))
    with pytest.raises(ValueError, match=name):
        Hierarchy(**kwargs)


def test_level_validation():
    h = Hierarchy(depth=2, branching=2, blocks=np.array([0]))
    with pytest.raises(ValueError, match="level"):
        h.ancestors(3)
    with pytest.raises(ValueError, match="level"):
        h.ancestors(-1)


# ---------------------------------------------------------------- score_hierarchy
def assert_score_order(scores: np.ndarray, blocks: np.ndarray) -> None:
    order = np.argsort(scores, kind="stable")
    assert np.all(np.diff(blocks[order]) >= 0), "an item of higher score is in a leaf of lower index"


@pytest.mark.parametrize(
    "n_blocks,depth,b", [(256, 8, 2), (16, 1, 16), (5, 3, 2), (64, 3, 4), (1, 2, 2), (9, 2, 3)]
)
@pytest.mark.parametrize("method", ["csf", "quantile"])
def test_score_order_preserved(n_blocks, depth, b, method):
    rng = np.random.default_rng(n_blocks)
    scores = np.concatenate([rng.beta(0.3, 3.0, 3000), np.round(rng.random(500), 2)])
    h = score_hierarchy(scores, n_blocks=n_blocks, depth=depth, branching=b, method=method)
    assert (h.depth, h.branching, h.n_leaves) == (depth, b, b**depth)
    assert_score_order(scores, h.blocks)
    strata = make_strata(scores, n_blocks, method)
    k_used = strata.sizes.size
    # each stratum is one leaf, at floor(k * n_leaves / K')
    leaf = (np.arange(k_used) * h.n_leaves) // k_used
    np.testing.assert_array_equal(h.blocks, leaf[strata.assignment])
    assert np.count_nonzero(h.block_sizes) == k_used


def test_score_hierarchy_ours8_and_ours1():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=5000)
    ours8 = score_hierarchy(scores)  # defaults: 2**8 CSF bins, depth 8, branching 2
    ours1 = score_hierarchy(scores, n_blocks=256, depth=1, branching=256)
    strata = make_strata(scores, 256, "csf")
    assert strata.sizes.size == 256
    np.testing.assert_array_equal(ours8.blocks, strata.assignment)  # breadth-first = left to right
    np.testing.assert_array_equal(ours1.blocks, strata.assignment)


def test_score_hierarchy_spreads_few_blocks():
    scores = np.array([0.1, 0.1, 0.5, 0.9, 0.9, 0.5])  # 3 distinct scores -> 3 blocks
    h = score_hierarchy(scores, n_blocks=8, depth=3, branching=2)
    # blocks 0, 1, 2 -> leaves floor(k * 8 / 3) = 0, 2, 5: spread, order kept, the rest empty
    np.testing.assert_array_equal(h.blocks, [0, 0, 2, 5, 5, 2])
    np.testing.assert_array_equal(h.block_sizes, [2, 0, 2, 0, 0, 2, 0, 0])
    # the two lowest blocks share the left subtree, the top one is in the right one
    np.testing.assert_array_equal(h.item_nodes(1), [0, 0, 0, 1, 1, 0])


def test_score_hierarchy_too_many_blocks():
    with pytest.raises(ValueError, match="n_blocks, depth, branching") as err:
        score_hierarchy(np.arange(100.0), n_blocks=300, depth=8, branching=2)
    assert "256" in str(err.value)
    with pytest.raises(ValueError, match="n_blocks"):
        score_hierarchy(np.arange(10.0), n_blocks=0)
    with pytest.raises(ValueError, match="scores"):
        score_hierarchy(np.array([0.0, np.nan]), n_blocks=2, depth=1, branching=2)
    with pytest.raises(ValueError, match="method"):
        score_hierarchy(np.arange(10.0), n_blocks=2, depth=1, branching=2, method="kmeans")


# ---------------------------------------------------------------- feature_hierarchy
def brute_kd(X: np.ndarray, depth: int, b: int) -> np.ndarray:
    """Recursive k-d tree, one node at a time (the reference for the vectorised builder)."""
    leaf = np.zeros(X.shape[0], dtype=int)

    def split(items: np.ndarray, node: int, level: int) -> None:
        if level == depth:
            leaf[items] = node
            return
        n = items.size
        children: list[list[int]] = [[] for _ in range(b)]
        if n:
            f = int(np.argmax(X[items].var(axis=0)))
            ranked = items[np.argsort(X[items, f], kind="stable")]
            for rank, i in enumerate(ranked):
                children[rank * b // n].append(i)
        for c in range(b):
            split(np.array(children[c], dtype=int), node * b + c, level + 1)

    split(np.arange(X.shape[0]), 0, 0)
    return leaf


@pytest.mark.parametrize("n,depth,b", [(200, 3, 2), (101, 4, 2), (90, 2, 3), (7, 3, 2), (3, 3, 2), (1, 2, 2)])
def test_kd_tree_matches_recursive_reference(n, depth, b):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 3)) * np.array([1.0, 3.0, 0.5])
    h = feature_hierarchy(X, depth=depth, branching=b)
    np.testing.assert_array_equal(h.blocks, brute_kd(X, depth, b))


def test_kd_tree_balanced_and_respects_medians():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=333), 5 * rng.normal(size=333)])
    depth, b = 4, 2
    h = feature_hierarchy(X, depth=depth, branching=b)
    for level in range(depth):
        parent, child = h.item_nodes(level), h.item_nodes(level + 1)
        for j in range(b**level):
            members = parent == j
            counts = [np.sum(child == j * b + c) for c in range(b)]
            assert max(counts) - min(counts) <= 1  # equal-count split
            f = int(np.argmax(X[members].var(axis=0)))  # highest-variance feature of the node
            for c in range(b - 1):
                lo = X[child == j * b + c, f]
                hi = X[child == j * b + c + 1, f]
                assert lo.max() <= hi.min()  # cut at the median
                med = np.median(X[members, f])
                assert lo.max() <= med <= hi.min()
    assert h.block_sizes.max() - h.block_sizes.min() <= 1


def test_kd_tree_one_feature_and_ties():
    h = feature_hierarchy(np.array([3.0, 0.0, 2.0, 1.0, 1.0, 1.0]), depth=1, branching=3)
    np.testing.assert_array_equal(h.blocks, [2, 0, 2, 0, 1, 1])  # ties broken by position
    h2 = feature_hierarchy(np.zeros((5, 2)), depth=2, branching=2)  # constant features still split
    assert h2.block_sizes.tolist() == [2, 1, 1, 1]


def test_kd_tree_validation():
    with pytest.raises(ValueError, match="features"):
        feature_hierarchy(np.array([[0.0, np.inf]]))
    with pytest.raises(ValueError, match="features"):
        feature_hierarchy(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="depth"):
        feature_hierarchy(np.zeros((4, 2)), depth=0)
