"""The same Parquet pool in memory and through DuckDB, the same design and seed: the same batches and estimates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.designs.hashed import HashOrder, covering_bounds, first_by_ratio
from labelwise.designs.poisson import inclusion_probabilities
from labelwise.engines.hashing import generator_seed, item_uniform, uniforms_below

from .conftest import pool_frame

runner = CliRunner()


def invoke(*args: str | Path):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def pool_file(pool, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("same_pool") / "pool.parquet"
    pool_frame(pool).to_parquet(path, index=False)
    return path


def label_rounds(session: Path, truth: pd.Series, batches: list[int], folder: Path) -> list[list[int]]:
    """``next``, label from the truth and ``label`` once per batch size; the item ids of every batch."""
    handed = []
    for n in batches:
        out = folder / f"{session.stem}.csv"
        invoke("next", session, "-n", n, "-o", out)
        batch = pd.read_csv(out)
        batch["label"] = truth.loc[batch["item_id"]].to_numpy()
        batch.to_csv(out, index=False)
        invoke("label", session, out)
        handed.append(batch["item_id"].tolist())
    return handed


@pytest.mark.parametrize("design", ["passive", "stratified", "poisson", "importance", "online-poisson"])
def test_memory_and_duckdb_sessions_hand_out_and_estimate_alike(pool, pool_file, tmp_path, design):
    assert_sessions_alike(pool, pool_file, tmp_path, design)


def test_online_poisson_within_score_strata_hands_out_and_estimates_alike(scored, scored_file, tmp_path):
    # spread scores: the model's leaves are score strata in both (the fixture pool above takes prior-bin strata)
    from labelwise.designs import make_design
    from labelwise.designs.hashed_online import memory_rounds
    from labelwise.measures import make_measure

    design = make_design("online-poisson")
    assert memory_rounds(design, scored, make_measure("f1", scored))[0].strata is not None
    assert_sessions_alike(scored, scored_file, tmp_path, design.name)


def assert_sessions_alike(pool, pool_file: Path, tmp_path: Path, design: str) -> None:
    """The CLI on ``pool_file`` in memory and through DuckDB: the same batches and estimates."""
    truth = pd.Series(pool.labels, index=pool.item_ids)
    results = {}
    for engine in ("memory", "duckdb"):
        session = tmp_path / f"{engine}.lw"
        invoke("init", pool_file, "-s", session, "--engine", engine, "--design", design, "--seed", 9,
               "--budget", 400, "--measure", "f1,precision,recall")
        handed = label_rounds(session, truth, [100, 150, 120], tmp_path)
        results[engine] = handed, json.loads(invoke("estimate", session, "--json").stdout)
    (memory, got_memory), (duck, got_duck) = results["memory"], results["duckdb"]
    assert memory == duck  # the same items, batch by batch, in the same order
    assert got_memory["n_labels"] == got_duck["n_labels"] == 370
    assert got_memory.get("interval_basis") == got_duck.get("interval_basis")
    for a, b in zip(got_memory["components"], got_duck["components"], strict=True):
        for field in ("value", "std", "lower", "upper"):
            assert a[field] == pytest.approx(b[field], rel=1e-12, abs=1e-15)


def test_first_items_of_the_hash_order_are_the_smallest_uniforms_of_each_group():
    # exhaustive on 1000 ids in 3 groups: every prefix is the prefix of the full sort by (u, id)
    keys = np.arange(-500, 500, dtype=np.int64)
    groups = np.arange(keys.size) % 3
    u = item_uniform(keys, 17)
    order = HashOrder.in_memory(keys, 17, groups)
    labeled = np.zeros(keys.size, dtype=bool)
    labeled[::7] = True  # labeled items are walked over, not counted
    for g in range(3):
        full = np.flatnonzero(groups == g)[np.lexsort((keys[groups == g], u[groups == g]))]
        walked = np.concatenate([order.take(g, n, labeled.__getitem__)[0] for n in (5, 40, 200)])
        assert np.array_equal(walked, full[:walked.size])
        assert np.count_nonzero(~labeled[walked]) == 245 and not labeled[walked[-1]]
    with pytest.raises(ValueError, match="unlabeled items left"):
        order.take(0, 334, labeled.__getitem__)


def test_hash_order_is_a_simple_random_sample():
    # the first 2 of 4 items by u: each of the 6 pairs with probability 1/6 (chi-square over 6000 seeds, 5 dof,
    # 99.9% quantile 20.5)
    keys = np.arange(4, dtype=np.int64)
    counts = np.zeros((4, 4))
    for seed in range(6000):
        first = np.sort(HashOrder.in_memory(keys, seed).take(0, 2, np.zeros(4, dtype=bool).__getitem__)[0])
        counts[first[0], first[1]] += 1
    pairs = counts[np.triu_indices(4, 1)]
    assert np.sum((pairs - 1000) ** 2 / 1000) < 20.5


def test_generator_seed_is_the_session_seed_and_differs_per_spawned_child():
    assert generator_seed(np.random.default_rng(12345)) == 12345
    children = [generator_seed(np.random.default_rng(s)) for s in np.random.SeedSequence(3).spawn(50)]
    assert len(set(children)) == 50


@pytest.mark.parametrize(("design", "param", "why"), [
    ("stratified", "allocation=neyman", "Neyman allocation needs every item"),
    ("stratified", "method=quantile", "needs every distinct score"),
    ("stratified", "n_strata=400", "too concentrated for 400 strata"),
    ("importance", "calibration=platt-posterior", "calibration='platt-posterior' needs the pool in memory"),
    ("importance", "depth=2", "depth=2 needs the pool in memory")])
def test_settings_that_need_the_pool_in_memory_are_refused_in_one_line(pool_file, tmp_path, design, param, why):
    session = tmp_path / "s.lw"
    result = runner.invoke(app, ["init", str(pool_file), "-s", str(session), "--engine", "duckdb", "--design",
                                 design, "--param", param, "--budget", "100"])
    assert result.exit_code == 1 and why in result.output and len(result.output.strip().splitlines()) == 1
    assert not session.exists()


@pytest.mark.parametrize("grouped", [False, True])
def test_first_by_ratio_is_the_m_smallest_u_over_b_even_after_a_shortfall(grouped):
    # exhaustive on 600 ids: the M first of the full sort by (u / b, u, id), also when the first pass finds too few
    keys = np.arange(-300, 300, dtype=np.int64)
    groups = np.arange(keys.size) % 5
    M = 60
    if grouped:
        b, counts = inclusion_probabilities(np.array([1.0, 2.0, 5.0, 40.0, 0.5]), M, counts=np.bincount(groups)), \
            np.bincount(groups)
        item_b = b[groups]
    else:
        b = item_b = inclusion_probabilities(1.0 + np.abs(np.sin(keys.astype(float))) + 1e3 * (keys % 50 == 0), M)
        counts = None
        assert item_b.max() == 1.0  # some items are certain
    assert np.isclose(item_b.sum(), M)
    calls = []

    def find(bound):
        calls.append(bound)
        shrink = 0.1 if len(calls) == 1 else 1.0  # the first pass falls short
        at, _ = uniforms_below(keys, 5, shrink * (bound[groups] if grouped else bound))
        return at, item_b[at], keys[at]

    items, got_b, got_keys = first_by_ratio(find, 5, b, M, counts)
    u = item_uniform(keys, 5)
    expected = np.lexsort((keys, u, u / item_b))[:M]
    assert len(calls) >= 2 and np.array_equal(items, expected)
    assert np.array_equal(got_keys, keys[expected]) and np.array_equal(got_b, item_b[expected])


def test_covering_bounds_expect_six_standard_deviations_more_than_m():
    b = inclusion_probabilities(np.linspace(0.1, 20.0, 1000), 100)
    bound = covering_bounds(b, 100)
    assert np.all(bound >= b) and np.all(bound <= 1.0)
    assert bound.sum() == pytest.approx(100 + 6 * 10 + 16, rel=1e-9)
    assert np.array_equal(covering_bounds(b, 990), (b > 0).astype(float))  # beyond the pool: every item


def test_engine_importance_keeps_the_plug_in_interval_for_a_measure_of_the_scores(pool):
    # the blocks' model stands for one loss per block, which a measure of the probabilities (Brier) does not have
    from labelwise.designs import make_design
    from labelwise.engines import EnginePool
    from labelwise.engines.importance import importance_estimate, importance_sample

    engine, design = EnginePool.from_pool(pool), make_design("importance")
    basis = {}
    for name in ("brier", "f1"):
        measure = engine.measure(name)
        sample = importance_sample(engine, design, measure, 300, seed=21)
        ids = sample.item_ids
        est = importance_estimate(design, engine.summary, measure, measure, engine.system_names, 21,
                                  np.searchsorted(engine.summary.keys, sample.keys), engine.source.outputs(ids),
                                  engine.source.labels(ids), ids.size)
        basis[name] = est.basis
    assert not basis["brier"] and "oracle model" in basis["f1"]
