"""``labelwise init --engine duckdb`` and the annotation loop on a session that references its pool."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.designs import make_design
from labelwise.engines import EnginePool

from .conftest import pool_frame

runner = CliRunner()


def invoke(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def files(parquet_pool, tmp_path) -> Path:
    """A private copy of the Parquet pool (tests may change it); returns its glob."""
    for f in parquet_pool.parent.glob("part-*.parquet"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path / "part-*.parquet"


def label_batch(batch: Path, truth: pd.Series) -> None:
    df = pd.read_csv(batch)
    df["label"] = truth.loc[df["item_id"]].to_numpy()
    df.to_csv(batch, index=False)


def test_loop_estimate_equals_the_in_memory_pool(files, pool, tmp_path):
    session = tmp_path / "s.lw"
    result = invoke("init", files, "-s", session, "--engine", "duckdb", "--budget", 300, "--seed", 5,
                    "--design", "poisson")
    assert result.exit_code == 0, result.output
    truth = pd.Series(pool.labels, index=pool.item_ids)
    for _ in range(2):
        result = invoke("next", session, "-n", 60, "-o", tmp_path / "batch.csv")
        assert result.exit_code == 0, result.output
        batch = pd.read_csv(tmp_path / "batch.csv")
        assert batch["text"].tolist() == [f"item {i}" for i in batch["item_id"]]  # content columns streamed
        label_batch(tmp_path / "batch.csv", truth)
        assert invoke("label", session, tmp_path / "batch.csv").exit_code == 0
    got = json.loads(invoke("estimate", session, "--json").stdout)
    # the same seed and design on the pool in memory: the same 120 items first, the same estimate
    memory = EnginePool.from_pool(pool)
    measure = memory.measure("f1")
    sample = memory.sample(memory.plan(make_design("poisson"), measure, 300), seed=5)
    ids = sample.item_ids[:120]
    expected = memory.estimate(sample, measure, ids, pool.labels[ids], design=make_design("poisson"), budget=300)
    assert got["n_labels"] == 120
    assert got["components"][0]["value"] == pytest.approx(expected.value[0], rel=1e-12)
    assert got["components"][0]["std"] == pytest.approx(np.sqrt(expected.cov[0, 0]), rel=1e-9)


def test_pending_items_come_first(files, tmp_path):
    session = tmp_path / "s.lw"
    assert invoke("init", files, "-s", session, "--engine", "duckdb", "--budget", 100).exit_code == 0
    first = pd.read_csv(pd.io.common.StringIO(invoke("next", session, "-n", 10).stdout))
    again = pd.read_csv(pd.io.common.StringIO(invoke("next", session, "-n", 15).stdout))
    assert again["item_id"].tolist()[:10] == first["item_id"].tolist()
    assert len(set(again["item_id"])) == 15
    fresh = pd.read_csv(pd.io.common.StringIO(invoke("next", session, "-n", 5, "--new").stdout))
    assert not set(fresh["item_id"]) & set(again["item_id"]) and len(fresh) == 5


def test_a_changed_pool_is_refused_in_one_line(files, pool, tmp_path):
    session = tmp_path / "s.lw"
    assert invoke("init", files, "-s", session, "--engine", "duckdb", "--budget", 100).exit_code == 0
    changed = pool_frame(pool).iloc[:10_000].copy()
    changed.loc[3, "prob"] = 0.5
    changed.to_parquet(tmp_path / "part-0.parquet", index=False)
    for command in (["next", session], ["estimate", session]):
        result = invoke(*command)
        assert result.exit_code == 1
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and "changed since init" in lines[0] and lines[0].startswith("error:")


def test_user_errors_are_one_line(files, tmp_path):
    session = tmp_path / "s.lw"
    cases = [(["init", files, "-s", session, "--engine", "duckdb"], "--budget"),
             (["init", files, "-s", session, "--engine", "duckdb", "--budget", 10, "-d", "ais"], "engine pools"),
             (["init", tmp_path / "none-*.parquet", "-s", session, "--engine", "duckdb", "--budget", 10],
              "no such file")]
    for args, expected in cases:
        result = invoke(*args)
        assert result.exit_code == 1 and expected in result.output and len(result.output.strip().splitlines()) == 1
    assert invoke("init", files, "-s", session, "--engine", "duckdb", "--budget", 10).exit_code == 0
    pd.DataFrame({"item_id": [123456789], "label": [1]}).to_csv(tmp_path / "l.csv", index=False)
    result = invoke("label", session, tmp_path / "l.csv")
    assert result.exit_code == 1 and "was not handed out" in result.output
    assert "l.csv': item 123456789" in result.output and len(result.output.strip().splitlines()) == 1
    first = pd.read_csv(pd.io.common.StringIO(invoke("next", session, "-n", 1).stdout))["item_id"][0]
    pd.DataFrame({"item_id": [first, first], "label": [0, 1]}).to_csv(tmp_path / "l.csv", index=False)
    result = invoke("label", session, tmp_path / "l.csv")
    assert result.exit_code == 1 and "two different labels" in result.output
    result = invoke("skip", session, str(first))
    assert result.exit_code == 1 and "engine pool" in result.output and len(result.output.strip().splitlines()) == 1


def test_simulate_engine_equals_the_pool_in_memory(parquet_pool, pool):
    from labelwise import make_measure, true_value
    from labelwise.engines.simulate import simulate_engine

    result = invoke("simulate", "--pool", parquet_pool, "--engine", "duckdb", "--design", "poisson", "--budget", 300,
                    "--repeats", 3, "--checkpoints", "100,300", "--json", "--seed", 2)
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["true_value"] == pytest.approx(true_value(pool, make_measure("f1", pool))[0], rel=1e-12)
    memory = EnginePool.from_pool(pool)
    expected = simulate_engine(memory, memory.measure("f1"), make_design("poisson"), budget=300, repeats=3, seed=2,
                               checkpoints=[100, 300]).to_dict()
    for a, b in zip(got["checkpoints"], expected["checkpoints"]):
        assert a["mse"] == pytest.approx(b["mse"], rel=1e-9) and a["coverage"] == b["coverage"]
    result = invoke("simulate", "--pool", parquet_pool, "--engine", "duckdb", "--measure", "brier", "--budget", 100,
                    "--repeats", 1)
    assert result.exit_code == 1 and "depends on the scores" in result.output
