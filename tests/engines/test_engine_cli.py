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
    assert "l.csv', data row 1: item 123456789" in result.output and len(result.output.strip().splitlines()) == 1
    first = pd.read_csv(pd.io.common.StringIO(invoke("next", session, "-n", 1).stdout))["item_id"][0]
    pd.DataFrame({"item_id": [first, first], "label": [0, 1]}).to_csv(tmp_path / "l.csv", index=False)
    result = invoke("label", session, tmp_path / "l.csv")
    assert result.exit_code == 1 and "two different labels" in result.output
    pd.DataFrame({"item_id": [first, first], "label": [1, 2]}).to_csv(tmp_path / "l.csv", index=False)
    assert invoke("label", session, tmp_path / "l.csv").output == (
        f"error: labels file {str(tmp_path / 'l.csv')!r}, data row 2: label 2 of item {first} is not 0 or 1 (engine "
        "pools are binary). Nothing was stored\n")
    result = invoke("skip", session, str(first))
    assert result.exit_code == 1 and "engine pool" in result.output and len(result.output.strip().splitlines()) == 1


def test_files_an_engine_cannot_read_are_one_line_and_leave_no_session(pool, tmp_path):
    """A CSV file, a Parquet file cut short, one whose footer is damaged, files whose columns differ, a multi-class
    pool (a class above 1 in the pred column) and labels a simulation cannot use: one line each, no traceback."""
    frame = pool_frame(pool).head(200)
    frame.to_csv(tmp_path / "pool.csv", index=False)
    frame.to_parquet(tmp_path / "whole.parquet", index=False)
    (tmp_path / "cut.parquet").write_bytes((tmp_path / "whole.parquet").read_bytes()[:300])
    (tmp_path / "damaged.parquet").write_bytes(b"PAR1" + b"x" * 20 + b"PAR1")
    (tmp_path / "mixed").mkdir()
    frame.iloc[:100].to_parquet(tmp_path / "mixed" / "a.parquet", index=False)
    frame.iloc[100:].assign(pred="x").to_parquet(tmp_path / "mixed" / "b.parquet", index=False)
    frame.assign(pred=np.where(frame["item_id"] == 5, 2, frame["pred"])).to_parquet(tmp_path / "multi.parquet",
                                                                                  index=False)
    frame.assign(label=np.where(frame["item_id"] == 9, 0.5, frame["label"])).to_parquet(tmp_path / "half.parquet",
                                                                                       index=False)

    def where(name: str) -> str:
        return f"pool file {str(tmp_path / name)!r}"

    session = tmp_path / "s.lw"
    init = ("init", "-s", session, "--engine", "duckdb", "-d", "online-poisson")
    simulate = ("simulate", "--engine", "duckdb", "-d", "online-poisson", "--budget", 20, "--repeats", 1, "--pool")
    for args, message in [
        ((*init[:1], tmp_path / "pool.csv", *init[1:]),
         (f"{where('pool.csv')}: not a Parquet file (it does not start with PAR1); engine pools read Parquet: write "
          "it with pandas' to_parquet, or read a CSV, TSV or JSON-lines pool in memory, without --engine")),
        ((*init[:1], tmp_path / "cut.parquet", *init[1:]),
         (f"{where('cut.parquet')} starts as a Parquet file but does not end as one (no PAR1 footer); it may be "
          "truncated or still being written: write it again with pandas' to_parquet")),
        ((*init[:1], tmp_path / "damaged.parquet", *init[1:]), f"{where('damaged.parquet')}: DuckDB cannot read"),
        ((*init[:1], tmp_path / "mixed" / "*.parquet", *init[1:]),
         f"{where('mixed/a.parquet')} (and 1 more): DuckDB cannot read the files (Conversion Error: "),
        ((*init[:1], tmp_path / "multi.parquet", *init[1:]),
         (f"{where('multi.parquet')}: column 'pred' has 1 row(s) empty or not 0 or 1, e.g. item 5 (2); engine pools "
          "are binary (predictions 0 or 1, one probability p(y=1|x) per system): read a multi-class pool in memory, "
          "without --engine")),
        ((*simulate, tmp_path / "half.parquet"),
         (f"{where('half.parquet')}: column 'label' has 1 row(s) empty or not 0 or 1, e.g. item 9 (0.5); simulations "
          "read binary ground truth: fix or drop those rows")),
    ]:
        result = invoke(*args)
        assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), result.stderr
        assert not session.exists()


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


def test_init_and_status_show_the_budget_poisson_plans_for(files, tmp_path):
    """An engine ``poisson`` session plans for ``--budget``: shown so, not as the design's ``budget=None``; a
    different ``--param budget`` (which the engine would not use) is refused."""
    session = tmp_path / "s.lw"
    created = invoke("init", files, "-s", session, "--engine", "duckdb", "-d", "poisson", "--budget", 20)
    assert created.exit_code == 0 and "design:  poisson (budget=20, lam=1.0, defensive=0.1)" in created.stdout
    assert "design   poisson (budget=20, lam=1.0, defensive=0.1)\n" in invoke("status", session).stdout
    refused = invoke("init", files, "-s", tmp_path / "t.lw", "--engine", "duckdb", "-d", "poisson", "-p", "budget=30",
                     "--budget", 20)
    assert refused.exit_code == 1 and refused.output == (
        "error: --param budget=30: the session plans its sample for --budget (20); drop the parameter and give "
        "--budget 30\n")


def test_a_filled_in_batch_file_is_not_overwritten(files, pool, tmp_path):
    """``next --out`` on an engine session refuses a batch file whose labels are not stored yet (it replaced them
    with empty cells), and takes the file once they are stored."""
    session, batch = tmp_path / "s.lw", tmp_path / "batch.csv"
    assert invoke("init", files, "-s", session, "--engine", "duckdb", "--budget", 100).exit_code == 0
    assert invoke("next", session, "-n", 5, "-o", batch).exit_code == 0
    frame = pd.read_csv(batch, dtype={"label": "object"})
    frame.loc[[1, 3], "label"] = ["1", "0"]  # the annotators' work, not stored yet
    frame.to_csv(batch, index=False)
    written = batch.read_bytes()
    result = invoke("next", session, "-n", 5, "-o", batch)
    assert result.exit_code == 1
    item = str(frame["item_id"][1])
    assert result.output.strip().splitlines() == [
        (f"error: --out {str(batch)!r} holds 2 label(s) not stored yet (data row 2: item {item!r}); store them "
         f"first with `labelwise label {session} {batch}`, or write the batch to another --out")]
    assert batch.read_bytes() == written
    assert invoke("label", session, batch).exit_code == 0
    assert invoke("next", session, "-n", 5, "-o", batch).exit_code == 0
    assert pd.read_csv(batch)["label"].isna().all()
