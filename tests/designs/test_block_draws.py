"""Draws with replacement from a block proposal by the shared item hash (labelwise.designs.block_draws)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from labelwise.designs.block_draws import (
    BlockDraws,
    appearance,
    block_ranks,
)
from labelwise.designs.hashed import HashOrder


def first_draws(keys: np.ndarray) -> np.ndarray:
    """The draws where each distinct key first appears, in increasing order (the reference computation)."""
    return np.sort(np.unique(keys, return_index=True)[1])


def drawn_items(keys: np.ndarray, start: np.ndarray, orders: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The items of draws with ``keys`` when block ``b``'s items in hash order are ``orders[b]``."""
    distinct = keys[first_draws(keys)]
    blocks, ranks = block_ranks(distinct, start)
    items = np.array([orders[b][r] for b, r in zip(blocks, ranks, strict=True)])
    return tuple(items[appearance(keys, distinct)].tolist())


def test_ranked_indices_on_a_random_order_are_exactly_uniform_draws_with_replacement():
    # two blocks of 3 and 2 items, 3 draws in the first and 2 in the second: every index sequence (3^3 2^2) and
    # every hash order of each block (3! 2!) equally likely; each item sequence must come out 3! 2! times
    sizes, start = (3, 2), np.array([0, 3])
    items = (("a", "b", "c"), ("d", "e"))
    seen = Counter()
    for v0 in itertools.product(range(3), repeat=3):
        for v1 in itertools.product(range(2), repeat=2):
            keys = np.array([v0[0], 3 + v1[0], v0[1], v0[2], 3 + v1[1]])  # the blocks interleaved
            for o0 in itertools.permutations(range(sizes[0])):
                for o1 in itertools.permutations(range(sizes[1])):
                    orders = [tuple(items[0][i] for i in o0), tuple(items[1][i] for i in o1)]
                    seen[drawn_items(keys, start, orders)] += 1
    assert len(seen) == 3**3 * 2**2
    assert set(seen.values()) == {6 * 2}


def test_ranks_count_the_earlier_distinct_keys_of_the_block():
    keys = np.array([4, 1, 4, 0, 6, 1, 5, 2])  # blocks [0, 3) and [3, 7)
    distinct = keys[first_draws(keys)]
    assert distinct.tolist() == [4, 1, 0, 6, 5, 2]
    blocks, ranks = block_ranks(distinct, np.array([0, 3]))
    assert blocks.tolist() == [1, 0, 0, 1, 1, 0] and ranks.tolist() == [0, 0, 1, 1, 2, 2]
    assert appearance(keys, distinct).tolist() == [0, 1, 0, 2, 3, 1, 4, 5]


def test_the_sequence_is_the_same_however_far_it_is_read():
    q = np.array([0.5, 0.3, 0.2]) / np.array([2, 30, 500])
    counts = np.array([2, 30, 500])
    far = BlockDraws(11, q, counts)
    n = far.draws_for(400)
    near = BlockDraws(11, q, counts)
    for k in (1, 50, 399, 400):  # read in steps
        near.draws_for(k)
    assert near.draws_for(400) == n
    assert np.array_equal(near.appearance(n), far.appearance(n))
    assert all(np.array_equal(a, b) for a, b in zip(near.ranks(400), far.ranks(400), strict=True))


def test_items_are_drawn_with_the_proposal_probabilities():
    # 3 blocks of 1, 2 and 5 items: the first 12 draws of 800 seeds, item frequencies against counts q per block
    # (chi-square, 7 dof, 99.9% quantile 24.3)
    counts = np.array([1, 2, 5])
    q = np.array([0.3, 0.15, 0.08])
    assert np.isclose(counts @ q, 1.0)
    block = np.repeat(np.arange(3), counts)
    keys = np.arange(8, dtype=np.int64)
    hits = np.zeros(8)
    for seed in range(800):
        draws = BlockDraws(seed, q, counts)
        first = draws.appearance(12)  # the place of each draw's item in the order of first appearance
        distinct_blocks, ranks = draws.ranks(int(first.max()) + 1)
        items = HashOrder.in_memory(keys, seed, block).items_at(distinct_blocks, ranks)[first]
        np.add.at(hits, items, 1)
    expected = 800 * 12 * q[block]
    assert np.sum((hits - expected) ** 2 / expected) < 24.3


def test_a_proposal_without_mass_on_the_other_items_is_refused():
    draws = BlockDraws(0, np.array([1.0, 0.0]), np.array([1, 5]))
    with pytest.raises(ValueError, match="increase the design's defensive weight"):
        draws.draws_for(2, max_draws=5000)


def test_a_long_run_finds_the_first_draws_of_the_whole_sequence():
    # 200k draws over 3 blocks of very different sizes (many repeats in the small ones, few in the large one): the
    # chunk-by-chunk first draws must equal those of the whole key sequence at once
    counts = np.array([40, 3_000, 500_000])
    q = np.array([0.3, 0.3, 0.4]) / counts
    draws = BlockDraws(5, q, counts)
    draws.appearance(200_000)
    keys = draws.keys[:200_000]
    reference = np.sort(np.unique(keys, return_index=True)[1])
    assert np.array_equal(draws.first[draws.first < 200_000], reference)
    assert draws.first.size == np.unique(draws.keys).size


def test_hash_order_refuses_a_block_short_of_its_stated_size():
    """A pool that changed under its block summary (a block holds fewer items than stated) is refused, not
    searched for ever."""
    keys = np.arange(10, dtype=np.uint64)
    order = HashOrder.in_memory(keys, seed=3)
    order.sizes = np.array([12])  # the summary says 12, the pool holds 10
    with pytest.raises(ValueError, match="fewer items than the pool's block summary"):
        order.reach(np.array([11]))
    assert order.found[0] == 10  # every item was found before the refusal
