"""Spark local[2] draws the same sample as DuckDB and NumPy for the same seed (needs pyspark and Java)."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from labelwise.designs import make_design
from labelwise.engines import EnginePool
from labelwise.engines.hashing import SPARK, item_uniform, uniform_sql

pytestmark = pytest.mark.spark
pytest.importorskip("pyspark")


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from labelwise.engines.spark import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()


def assert_same_estimate(a, b) -> None:
    """The two engines' estimates agree: values to floating point, covariances to summation order."""
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_allclose(a.cov, b.cov, rtol=1e-9)


def test_spark_bins_like_numpy_at_every_edge(spark, extreme_pool):
    pool, path = extreme_pool
    memory, engine = EnginePool.from_pool(pool).summary, EnginePool.open(path, "spark", spark=spark).summary
    assert np.array_equal(memory.keys, engine.keys) and np.array_equal(memory.counts, engine.counts)


def test_spark_hash_equals_numpy_bit_for_bit(spark):
    ids = np.r_[np.arange(-300, 3000), 2**62 + 5, -(2**63), 2**63 - 1]
    spark.createDataFrame([(int(i),) for i in ids], "item_id long").createOrReplaceTempView("ids")
    for seed in (0, 2**40 + 17, 2**64 - 1):
        got = spark.sql(uniform_sql("SELECT item_id FROM ids", "item_id", seed, ["item_id"], SPARK)).toPandas()
        got = got.sort_values("item_id")
        assert np.array_equal(got["_u"].to_numpy(), item_uniform(np.sort(ids), seed))


def test_spark_checksum_and_repeated_ids_equal_duckdb(spark, scored_file, tmp_path):
    """The outputs' checksum a session stores is the same text in both engines (exact integer sums)."""
    engines = [EnginePool.open(scored_file, "duckdb"), EnginePool.open(scored_file, "spark", spark=spark)]
    assert engines[0].source.checksum() == engines[1].source.checksum()
    frame = pd.read_parquet(scored_file)
    frame.loc[[3, 8], "item_id"] = frame["item_id"][1]
    frame.to_parquet(tmp_path / "repeated.parquet", index=False)
    assert EnginePool.open(tmp_path / "repeated.parquet", "spark", spark=spark).source.duplicate_id() == (
        int(frame["item_id"][1]), 3)


@pytest.mark.parametrize("design", ["poisson", "passive"])
def test_same_seed_same_sample_and_estimate_as_duckdb(spark, parquet_pool, design):
    results = []
    for engine in (EnginePool.open(parquet_pool, "duckdb"), EnginePool.open(parquet_pool, "spark", spark=spark)):
        measure = engine.measure("f1")
        sample = engine.sample(engine.plan(make_design(design), measure, 500), seed=21)
        ids = sample.item_ids[:300]
        results.append((sample, engine.estimate(sample, measure, ids, engine.source.labels(ids))))
    (a, est_a), (b, est_b) = results
    assert np.array_equal(a.item_ids, b.item_ids)
    np.testing.assert_allclose(a.inclusion, b.inclusion, rtol=1e-12)
    assert_same_estimate(est_a, est_b)


def test_stratified_batches_equal_duckdb(spark, parquet_pool):
    # the strata (fine-bin counts of the score) and two batches of one simulated run, item for item
    from labelwise.engines.strata import (
        engine_strata,
        simulate_strata,
        summary_slope_moments,
    )

    design = make_design("stratified")
    runs = []
    for engine in (EnginePool.open(parquet_pool, "duckdb"), EnginePool.open(parquet_pool, "spark", spark=spark)):
        strata = engine_strata(engine.source, design)
        measure = engine.measure("f1")
        slopes = summary_slope_moments(measure, engine.stratum_summary(strata), engine.system_names,
                                       strata.sizes.size)
        est = simulate_strata(engine.source, strata, design, measure, 5, 60, [120], 0.95, slopes)[0]
        runs.append((strata, est))
    (a, est_a), (b, est_b) = runs
    assert np.array_equal(a.sizes, b.sizes) and np.array_equal(a.cuts, b.cuts)
    assert_same_estimate(est_a, est_b)


def test_importance_draws_and_estimate_equal_duckdb(spark, parquet_pool):
    from labelwise.engines.importance import importance_estimate, importance_sample

    design = make_design("importance")
    runs = []
    for engine in (EnginePool.open(parquet_pool, "duckdb"), EnginePool.open(parquet_pool, "spark", spark=spark)):
        measure = engine.measure("f1")
        sample = importance_sample(engine, design, measure, 300, seed=21)
        ids = sample.item_ids
        est = importance_estimate(design, engine.summary, measure, measure, engine.system_names, 21,
                                  np.searchsorted(engine.summary.keys, sample.keys), engine.source.outputs(ids),
                                  engine.source.labels(ids), ids.size)
        runs.append((sample, est))
    (a, est_a), (b, est_b) = runs
    assert np.array_equal(a.item_ids, b.item_ids) and a.item_ids.size == 300
    assert_same_estimate(est_a, est_b)


def test_online_rounds_within_score_strata_equal_duckdb_and_memory(spark, scored, scored_file):
    # the score strata (two passes), the blocks within them and two rounds of one simulated run; in memory, a
    # session's two batches of 60 (the same rounds on the pool's blocks)
    import labelwise as lw
    from labelwise.engines.online import block_rounds, simulate_rounds

    design = make_design("online-poisson")
    runs = []
    for engine in (EnginePool.open(scored_file, "duckdb"), EnginePool.open(scored_file, "spark", spark=spark)):
        rounds = block_rounds(engine, design, engine.measure("f1"))
        runs.append((rounds, simulate_rounds(engine, rounds, seed=5, batch_size=60, marks=[120])[0]))
    (a, est_a), (b, est_b) = runs
    assert a.strata is not None and np.array_equal(a.strata.cuts, b.strata.cuts)
    assert np.array_equal(a.summary.keys, b.summary.keys) and np.array_equal(a.summary.counts, b.summary.counts)
    assert_same_estimate(est_a, est_b)
    memory = lw.Session(scored, lw.make_measure("f1", scored), design, seed=5)
    memory.run(lw.TruthOracle(scored), budget=120, batch_size=60)
    assert np.array_equal(memory.sampler.rounds.summary.keys, b.summary.keys)
    assert_same_estimate(memory.estimate(), est_b)


def test_reused_losses_passes_within_score_strata_equal_duckdb_and_numpy(spark, scored, scored_file):
    # the (block, thresholds at or below the score) groups a reused curve's block losses come from, at scores of
    # the pool (items at a threshold count as above it)
    from labelwise.engines.online import block_rounds
    from labelwise.measures import PRCurve

    tau = PRCurve.grid(scored, 5, quantiles=True).thresholds
    duck = EnginePool.open(scored_file, "duckdb")
    strata = block_rounds(duck, make_design("online-poisson"), duck.measure("f1")).strata
    assert strata is not None
    found = [pool.source.threshold_groups("score", tau, strata).sort_values(["block", "k"]).reset_index(drop=True)
             for pool in (duck, EnginePool.open(scored_file, "spark", spark=spark), EnginePool.from_pool(scored))]
    for other in found[1:]:
        assert np.array_equal(found[0][["block", "k", "n"]].to_numpy(np.int64), other[["block", "k", "n"]].to_numpy(np.int64))
        assert np.array_equal(found[0]["value"].to_numpy(float), other["value"].to_numpy(float))
    assert found[0]["n"].sum() == len(scored) and found[0]["k"].nunique() == tau.size + 1
    # the sums of a value and its square per block (the Brier score's block losses), to summation order
    sums = [pool.source.value_moments("score", strata).sort_values("block").reset_index(drop=True)
            for pool in (duck, EnginePool.open(scored_file, "spark", spark=spark), EnginePool.from_pool(scored))]
    for other in sums[1:]:
        assert np.array_equal(sums[0][["block", "n"]].to_numpy(np.int64), other[["block", "n"]].to_numpy(np.int64))
        np.testing.assert_allclose(sums[0][["total", "total_sq"]].to_numpy(float),
                                   other[["total", "total_sq"]].to_numpy(float), rtol=1e-12)
