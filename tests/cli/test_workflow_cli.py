"""The session workflow from the shell: skip, relabel, status, export, ids as given, labels from any
format, and operational errors (read-only, full disk, damaged file) as one line with the file untouched; bad
input (design settings of the wrong type or range, one mistyped id in a labels file, pool columns
named differently from what the flags expect) as one line naming the file, the row or field and the fix."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.datasets import make_pool
from labelwise.store import Store

runner = CliRunner()


def run(*args, input: str | None = None):
    return runner.invoke(app, [str(a) for a in args], input=input)


def ok(*args, input: str | None = None):
    result = run(*args, input=input)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def fails(*args) -> str:
    result = run(*args)
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def zero_pool(tmp_path) -> tuple[Path, dict]:
    """A pool whose ids have leading zeros ("00007") and both "01" and "1"; its truth by id."""
    pool = make_pool(300, prevalence=0.3, separation=2.0, seed=4)
    ids = [f"{i:05d}" for i in range(300)]
    ids[0], ids[1] = "01", "1"
    path = tmp_path / "pool.csv"
    pd.DataFrame({"item_id": ids, "pred": pool.preds[:, 0], "score": pool.scores[:, 0]}).to_csv(path, index=False)
    return path, dict(zip(ids, pool.labels.tolist()))


def _batch(session, n, *extra) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(ok("next", session, "-n", n, *extra).stdout), dtype={"item_id": str})


def test_ids_come_back_as_given_and_the_workflow_round_trips(tmp_path, zero_pool):
    pool_file, truth = zero_pool
    session = tmp_path / "s.lw"
    ok("init", pool_file, "--session", session, "--design", "importance")
    batch = _batch(session, 12)
    assert list(batch.columns) == ["item_id", "label", "pred", "score"] and batch["label"].isna().all()
    assert all(len(i) == 5 or i in ("01", "1") for i in batch["item_id"])
    # fill in half the batch, as TSV on standard input: the rest stays pending
    half = batch.iloc[:6].assign(label=[truth[i] for i in batch["item_id"][:6]])
    out = ok("label", session, "-", input=half.to_csv(sep="\t", index=False)).stdout
    assert "stored 6 new labels" in out and "6 still pending" in out
    # skip the first pending item: it comes back last
    pending = list(batch["item_id"][6:])
    ok("skip", session, pending[0])
    assert list(_batch(session, 6)["item_id"]) == pending[1:] + pending[:1]
    rest = pd.DataFrame({"item_id": pending, "label": [truth[i] for i in pending]})
    rest.to_parquet(tmp_path / "rest.parquet")
    ok("label", session, tmp_path / "rest.parquet")
    # correct one label: both rows stay in the export, the estimate uses the latest
    target = pending[2]
    ok("relabel", session, target, str(1 - truth[target]))
    ok("export", session, "--out", tmp_path / "all.csv")
    export = pd.read_csv(tmp_path / "all.csv", dtype={"item_id": str})
    assert list(export.columns) == ["item_id", "label", "draw", "weight", "time", "source", "event"]
    assert set(export["item_id"]) == set(batch["item_id"])
    rows = export[export["item_id"] == target]
    assert rows["event"].tolist() == ["label", "relabel"] and rows["label"].tolist() == [truth[target],
                                                                                          1 - truth[target]]
    status = json.loads(ok("status", session, "--json").stdout)
    assert (status["labels"], status["pending"], status["deferred"], status["relabels"]) == (12, 0, 0, 1)
    assert status["health"] == "ok" and status["estimate"]["n_labels"] == 12
    # the stored estimate is the one a full open computes
    full = json.loads(ok("estimate", session, "--json", "--level", "0.9").stdout)
    cached = json.loads(ok("estimate", session, "--json").stdout)
    assert cached["components"][0]["value"] == pytest.approx(full["components"][0]["value"], abs=1e-12)


def test_rejected_workflow_commands_leave_the_file_byte_identical(tmp_path, zero_pool):
    pool_file = zero_pool[0]
    session = tmp_path / "s.lw"
    ok("init", pool_file, "--session", session, "--design", "importance")
    batch = _batch(session, 5)
    before = session.read_bytes()
    assert "not waiting for a label" in fails("skip", session, "00299")
    assert fails("skip", session, "299") == (  # 00299 is not 299
        "error: item_id '299' is not in the pool; use ids exactly as in the pool's id column (the pool has '00299': "
        "were its leading zeros dropped, e.g. by a spreadsheet?)")
    assert fails("skip", session, "1299").endswith("use ids exactly as in the pool's id column")  # no near id
    assert "no label to correct" in fails("relabel", session, batch["item_id"][0], "1")
    assert "outside the label set" in fails("relabel", session, batch["item_id"][0], "5")
    assert session.read_bytes() == before


def test_init_warns_about_missing_ids_equal_scores_and_unevaluated_systems(tmp_path):
    path = tmp_path / "p.csv"
    pd.DataFrame({"pa": [0, 1] * 50, "pb": [1, 0] * 50, "sa": 0.5, "sb": np.linspace(0, 1, 100)}).to_csv(
        path, index=False)
    args = ("init", path, "--session", tmp_path / "s.lw", "--pred-col", "pa,pb", "--score-col", "sa,sb")
    err = ok(*args, "--design", "passive").stderr
    assert "no id column" in err and "same score for pa" in err and "--systems all" in err
    assert "already exists; `labelwise status" in fails(*args)
    assert "predicts no positive" not in err  # pa and pb predict some
    assert "--id-col so batches" in err  # no column looks like an id: no guess


def test_missing_ids_warning_names_a_column_that_looks_like_one(tmp_path):
    path = tmp_path / "p.csv"
    pd.DataFrame({"Txn_ID": [f"t{i}" for i in range(40)], "pred": [0, 1] * 20, "score": np.linspace(0, 1, 40)}).to_csv(
        path, index=False)
    err = ok("init", path, "--session", tmp_path / "s.lw", "--design", "passive").stderr
    assert "warning: the pool has no id column; items are numbered by row (0, 1, ...). Name the id column with " \
           "--id-col (--id-col Txn_ID?) so batches and exports show your ids" in err


def test_init_warns_about_a_system_that_predicts_no_positive(tmp_path):
    path = tmp_path / "p.csv"
    pd.DataFrame({"item_id": range(100), "pred": 0, "score": np.linspace(0, 1, 100)}).to_csv(path, index=False)
    err = ok("init", path, "--session", tmp_path / "s.lw", "--measure", "f1,precision").stderr
    assert "warning: system predicts no positive item" in err


def test_an_id_longer_than_the_limit_is_one_line(tmp_path):
    path = tmp_path / "p.csv"
    pd.DataFrame({"item_id": ["a", "b" * 5000], "pred": [0, 1]}).to_csv(path, index=False)
    assert "has 5000 characters; ids may have at most 1000" in fails("init", path, "--session", tmp_path / "s.lw")


# ----------------------------------------------------------- operational errors
@pytest.fixture
def session_file(tmp_path, zero_pool) -> Path:
    session = tmp_path / "s.lw"
    ok("init", zero_pool[0], "--session", session, "--design", "importance")
    ok("next", session, "-n", "5")
    return session


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_session_file(session_file):
    before = session_file.read_bytes()
    session_file.chmod(0o444)
    try:
        assert "is read-only" in fails("next", session_file, "-n", "5", "--new")
    finally:
        session_file.chmod(0o644)
    assert session_file.read_bytes() == before


def test_read_only_connection_is_one_line(session_file, monkeypatch):
    """Where the file cannot be made read-only (root), a read-only connection stands in."""
    before = session_file.read_bytes()
    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda p, **kw: real(f"file:{p}?mode=ro", uri=True, **kw))
    assert "is read-only; make it and its folder writable" in fails("next", session_file, "-n", "5", "--new")
    assert session_file.read_bytes() == before


def test_full_disk_is_one_line(session_file, monkeypatch):
    before = session_file.read_bytes()
    real_open = Store.open

    def full(path):
        store = real_open(path)
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count={pages}")
        return store

    monkeypatch.setattr(Store, "open", staticmethod(full))
    assert "the disk is full; free some space" in fails("next", session_file, "-n", "400", "--new")
    assert session_file.read_bytes() == before


def test_damaged_file_is_one_line(session_file):
    data = bytearray(session_file.read_bytes())
    data[200:4000] = b"\xff" * 3800  # the first page's b-tree, past the SQLite header
    session_file.write_bytes(bytes(data))
    message = fails("estimate", session_file)
    assert str(session_file) in message and ("damaged" in message or "not a labelwise session" in message)
    assert session_file.read_bytes() == bytes(data)


def test_exclude_states_itself_in_estimate_status_and_export(tmp_path, zero_pool):
    pool_file, truth = zero_pool
    session = tmp_path / "s.lw"
    ok("init", pool_file, "--session", session, "--design", "importance", "--measure", "accuracy")
    batch = _batch(session, 8)
    out, rest = batch["item_id"][0], batch["item_id"][1:]
    before = session.read_bytes()
    assert "not waiting for a label" in fails("exclude", session, "00299")
    assert session.read_bytes() == before
    assert "excluded 1 items as not judgeable (1 in all); 7 pending" in ok("exclude", session, out).stdout
    labels = tmp_path / "with_excluded.csv"
    pd.DataFrame({"item_id": [rest.iloc[0], out], "label": [truth[rest.iloc[0]], truth[out]]}).to_csv(labels, index=False)
    assert fails("label", session, labels) == (
        f"error: labels file {str(labels)!r}, data row 2: item {out!r} was excluded as not judgeable "
        "(`labelwise exclude`); drop its label. Nothing was stored")
    ok("label", session, "-", input=pd.DataFrame({"item_id": rest, "label": [truth[i] for i in rest]}).to_csv(
        index=False))
    note = "1 items excluded as not judgeable; the estimate is over the judgeable items"
    assert note in ok("estimate", session).stdout and note in ok("estimate", session, "--level", "0.8").stdout
    status = ok("status", session)
    assert note in status.stdout and "1 excluded" in status.stdout
    info = json.loads(ok("status", session, "--json").stdout)
    assert (info["excluded"], info["pending"], info["labels"]) == (1, 0, 7)
    estimate = json.loads(ok("estimate", session, "--json").stdout)
    assert estimate["excluded"] == 1 and estimate["n_labels"] == 7
    ok("export", session, "--out", tmp_path / "all.csv")
    export = pd.read_csv(tmp_path / "all.csv", dtype={"item_id": str})
    row = export[export["event"] == "exclude"]
    assert row["item_id"].tolist() == [out] and row["label"].isna().all() and row["source"].tolist() == ["cli"]
    pd.DataFrame({"item_id": [out], "label": [0]}).to_csv(tmp_path / "late.csv", index=False)
    before = session.read_bytes()
    assert "excluded as not judgeable" in fails("label", session, tmp_path / "late.csv")
    assert session.read_bytes() == before


# --------------------------------------------------------------------------- bad input, one line each
@pytest.fixture
def pool_frame() -> pd.DataFrame:
    """400 items with integer ids 1000, 1007, ... and truth in ``label``."""
    pool = make_pool(400, prevalence=0.3, separation=2.0, seed=5)
    return pd.DataFrame({"item_id": 1000 + 7 * pd.RangeIndex(400), "pred": pool.preds[:, 0],
                         "score": pool.scores[:, 0], "prob": pool.probs[:, 0], "label": pool.labels})


@pytest.fixture
def pool_file(tmp_path, pool_frame) -> Path:
    path = tmp_path / "pool.csv"
    pool_frame.drop(columns="label").to_csv(path, index=False)
    return path


@pytest.mark.parametrize(("param", "message"), [
    ("lam=abc", "lam: must be a number, got 'abc'"),
    ("n_strata=abc", "n_strata: must be an integer, got 'abc'"),
    ("n_strata=0", "n_strata: must be at least 1, got 0"),
    ("n_strata=1.5", "n_strata: must be an integer, got 1.5"),
    ("tail_floor=maybe", "tail_floor: must be true or false, got 'maybe'"),
    ("lam=2", "lam: must lie in [0, 1], got 2.0"),
])
def test_a_design_setting_of_the_wrong_type_or_range_is_one_line(tmp_path, pool_file, param, message):
    session = tmp_path / "s.lw"
    args = ["--design", "online-poisson", "--param", param]
    assert fails("init", pool_file, "--session", session, *args) == f"error: design 'online-poisson': {message}"
    assert not session.exists()
    truth = tmp_path / "truth.csv"
    pd.read_csv(pool_file).assign(label=0).to_csv(truth, index=False)
    assert fails("simulate", "--pool", truth, "--budget", 10, *args) == f"error: design 'online-poisson': {message}"


@pytest.mark.parametrize("typo", ["5675x", "0{id}"])
def test_one_mistyped_id_names_its_row_and_nothing_is_stored(tmp_path, pool_file, pool_frame, typo):
    session = tmp_path / "s.lw"
    ok("init", pool_file, "--session", session, "--design", "stratified")
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 40).stdout), dtype={"item_id": str})
    truth = pool_frame.set_index(pool_frame["item_id"].astype(str))["label"]
    batch["label"] = truth.loc[batch["item_id"]].to_numpy()
    wrong = typo.format(id=batch.loc[29, "item_id"])
    batch.loc[29, "item_id"] = wrong
    labels = tmp_path / "labels.csv"
    batch.to_csv(labels, index=False)
    assert fails("label", session, labels) == (
        f"error: labels file {str(labels)!r}, data row 30: item_id {wrong!r} is not in the pool; use ids exactly as "
        "in the pool's id column. Nothing was stored")
    assert "labels   0 (" in ok("status", session).stdout


@pytest.mark.parametrize(("header", "flag"), [("ITEM_ID", ()), ("item_id", ("--id-col", "ITEM_ID"))])
def test_the_id_column_is_found_regardless_of_case(tmp_path, pool_frame, header, flag):
    path = tmp_path / "pool.csv"
    pool_frame.drop(columns="label").rename(columns={"item_id": header}).to_csv(path, index=False)
    result = ok("init", path, "--session", tmp_path / "s.lw", *flag)
    assert "no id column" not in result.stderr
    assert pd.read_csv(io.StringIO(ok("next", tmp_path / "s.lw", "-n", 3).stdout))["item_id"].min() >= 1000


def test_a_misnamed_pred_column_names_the_file_the_column_and_the_flag(tmp_path, pool_frame):
    path = tmp_path / "pool.csv"
    pool_frame.drop(columns="label").rename(columns={"pred": "prediction"}).to_csv(path, index=False)
    line = fails("init", path, "--session", tmp_path / "s.lw")
    assert line.startswith(f"error: pool file {str(path)!r}: measure 'f1' needs system output 'preds'"), line
    assert "column 'pred'" in line and "--pred-col prediction" in line, line
    assert not (tmp_path / "s.lw").exists()


def test_a_misnamed_prob_column_is_a_warning_naming_the_flag(tmp_path, pool_frame):
    path = tmp_path / "pool.csv"
    pool_frame.drop(columns="label").rename(columns={"prob": "probability"}).to_csv(path, index=False)
    result = ok("init", path, "--session", tmp_path / "s.lw")
    assert (f"warning: pool file {str(path)!r} has no column 'prob'; column(s) ['probability'] were not read: pass "
            "--prob-col probability if it holds the systems' probabilities") in result.stderr.splitlines()


def test_a_wrong_pred_col_names_the_flag(tmp_path, pool_file):
    line = fails("init", pool_file, "--session", tmp_path / "s.lw", "--pred-col", "predicted")
    assert line.endswith("Pass the right name (--pred-col on the command line, pred_cols= in Python)"), line


def test_export_writes_integer_labels_beside_an_exclusion(tmp_path, pool_file):
    session = tmp_path / "s.lw"
    ok("init", pool_file, "--session", session, "--design", "stratified")
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 2).stdout))
    labels = tmp_path / "labels.csv"
    batch.iloc[:1].assign(label=1).to_csv(labels, index=False)
    ok("label", session, labels)
    ok("exclude", session, batch["item_id"][1])
    ok("export", session, "-o", tmp_path / "all.csv")
    rows = (tmp_path / "all.csv").read_text().splitlines()
    assert [row.split(",")[1] for row in rows] == ["label", "1", ""]
    assert fails("relabel", session, batch["item_id"][0], "2") == (
        f"error: item {batch['item_id'][0]}: label 2 is outside the label set 0..1; fix the label you give")


def test_a_closed_pipe_ends_the_command_quietly(tmp_path, pool_file):
    session = tmp_path / "s.lw"
    ok("init", pool_file, "--session", session)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for extra in ((), ("--json",)):
        child = subprocess.Popen([sys.executable, "-m", "labelwise", "estimate", str(session), *extra],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        child.stdout.close()  # the reader is gone before the first write, as after `| head` has read its lines
        assert child.stderr.read() == b""
        child.wait()
