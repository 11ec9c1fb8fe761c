"""The dyadic grid of the prior: exact bins at every edge, the same in NumPy, DuckDB and Spark."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from labelwise.engines import EnginePool
from labelwise.engines.blocks import N_BINS, prior_bins
from labelwise.pool import Pool

#: Priors at and next to the grid's edges, and the bins they fall in (enumerated from the definition)
EDGES = [(0.0, 0), (2.0**-33, 8), (2.0**-32, 16), (1.5 * 2.0**-32, 24), (2.0**-31 - 2.0**-60, 31),
         (0.25 - 2.0**-55, 495), (0.25, 496), (0.3, 499), (0.5 - 2.0**-54, 511), (0.5, 512), (0.75, 527),
         (1.0 - 2.0**-32, N_BINS - 17), (1.0 - 2.0**-53, N_BINS - 1), (1.0, N_BINS - 1)]


def test_bins_at_the_edges_of_levels_and_halves():
    p, expected = zip(*EDGES)
    assert prior_bins(np.array(p)).tolist() == list(expected)


def test_bins_increase_with_the_prior_and_use_the_whole_grid():
    p = np.sort(np.r_[np.random.default_rng(0).random(50_000), 1 / (1 + np.exp(-np.linspace(-40, 40, 50_000)))])
    bins = prior_bins(p)
    assert np.all(np.diff(bins) >= 0) and bins.min() == 0 and bins.max() == N_BINS - 1


def extreme_pool(tmp_path) -> tuple[Pool, str]:
    """Probabilities over 80 units of log-odds and at every edge, as a pool and a Parquet file."""
    rng = np.random.default_rng(1)
    p = np.r_[[e for e, _ in EDGES], 1 / (1 + np.exp(-rng.normal(0, 12, 20_000)))]
    n = p.size
    labels = (rng.random(n) < p).astype(int)
    path = tmp_path / "extreme.parquet"
    pd.DataFrame({"item_id": np.arange(n), "pred": (p > 0.5).astype(int), "prob": p, "label": labels}).to_parquet(path)
    return Pool.from_arrays(np.arange(n), preds=(p > 0.5).astype(int)[:, None], probs=p[:, None], labels=labels), path


def test_duckdb_bins_like_numpy_at_every_edge(tmp_path):
    pool, path = extreme_pool(tmp_path)
    memory, duckdb = EnginePool.from_pool(pool).summary, EnginePool.open(path, "duckdb").summary
    assert np.array_equal(memory.keys, duckdb.keys) and np.array_equal(memory.counts, duckdb.counts)


@pytest.mark.spark
def test_spark_bins_like_numpy_at_every_edge(tmp_path):
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from labelwise.engines.spark import spark_session

    pool, path = extreme_pool(tmp_path)
    spark = spark_session("local[2]")
    memory, engine = EnginePool.from_pool(pool).summary, EnginePool.open(path, "spark", spark=spark).summary
    assert np.array_equal(memory.keys, engine.keys) and np.array_equal(memory.counts, engine.counts)
