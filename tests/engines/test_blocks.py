"""The dyadic grid of the prior: exact bins at every edge, the same in NumPy and DuckDB (Spark: test_spark.py)."""

from __future__ import annotations

import numpy as np

from labelwise.engines import EnginePool
from labelwise.engines.blocks import N_BINS, prior_bins


def test_bins_at_the_edges_of_levels_and_halves(grid_edges):
    p, expected = zip(*grid_edges)
    assert prior_bins(np.array(p)).tolist() == list(expected)


def test_bins_increase_with_the_prior_and_use_the_whole_grid():
    p = np.sort(np.r_[np.random.default_rng(0).random(50_000), 1 / (1 + np.exp(-np.linspace(-40, 40, 50_000)))])
    bins = prior_bins(p)
    assert np.all(np.diff(bins) >= 0) and bins.min() == 0 and bins.max() == N_BINS - 1


def test_duckdb_bins_like_numpy_at_every_edge(extreme_pool):
    pool, path = extreme_pool
    memory, duckdb = EnginePool.from_pool(pool).summary, EnginePool.open(path, "duckdb").summary
    assert np.array_equal(memory.keys, duckdb.keys) and np.array_equal(memory.counts, duckdb.counts)
