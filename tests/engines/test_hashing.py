"""The shared item hash: the documented function, equal in NumPy and DuckDB, uniform."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
from scipy import stats

from labelwise.engines.hashing import DUCKDB, item_uniform, uniform_sql

MASK = 0xFFFFFFFF


def mix32(x: int) -> int:
    """lowbias32 with Python integers, written from the module docstring."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK
    return x ^ (x >> 16)


def reference_uniform(item_id: int, seed: int) -> float:
    """``H(item_id, seed)`` exactly as documented, one item at a time."""
    k = item_id & (2**64 - 1)  # two's complement
    lo, hi = k & MASK, k >> 32
    a0, b0 = mix32((seed & MASK) ^ 0x243F6A88), mix32((seed >> 32) ^ 0x85A308D3)
    a = mix32(lo ^ mix32(hi ^ a0))
    b = mix32(hi ^ mix32(lo ^ b0))
    return (a * 2**21 + (b >> 11)) / 2**53


IDS = np.array([0, 1, 2, 12345, -1, -(2**63), 2**63 - 1, 2**32, 2**32 - 1, 7 * 2**40 + 3], dtype=np.int64)
SEEDS = [0, 1, 2**31, 2**40 + 17, 2**64 - 1]


@pytest.mark.parametrize("seed", SEEDS)
def test_numpy_hash_is_the_documented_function(seed):
    expected = [reference_uniform(int(k), seed) for k in IDS]
    assert item_uniform(IDS, seed).tolist() == expected


@pytest.mark.parametrize("seed", SEEDS)
def test_duckdb_hash_equals_numpy_bit_for_bit(seed):
    ids = np.r_[IDS, np.arange(-500, 5000)]
    con = duckdb.connect()
    con.register("t", {"item_id": ids})
    got = con.sql(uniform_sql("SELECT item_id FROM t", "item_id", seed, ["item_id"], DUCKDB)).fetchnumpy()
    order = np.argsort(got["item_id"])
    expected = item_uniform(np.sort(ids), seed)
    assert np.array_equal(got["_u"][order], expected)


def test_hash_of_consecutive_ids_is_uniform_and_seeds_independent():
    # Kolmogorov-Smirnov at level 1e-3 for 10^5 consecutive ids; two seeds uncorrelated within 4 standard errors
    ids = np.arange(100_000)
    u0, u1 = item_uniform(ids, 0), item_uniform(ids, 1)
    assert stats.kstest(u0, "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(u0, u1)[0, 1]) < 4 / np.sqrt(ids.size)
    assert abs(np.corrcoef(u0[:-1], u0[1:])[0, 1]) < 4 / np.sqrt(ids.size)


def test_text_ids_and_bad_seeds_are_refused():
    with pytest.raises(ValueError, match="integer ids"):
        item_uniform(np.array(["a", "b"]), 0)
    with pytest.raises(ValueError, match="seed"):
        item_uniform(IDS, -1)


def test_ids_below_2_32_take_the_shortcut_to_the_same_uniforms():
    # ids in [0, 2^32) share the high word 0, whose mix is computed once: the same u as alone or mixed with others
    ids = np.arange(0, 3000, 7, dtype=np.int64)
    alone = item_uniform(ids, 2**40 + 17)
    assert alone.tolist() == [reference_uniform(int(k), 2**40 + 17) for k in ids]
    assert np.array_equal(item_uniform(np.r_[ids, -1], 2**40 + 17)[:-1], alone)
