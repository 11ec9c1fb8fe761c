"""Curves reused from an engine session's labels: the blocks' mean losses from one pass, the in-memory interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelwise import Session
from labelwise.designs.group_losses import group_losses
from labelwise.designs.group_model import MODEL_BASIS
from labelwise.engines import EnginePool, EngineSession
from labelwise.engines.blocks import memory_keys
from labelwise.engines.reused_losses import engine_block_losses
from labelwise.measures import Brier, PRCurve, ROCCurve, combine, make_measure
from labelwise.pool import Pool

from .conftest import pool_frame
from .test_same_as_memory import invoke, label_rounds

THRESHOLDS = [0.05, 0.3005, 0.5]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Pool, EnginePool]:
    """Eight items, three of one block (0.3, 0.301, 0.302) on both sides of a threshold, in memory and through
    DuckDB."""
    p = np.array([0.01, 0.3, 0.301, 0.302, 0.7, 0.61, 0.04, 0.06])
    pred = (p > 0.5).astype(int)
    pool = Pool.from_arrays(np.arange(8), preds=pred[:, None], probs=p[:, None], labels=np.zeros(8, int))
    path = tmp_path_factory.mktemp("tiny") / "tiny.parquet"
    pd.DataFrame({"item_id": np.arange(8), "pred": pred, "prob": p}).to_parquet(path, index=False)
    return pool, EnginePool.open(path, "duckdb")


def test_block_mean_losses_of_a_curve_from_one_pass_equal_the_in_memory_ones(tiny):
    pool, engine = tiny
    keys = memory_keys(pool)
    block = np.unique(keys, return_inverse=True)[1]
    calls = []

    def groups(column, thresholds):
        calls.append(column)
        return engine.source.threshold_groups(column, thresholds)

    for measure in (PRCurve(THRESHOLDS), ROCCurve(THRESHOLDS), combine(PRCurve(THRESHOLDS), make_measure("f1", pool))):
        expected = group_losses(measure, pool, block, np.unique(block, return_index=True)[1])
        got = engine_block_losses(measure, engine.summary, engine.source.columns, groups)
        np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)
        if isinstance(measure, PRCurve):  # loss [1{p >= t}] * 3, [y 1{p >= t}] * 3, y: 1, 2, 2 items above 0.3005
            shared = got[:, engine.summary.keys == keys[1]][:, 0]  # (label, d) of their block
            np.testing.assert_allclose(shared, [[1, 2 / 3, 0, 0, 0, 0, 0], [1, 2 / 3, 0, 1, 2 / 3, 0, 1]], rtol=1e-15)
    assert keys[1] == keys[2] == keys[3] and calls == ["prob"] * 3  # one pass per curve, none for F1


def test_measures_of_the_scores_without_a_key_have_no_model(tiny):
    engine = tiny[1]
    got = engine_block_losses(Brier(), engine.summary, engine.source.columns, lambda *a: pytest.fail("no pass"))
    assert got is None


@pytest.mark.parametrize("pool_name, file_name, design", [("pool", "parquet_pool", "online-poisson"),
                                                            ("pool", "parquet_pool", "importance"),
                                                            ("scored", "scored_file", "online-poisson")])
def test_reused_curve_interval_of_a_duckdb_session_equals_the_in_memory_one(request, tmp_path, pool_name, file_name,
                                                                           design):
    # the scored pool's rounds run within score strata and its curves threshold the score column
    pool, path = request.getfixturevalue(pool_name), request.getfixturevalue(file_name)
    if "*" in path.name:  # an in-memory pool is one file
        path = tmp_path / "pool.parquet"
        pool_frame(pool).to_parquet(path, index=False)
    truth = pd.Series(pool.labels, index=pool.item_ids)
    sessions = {}
    for engine in ("memory", "duckdb"):
        sessions[engine] = tmp_path / f"{engine}.lw"
        invoke("init", path, "-s", sessions[engine], "--engine", engine, "--design", design, "--seed", 5,
               "--budget", 300, "--measure", "f1")
        label_rounds(sessions[engine], truth, [100, 100], tmp_path)
    # thresholds at scores of the pool: items at a threshold count as above it in both
    measure = combine(PRCurve.grid(pool, 4, quantiles=True), ROCCurve.grid(pool, 3, quantiles=True))
    memory = Session.open(sessions["memory"]).estimate(measure)
    with EngineSession.open(sessions["duckdb"]) as s:
        duck = s.estimate(measure)
    assert memory.n_labels == duck.n_labels == 200
    assert duck.basis == memory.basis == MODEL_BASIS  # the unlabeled items through the blocks' mean losses
    assert duck.names == memory.names
    np.testing.assert_allclose(duck.value, memory.value, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.array(duck.interval()), np.array(memory.interval()), rtol=1e-9, atol=1e-12)
