"""Measures of the scores reused from an engine session's labels: the blocks' mean losses from one pass, the
in-memory interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelwise import Session, make_pool
from labelwise.designs import make_design
from labelwise.designs.group_losses import group_losses
from labelwise.designs.group_model import MODEL_BASIS
from labelwise.engines import EnginePool, EngineSession
from labelwise.engines.blocks import memory_keys
from labelwise.engines.reused_losses import engine_block_losses
from labelwise.measures import (
    Brier,
    CustomMeasure,
    PRCurve,
    ROCCurve,
    combine,
    make_measure,
)
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


class Passes:
    """The engine pool's source, counting the passes asked of it."""

    def __init__(self, engine: EnginePool):
        self.engine, self.n = engine, 0

    def __call__(self):
        self.n += 1
        return self.engine.source


def test_block_mean_losses_of_measures_of_the_scores_from_one_pass_equal_the_in_memory_ones(tiny):
    pool, engine = tiny
    keys = memory_keys(pool)
    block = np.unique(keys, return_inverse=True)[1]
    passes = Passes(engine)
    measures = (PRCurve(THRESHOLDS), ROCCurve(THRESHOLDS), Brier(), combine(PRCurve(THRESHOLDS), Brier(),
                                                                           make_measure("f1", pool)))
    for measure in measures:
        expected = group_losses(measure, pool, block, np.unique(block, return_index=True)[1])
        got = engine_block_losses(measure, engine.summary, engine.source.columns, passes)
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
        if isinstance(measure, PRCurve):  # loss [1{p >= t}] * 3, [y 1{p >= t}] * 3, y: 1, 2, 2 items above 0.3005
            shared = got[:, engine.summary.keys == keys[1]][:, 0]  # (label, d) of their block
            np.testing.assert_allclose(shared, [[1, 2 / 3, 0, 0, 0, 0, 0], [1, 2 / 3, 0, 1, 2 / 3, 0, 1]], rtol=1e-15)
        if isinstance(measure, Brier):  # 2 (p - y)^2 averaged over the block's p = 0.3, 0.301, 0.302
            p = np.array([0.3, 0.301, 0.302])
            shared = got[:, engine.summary.keys == keys[1], 0]
            np.testing.assert_allclose(shared.ravel(), [np.mean(2 * p**2), np.mean(2 * (1 - p) ** 2)], rtol=1e-13)
    assert keys[1] == keys[2] == keys[3] and passes.n == 5  # one pass per measure of the scores, none for F1


def test_measures_of_the_predictions_need_no_pass_and_others_have_no_model(tiny):
    engine = tiny[1]
    no_pass = lambda: pytest.fail("a pass")
    got = engine_block_losses(make_measure("recall", tiny[0]), engine.summary, engine.source.columns, no_pass)
    assert got.shape == (2, engine.summary.keys.size, 2)
    cubed = CustomMeasure(lambda out, y: (out.probs[:, :1] - y[:, None]) ** 3, lambda R: R, 1, ["cubed"])
    assert engine_block_losses(cubed, engine.summary, engine.source.columns, no_pass) is None


@pytest.mark.parametrize("pool_name, file_name, design", [("pool", "parquet_pool", "online-poisson"),
                                                            ("pool", "parquet_pool", "importance"),
                                                            ("scored", "scored_file", "online-poisson")])
def test_reused_interval_of_a_duckdb_session_equals_the_in_memory_one(request, tmp_path, pool_name, file_name,
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
    # thresholds at scores of the pool (items at a threshold count as above it in both); on the scores, thresholds
    # outside [0, 1] too, which cut none of the blocks' mean probabilities; on the probabilities, the Brier score
    curves = [PRCurve.grid(pool, 4, quantiles=True), ROCCurve.grid(pool, 3, quantiles=True)]
    measure = combine(*curves, PRCurve([-2.0, 1.5, 4.0]) if pool.scores is not None else Brier())
    memory = Session.open(sessions["memory"]).estimate(measure)
    with EngineSession.open(sessions["duckdb"]) as s:
        duck = s.estimate(measure)
    assert memory.n_labels == duck.n_labels == 200
    assert duck.basis == memory.basis == MODEL_BASIS  # the unlabeled items through the blocks' mean losses
    assert duck.names == memory.names
    np.testing.assert_allclose(duck.value, memory.value, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.array(duck.interval()), np.array(memory.interval()), rtol=1e-9, atol=1e-12)


def scored_parquet(tmp_path, n_items: int, prevalence: float):
    """A generated pool with raw scores and probabilities, in memory and as a Parquet file."""
    made = make_pool(n_items, prevalence=prevalence, seed=3)
    pool = Pool.from_arrays(made.item_ids, preds=made.preds, probs=made.probs, scores=made.scores,
                            labels=made.labels)
    path = tmp_path / "pool.parquet"
    pd.DataFrame({"item_id": pool.item_ids, "pred": pool.preds[:, 0], "prob": pool.probs[:, 0],
                  "score": pool.scores[:, 0]}).to_parquet(path, index=False)
    return pool, path


def test_a_curve_named_on_an_engine_pool_spreads_its_thresholds_over_the_scores(tmp_path):
    """``pr_curve:3`` / ``auc:4`` by name on an engine pool and session: the thresholds of the same name in memory
    (a pool under the sample size is read whole), on the raw scores, not on the blocks' mean probabilities in [0, 1]."""
    pool, path = scored_parquet(tmp_path, 3000, 0.05)
    engine = EnginePool.open(path, "duckdb")
    for name in ("pr_curve:3", "auc:4"):
        expected = make_measure(name, pool).thresholds
        assert expected.min() < 0 or expected.max() > 1  # raw scores: a threshold outside [0, 1]
        np.testing.assert_array_equal(engine.measure(name).thresholds, expected)
    with EngineSession.create(tmp_path / "s.lw", engine, measure="f1", systems=0, design=make_design("passive"),
                              budget=100, seed=0) as session:
        curve = session.make_measure("f1,pr_curve:3")
    np.testing.assert_array_equal(curve.parts[1].thresholds, make_measure("pr_curve:3", pool).thresholds)
    # a session written before keeps the thresholds its proposal was made with: the representatives'
    with EngineSession.open(tmp_path / "s.lw") as session:
        session.meta.pop("curve_thresholds")
        old = session.make_measure("pr_curve:3").thresholds
    representatives = make_measure("pr_curve:3", engine.summary.representatives(engine.system_names)).thresholds
    np.testing.assert_array_equal(old, representatives)
