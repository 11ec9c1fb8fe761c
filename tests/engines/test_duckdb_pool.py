"""A Parquet pool through DuckDB: the same summary, sample and estimate as the pool in memory."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelwise.designs import make_design
from labelwise.engines import EnginePool
from labelwise.engines.columns import resolve_columns
from labelwise.pool import PoolError

from .conftest import pool_frame


@pytest.fixture(scope="module")
def engines(pool, parquet_pool):
    return EnginePool.from_pool(pool), EnginePool.open(parquet_pool, engine="duckdb")


def test_summary_equals_the_in_memory_one(engines):
    memory, duck = engines
    a, b = memory.summary, duck.summary
    assert np.array_equal(a.keys, b.keys) and np.array_equal(a.counts, b.counts)
    np.testing.assert_allclose(a.prior_sums, b.prior_sums, rtol=1e-12)
    assert duck.n_items == 20_000


@pytest.mark.parametrize("design", ["passive", "poisson"])
def test_same_seed_same_sample_and_estimate(engines, design):
    estimates = []
    samples = []
    for engine in engines:
        measure = engine.measure("f1,precision,recall")
        sample = engine.sample(engine.plan(make_design(design), measure, 600), seed=11)
        ids = sample.item_ids[:400]
        samples.append(sample)
        estimates.append(engine.estimate(sample, measure, ids, engine.source.labels(ids)))
    assert np.array_equal(samples[0].item_ids, samples[1].item_ids)
    np.testing.assert_allclose(samples[0].inclusion, samples[1].inclusion, rtol=1e-12)
    np.testing.assert_allclose(estimates[0].value, estimates[1].value, rtol=1e-12)
    np.testing.assert_allclose(estimates[0].cov, estimates[1].cov, rtol=1e-9)


def test_rows_come_back_in_the_asked_order_with_content(engines):
    _, duck = engines
    rows = duck.rows(np.array([19_999, 3, 10_000]))
    assert rows["item_id"].tolist() == [19_999, 3, 10_000]
    assert rows["text"].tolist() == ["item 19999", "item 3", "item 10000"]


def test_plan_spends_the_budget(engines):
    # sum_n b_n = M for the weighted designs (passive: M + 6 sqrt(M) + 16, so that the sample holds the M smallest
    # u); the sample size is Poisson-binomial around it (4 standard deviations)
    _, duck = engines
    measure = duck.measure("f1")
    for design, expected in (("passive", 600 + 6 * np.sqrt(600) + 16), ("poisson", 600)):
        plan = duck.plan(make_design(design), measure, 600)
        b = plan.inclusion
        assert np.isclose(b @ duck.summary.counts, expected)
        size = len(duck.sample(plan, seed=3))
        assert abs(size - expected) <= 4 * np.sqrt(np.sum(duck.summary.counts * b * (1 - b)))


def test_bad_files_are_named(pool, tmp_path):
    frame = pool_frame(pool).head(100)
    frame.loc[7, "prob"] = 1.5
    frame.to_parquet(tmp_path / "bad.parquet", index=False)
    with pytest.raises(PoolError, match=r"bad.parquet.*column 'prob' has 1 row"):
        _ = EnginePool.open(tmp_path / "bad.parquet").summary
    frame.drop(columns="item_id").to_parquet(tmp_path / "noid.parquet", index=False)
    with pytest.raises(PoolError, match="no id column 'item_id'"):
        EnginePool.open(tmp_path / "noid.parquet")
    with pytest.raises(PoolError, match="no such file"):
        EnginePool.open(tmp_path / "missing-*.parquet")
    frame.assign(item_id="x" + frame["item_id"].astype(str)).to_parquet(tmp_path / "text.parquet", index=False)
    with pytest.raises(PoolError, match=r"text.parquet.*id column 'item_id' holds VARCHAR values.*as integers"):
        EnginePool.open(tmp_path / "text.parquet")


def test_invalid_cells_name_an_item_and_a_class_above_one_says_engine_pools_are_binary(pool, tmp_path):
    frame = pool_frame(pool).head(100).assign(pred=lambda f: f["pred"].astype(float))
    where = str(tmp_path / "bad.parquet")
    for column, rows, value, message in [
        ("pred", [7, 9], 2.0, ("column 'pred' has 2 row(s) empty or not 0 or 1, e.g. item 7 (2); engine pools are "
                               "binary (predictions 0 or 1, one probability p(y=1|x) per system): read a multi-class "
                               "pool in memory, without --engine")),
        ("pred", [5], 0.5, ("column 'pred' has 1 row(s) empty or not 0 or 1, e.g. item 5 (0.5); predictions must be "
                            "0 or 1: fix or drop those rows")),
        ("pred", [4], None, ("column 'pred' has 1 row(s) empty or not 0 or 1, e.g. item 4 (empty); predictions must "
                             "be 0 or 1: fix or drop those rows")),
        ("prob", [3], 1.5, ("column 'prob' has 1 row(s) empty or outside [0, 1], e.g. item 3 (1.5); probabilities "
                            "must lie in [0, 1]: fix or drop those rows")),
    ]:
        bad = frame.copy()
        bad.loc[rows, column] = value
        bad.to_parquet(where, index=False)
        with pytest.raises(PoolError) as err:
            _ = EnginePool.open(where).summary
        assert str(err.value) == f"pool file {where!r}: {message}"


@pytest.mark.parametrize(("type_name", "accepted"), [("DOUBLE", True), ("float", True), ("DECIMAL(18,3)", True),
                                                     ("decimal(10,2)", True), ("TINYINT", True), ("VARCHAR", False),
                                                     ("string", False), ("BOOLEAN", False)])
def test_only_numeric_output_columns_are_accepted(type_name, accepted):
    types = {"item_id": "BIGINT", "prob": type_name}
    if accepted:
        assert resolve_columns(types, "pool").probs == ("prob",)
        return
    with pytest.raises(PoolError) as err:
        resolve_columns(types, "pool")
    assert str(err.value) == (f"pool: column 'prob' holds {type_name} values; engine pools read the systems' outputs "
                              "as numbers: store it as numbers (predictions 0 or 1, probabilities, scores), or read a "
                              "pool that fits in memory without --engine")
    assert resolve_columns({"item_id": "BIGINT", "pred": "BOOLEAN"}, "pool").preds == ("pred",)  # True/False predictions


@pytest.mark.parametrize(("type_name", "accepted"), [("BIGINT", True), ("int", True), ("UINTEGER", True),
                                                     ("string", False), ("DOUBLE", False)])
def test_only_integer_id_columns_are_accepted(type_name, accepted):
    types = {"item_id": type_name, "prob": "double"}  # DuckDB's and Spark's type names
    if accepted:
        assert resolve_columns(types, "pool").id == "item_id"
    else:
        with pytest.raises(PoolError, match=f"holds {type_name} values"):
            resolve_columns(types, "pool")


def test_designs_without_a_block_plan_are_refused(engines):
    _, duck = engines
    with pytest.raises(ValueError, match="does not run on engine pools"):
        duck.plan(make_design("ais"), duck.measure("f1"), 100)


def test_fingerprint_follows_the_content(pool, tmp_path):
    frame = pool_frame(pool).head(1000)
    path = tmp_path / "p.parquet"
    frame.to_parquet(path, index=False)
    first = EnginePool.open(path).fingerprint()
    frame.to_parquet(path, index=False)
    assert EnginePool.open(path).fingerprint() == first
    changed = frame.copy()
    changed.loc[0, "prob"] = 0.999
    changed.to_parquet(path, index=False)
    assert EnginePool.open(path).fingerprint() != first
    pd.concat([frame, frame.head(1)]).to_parquet(path, index=False)
    assert EnginePool.open(path).fingerprint() != first


def test_pool_from_parquet_in_memory_or_through_an_engine(parquet_pool, engines):
    from labelwise import Pool

    in_memory = Pool.from_parquet(parquet_pool)  # two files, concatenated
    through = Pool.from_parquet(parquet_pool, engine="duckdb")
    assert isinstance(through, EnginePool) and in_memory.n_items == through.n_items == 20_000
    plan = through.plan(make_design("poisson"), through.measure("f1"), 300)
    assert np.array_equal(EnginePool.from_pool(in_memory).sample(plan, 4).item_ids, through.sample(plan, 4).item_ids)
