"""Bad input from the shell is one line naming the file, the row or field, and the fix, with the store untouched:
design settings of the wrong type or range, one mistyped id in a labels file, pool columns named differently
from what the flags expect, labels exported as integers, and a reader that goes away (``| head``)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.datasets import make_pool

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def ok(*args):
    result = run(*args)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def fails(*args) -> str:
    result = run(*args)
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


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


@pytest.mark.parametrize("typo", ["5675x", "0{id}", " {id}"])
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
        "error: label: values ['2'] are outside the label set 0..1; fix them in the labels you give")


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
