"""What a session file opens without a pass over the pool: outputs in their stored type, a set-up's large
arrays as views of the stored bytes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs.grouped import GroupedPool
from labelwise.oracle import score_prior
from labelwise.partition import Hierarchy
from labelwise.store.codec import decode_array, dump_sampler, encode_array, load_sampler


@pytest.mark.parametrize("arr", [
    np.random.default_rng(0).random(50_000).astype(np.float32).astype(np.float64),  # float32 on disk, raw
    np.random.default_rng(1).integers(0, 3, (50_000, 2)),                          # int8 on disk, compressed
    np.random.default_rng(2).random((300, 2)),                                      # float64, raw
    np.zeros(50_000),                                                               # compressed float32
])
def test_stored_type_is_the_stored_array_read_only(arr):
    data = encode_array(arr)
    stored, back = decode_array(data, stored_type=True), decode_array(data)
    assert back.dtype == arr.dtype and back.flags.writeable
    assert stored.dtype.itemsize <= arr.dtype.itemsize and not stored.flags.writeable
    np.testing.assert_array_equal(stored, arr)
    np.testing.assert_array_equal(back, arr)


def test_a_stored_pool_gives_the_checked_outputs_exactly(tmp_path):
    pool = lw.make_pool(5000, prevalence=0.1, n_systems=2, seed=3)
    pool = type(pool).from_arrays(pool.item_ids, preds=pool.preds, scores=pool.scores.astype(np.float32),
                                  labels=pool.labels)
    path = tmp_path / "s.lws"
    lw.Session(pool, lw.make_measure("f1", pool), "passive", seed=0, path=path).close()
    with lw.Session.open(path) as s:
        stored = s.pool
    assert stored.scores.dtype == np.float32 and stored.preds.dtype.itemsize == 1  # no whole-pool widening
    items = np.array([4, 0, 4999, 17])
    for idx in (items, None):
        a, b = pool.outputs(idx), stored.outputs(idx)
        for kind in ("preds", "scores"):
            assert getattr(a, kind).dtype == getattr(b, kind).dtype
            np.testing.assert_array_equal(getattr(a, kind), getattr(b, kind))
    assert stored.primary_scores(1).dtype == np.float64
    np.testing.assert_array_equal(stored.primary_scores(1), pool.primary_scores(1))
    np.testing.assert_array_equal(score_prior(stored, 0.9, items=items), score_prior(pool, 0.9, items=items))
    np.testing.assert_array_equal(stored.labels, pool.labels)


@pytest.mark.parametrize("design", ["online-poisson", "ais", "importance", "stratified", "oasis"])
def test_a_stored_set_up_draws_as_the_one_it_was_dumped_from(design):
    pool = lw.make_pool(40_000, prevalence=0.02, seed=4)
    measure = lw.make_measure("f1", pool)
    sampler = lw.make_design(design).start(pool, measure, rng=np.random.default_rng(1))
    data = dump_sampler(sampler)
    loaded = load_sampler(memoryview(data), pool, measure, np.random.default_rng(1))
    for s in (sampler, loaded):
        first = s.draw(30, np.zeros(pool.n_items, dtype=bool))
        s.observe(first.items, pool.labels[first.items])
    labeled = np.zeros(pool.n_items, dtype=bool)
    labeled[first.items] = True
    a, b = sampler.draw(30, labeled), loaded.draw(30, labeled)
    np.testing.assert_array_equal(a.items, b.items)
    np.testing.assert_array_equal(a.weight, b.weight)


def test_large_set_up_arrays_are_views_of_the_stored_bytes():
    pool = lw.make_pool(70_000, prevalence=0.02, seed=4)
    sampler = lw.make_design("online-poisson").start(pool, lw.make_measure("f1", pool), rng=np.random.default_rng(1))
    data = dump_sampler(sampler)
    loaded = load_sampler(data, pool, sampler.measure, sampler.rng)
    # positions in block order, beyond 2^16 (int32): neither narrowing nor compressing shrinks them, so raw
    members = loaded.members
    assert not members.flags.writeable and members.ctypes.data % 16 == 0
    assert np.shares_memory(members, np.frombuffer(data, dtype=np.uint8))
    np.testing.assert_array_equal(members, sampler.members)
    np.testing.assert_array_equal(loaded.block, sampler.block)


def test_grouped_pool_pickles_without_known_and_rebuilds_it():
    groups = GroupedPool(np.repeat(np.arange(4), 25), None)
    groups.mark_labeled(np.array([3, 50, 99]))
    assert "known" not in groups.__getstate__()
    back = pickle.loads(pickle.dumps(groups))
    np.testing.assert_array_equal(back.known, groups.known)
    np.testing.assert_array_equal(back.unlabeled, groups.unlabeled)


def test_block_sizes_are_counted_once_and_read_only():
    h = Hierarchy(depth=2, branching=2, blocks=np.array([0, 3, 3, 1]))
    assert h.block_sizes is h.block_sizes and not h.block_sizes.flags.writeable
    assert h.block_sizes.tolist() == [1, 1, 0, 2]
