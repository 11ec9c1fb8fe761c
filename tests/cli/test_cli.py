"""Tests of the ``labelwise`` command line (:mod:`labelwise.cli`)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import labelwise as lw
from labelwise.cli import app, parse_params, parse_systems, parse_value
from labelwise.datasets import make_pool
from labelwise.measures import make_measure
from labelwise.session import Session

runner = CliRunner()

CONTRACT_FIELDS = {"pool", "n_items", "measure", "design", "true_value", "repeats", "seconds_per_run", "checkpoints"}
CHECKPOINT_FIELDS = {"labels", "mse", "bias", "undefined_fraction", "coverage", "mean_width"}


@pytest.fixture(scope="module")
def pool_csv(tmp_path_factory, write_pool_csv) -> Path:
    """A generated binary pool with ground truth, written as CSV."""
    pool = make_pool(3000, prevalence=0.05, separation=2.5, seed=7)
    return write_pool_csv(pool, tmp_path_factory.mktemp("pool") / "pool.csv")


@pytest.fixture
def small_pool_file(tmp_path, write_pool_csv) -> Path:
    """A 40-item pool written as CSV (no labels), for annotation loops."""
    return write_pool_csv(make_pool(40, prevalence=0.3, seed=5), tmp_path / "pool.csv", labels=False)


@pytest.fixture(scope="module")
def truth(pool_csv) -> pd.Series:
    df = pd.read_csv(pool_csv)
    return pd.Series(df["label"].to_numpy(), index=df["item_id"].to_numpy())


def invoke(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


def ok(*args: str | Path):
    result = invoke(*args)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def fails(*args: str | Path) -> str:
    """Run a command that must fail cleanly; return its one-line error message."""
    result = invoke(*args)
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def n_labels(session: Path) -> int:
    with Session.open(session) as s:
        return s.n_labels


def write_labels(ids, truth: pd.Series, path: Path) -> Path:
    df = pd.DataFrame({"item_id": ids, "label": truth.loc[list(ids)].to_numpy()})
    if path.suffix == ".jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        df.to_csv(path, index=False)
    return path


def init_session(pool_csv: Path, tmp_path: Path, *extra: str) -> Path:
    session = tmp_path / "eval.lw"
    ok("init", pool_csv, "--session", session, *extra)
    return session


# ------------------------------------------------------------------ helpers
def test_parse_value_and_params():
    assert parse_value("3") == 3 and isinstance(parse_value("3"), int)
    assert parse_value("0.5") == 0.5
    assert parse_value("True") is True and parse_value("false") is False
    assert parse_value("neyman") == "neyman"
    assert parse_params(["lam=0.9", "n_strata=8", "allocation=neyman"]) == {
        "lam": 0.9, "n_strata": 8, "allocation": "neyman"}
    assert parse_params(None) == {}
    with pytest.raises(ValueError, match="key=value"):
        parse_params(["lam"])
    assert parse_systems("all") == "all" and parse_systems("1") == 1 and parse_systems("0, 2") == [0, 2]
    with pytest.raises(ValueError, match="--systems"):
        parse_systems("x")


# ------------------------------------------------------------------ annotation loop
def test_annotation_loop_matches_in_process_session(pool_csv, truth, tmp_path):
    session = tmp_path / "eval.lw"
    result = ok("init", pool_csv, "--session", session, "--measure", "f1", "--design", "importance",
                "--param", "lam=1.0", "--seed", "3")
    assert "3000" in result.stdout and "f1" in result.stdout and "importance" in result.stdout

    total = 0
    for round_, suffix in enumerate([".csv", ".jsonl", None]):
        if suffix is None:  # batch as CSV on standard output
            result = ok("next", session, "-n", "40")
            batch = pd.read_csv(io.StringIO(result.stdout))
        else:
            out = tmp_path / f"batch{round_}{suffix}"
            result = ok("next", session, "-n", "40", "--out", out)
            batch = pd.read_json(out, lines=True) if suffix == ".jsonl" else pd.read_csv(out)
        assert "pending from earlier" in result.stderr
        assert list(batch.columns) == ["item_id", "label", "pred", "score", "prob"]
        assert len(batch) == 40
        labels = write_labels(batch["item_id"].tolist(), truth, tmp_path / f"labels{round_}{suffix or '.csv'}")
        result = ok("label", session, labels)
        total += 40
        assert "stored 40 new labels" in result.stdout and f"total {total}" in result.stdout

    # the same file again stores nothing new and is accepted
    assert "stored 0 new labels" in ok("label", session, labels).stdout

    for measure in (None, "f1,precision,recall"):
        args = ["estimate", session, "--json"] + (["--measure", measure] if measure else [])
        got = json.loads(ok(*args).stdout)
        with Session.open(session) as s:
            target = s.measure if measure is None else make_measure(measure, s.pool)
            expected = s.estimate(target).to_dict()
        assert got["measure"] == target.name
        assert got["n_labels"] == expected["n_labels"] == total
        assert [c["name"] for c in got["components"]] == [c["name"] for c in expected["components"]]
        for g, e in zip(got["components"], expected["components"]):
            for key in ("value", "std", "lower", "upper"):
                assert g[key] == pytest.approx(e[key], rel=1e-12, abs=1e-15)
            assert g["defined"] == e["defined"]

    table = ok("estimate", session).stdout
    assert "f1" in table and "std error" in table and "interval" in table
    narrow = json.loads(ok("estimate", session, "--json", "--level", "0.5").stdout)
    assert narrow["level"] == 0.5
    assert "--level" in fails("estimate", session, "--level", "1.5")
    assert "--systems needs --measure" in fails("estimate", session, "--systems", "0")
    assert "unknown format" in fails("next", session, "--out", tmp_path / "batch.xlsx")


def test_next_hands_out_pending_items_first(pool_csv, tmp_path):
    session = init_session(pool_csv, tmp_path)  # online-poisson: a new round waits for the pending items
    first = ok("next", session, "-n", "25")
    assert "0 pending from earlier, 25 new" in first.stderr
    second = ok("next", session, "-n", "10")
    assert second.stdout.splitlines() == first.stdout.splitlines()[:11]
    assert "10 pending from earlier, 0 new" in second.stderr
    more = ok("next", session, "-n", "40")
    assert more.stdout == first.stdout
    assert "online-poisson draws its next round once the 25 pending items are labeled" in more.stderr


@pytest.mark.parametrize("problem", ["unknown id", "contradiction", "label 7", "not proposed"])
def test_label_rejections_store_nothing(pool_csv, truth, tmp_path, problem):
    session = init_session(pool_csv, tmp_path)
    ids = pd.read_csv(io.StringIO(ok("next", session, "-n", "20").stdout))["item_id"].tolist()
    ok("label", session, write_labels(ids[:10], truth, tmp_path / "first.csv"))
    assert n_labels(session) == 10

    df = pd.DataFrame({"item_id": ids, "label": truth.loc[ids].to_numpy()})
    if problem == "unknown id":
        df.loc[15, "item_id"] = 10**9
        expected = "not in the pool"
    elif problem == "contradiction":
        df.loc[3, "label"] = 1 - df.loc[3, "label"]
        expected = "contradicts it (the oracle is deterministic); to correct the stored label use `labelwise relabel`"
    elif problem == "label 7":
        df.loc[12, "label"] = 7
        expected = "outside the label set"
    else:
        proposed = set(ids)
        df.loc[15, "item_id"] = next(i for i in truth.index if i not in proposed)
        expected = "not proposed"
    bad = tmp_path / "bad.csv"
    df.to_csv(bad, index=False)
    message = fails("label", session, bad)
    assert expected in message
    row = {"contradiction": 4, "label 7": 13}.get(problem, 16)  # the file and the row to fix are named
    assert f"labels file {str(bad)!r}" in message and f"data row {row}:" in message
    assert n_labels(session) == 10


def test_label_file_problems(pool_csv, tmp_path):
    session = init_session(pool_csv, tmp_path)
    assert "does not exist" in fails("label", session, tmp_path / "missing.csv")
    wrong = tmp_path / "wrong.csv"
    pd.DataFrame({"id": [1], "y": [0]}).to_csv(wrong, index=False)
    assert "missing column" in fails("label", session, wrong)
    assert "does not exist" in fails("estimate", tmp_path / "nope.lw")


def test_init_errors(pool_csv, tmp_path):
    session = tmp_path / "s.lw"
    assert "unknown design 'nope'" in fails("init", pool_csv, "--session", session, "--design", "nope")
    assert "unknown measure 'nope'" in fails("init", pool_csv, "--session", session, "--measure", "nope")
    assert "lam" in fails("init", pool_csv, "--session", session, "--param", "lam=3")
    assert "bogus" in fails("init", pool_csv, "--session", session, "--param", "bogus=1")
    assert "--budget: must be at least 1" in fails("init", pool_csv, "--session", session, "--budget", "0")
    assert "not found" in fails("init", pool_csv, "--session", session, "--pred-col", "p1,p2")
    assert "does not exist" in fails("init", tmp_path / "missing.csv", "--session", session)
    assert not session.exists()
    ok("init", pool_csv, "--session", session)
    assert "already exists" in fails("init", pool_csv, "--session", session)


def test_init_with_several_systems(tmp_path):
    pool = make_pool(2000, prevalence=0.05, n_systems=2, seed=1)
    path = tmp_path / "two.csv"
    pd.DataFrame({"item_id": [f"x{i}" for i in range(2000)], "pa": pool.preds[:, 0], "pb": pool.preds[:, 1],
                  "sa": pool.scores[:, 0], "sb": pool.scores[:, 1]}).to_csv(path, index=False)
    session = tmp_path / "two.lw"
    result = ok("init", path, "--session", session, "--pred-col", "pa,pb", "--score-col", "sa,sb",
                "--systems", "all", "--measure", "precision")
    assert "pa, pb" in result.stdout
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", "5").stdout))
    assert list(batch.columns) == ["item_id", "label", "pred_pa", "pred_pb", "score_pa", "score_pb"]
    assert batch["label"].isna().all() and batch["item_id"].str.startswith("x").all()
    got = json.loads(ok("estimate", session, "--json").stdout)
    assert [c["name"] for c in got["components"]] == ["precision[pa]", "precision[pb]"]


# ------------------------------------------------------------------ simulate
SIM = ("simulate", "--measure", "f1", "--design", "importance", "--budget", "500", "--batch-size", "50",
       "--repeats", "4", "--seed", "11", "--json")


def test_simulate_json_contract_and_reproducibility(pool_csv):
    first = ok(*SIM, "--pool", pool_csv)
    out = json.loads(first.stdout)  # the whole of stdout is one JSON object
    assert isinstance(out, dict) and CONTRACT_FIELDS <= set(out)
    assert out["n_items"] == 3000 and out["repeats"] == 4
    assert out["measure"] == "f1" and out["design"] == "importance"
    assert 0.0 <= out["true_value"] <= 1.0 and out["seconds_per_run"] >= 0
    assert [c["labels"] for c in out["checkpoints"]] == [250, 500]
    for row in out["checkpoints"]:
        assert set(row) == CHECKPOINT_FIELDS
        assert row["mse"] >= 0 and 0.0 <= row["coverage"] <= 1.0 and 0.0 <= row["undefined_fraction"] <= 1.0
        assert row["mean_width"] >= 0

    again = json.loads(ok(*SIM, "--pool", pool_csv, "--no-progress").stdout)
    for d in (out, again):
        d.pop("seconds_per_run")
    assert again == out


def test_simulate_progress_goes_to_stderr(pool_csv):
    result = ok(*SIM, "--pool", pool_csv, "--progress", "--repeats", "2")
    assert json.loads(result.stdout)["repeats"] == 2
    assert "simulating" in result.stderr


def test_simulate_options(pool_csv):
    out = json.loads(ok(*SIM, "--pool", pool_csv, "--checkpoints", "100,300", "--measure", "f1,recall",
                        "--design", "stratified", "--param", "n_strata=4", "--level", "0.9").stdout)
    assert [c["labels"] for c in out["checkpoints"]] == [100, 300]
    assert out["design"] == "stratified" and out["design_params"]["n_strata"] == 4
    assert len(out["true_value"]) == 2 and len(out["checkpoints"][0]["mse"]) == 2
    table = ok("simulate", "--pool", pool_csv, "--budget", "300", "--repeats", "2").stdout
    assert "coverage" in table and "mse" in table


def test_simulate_errors(pool_csv, tmp_path):
    base = ("simulate", "--pool", pool_csv, "--budget", "300", "--repeats", "2", "--json")
    assert "unknown design" in fails(*base, "--design", "nope")
    assert "unknown measure" in fails(*base, "--measure", "nope")
    assert "budget" in fails("simulate", "--pool", pool_csv, "--budget", "100000", "--json")
    assert "checkpoints" in fails(*base, "--checkpoints", "100,x")
    assert "does not exist" in fails("simulate", "--pool", tmp_path / "missing.csv")
    assert "not found" in fails(*base, "--label-col", "nope")
    no_truth = tmp_path / "no_truth.csv"
    pd.read_csv(pool_csv).drop(columns="label").to_csv(no_truth, index=False)
    assert "ground-truth" in fails("simulate", "--pool", no_truth, "--budget", "300", "--repeats", "2")


# ------------------------------------------------------------------ demo and entry point
def test_demo_prints_table():
    result = ok("demo", "--n-items", "20000", "--prevalence", "0.01", "--budget", "300", "--seed", "1")
    for word in ("f1", "precision", "recall", "true value", "covered?", "passive"):
        assert word in result.stdout
    assert "error" not in result.stderr


def test_python_m_labelwise_help():
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "labelwise", "--help"], capture_output=True, text=True, env=env,
                          check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for command in ("init", "next", "label", "estimate", "demo", "simulate"):
        assert command in proc.stdout
    assert "labelwise" in proc.stdout


def test_simulate_with_annotator_noise(pool_csv):
    """--noise: a stochastic oracle; the truth is the expected measure and the JSON says the noise."""
    result = runner.invoke(app, ["simulate", "--pool", str(pool_csv), "--design", "ais", "--param",
                                 "oracle=stochastic", "--noise", "0.1", "--budget", "200", "--repeats", "3", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["oracle_noise"] == 0.1 and out["design_params"]["oracle"] == "stochastic"
    clean = json.loads(runner.invoke(app, ["simulate", "--pool", str(pool_csv), "--design", "ais", "--budget", "200",
                                           "--repeats", "1", "--json"]).stdout)
    assert clean["oracle_noise"] == 0.0 and out["true_value"] < clean["true_value"] - 0.05
    implied = json.loads(runner.invoke(app, ["simulate", "--pool", str(pool_csv), "--design", "poisson", "--noise",
                                             "0.1", "--budget", "200", "--repeats", "1", "--json"]).stdout)
    assert implied["design_params"]["oracle"] == "stochastic"  # noisy annotators make the oracle stochastic
    bad = runner.invoke(app, ["simulate", "--pool", str(pool_csv), "--design", "poisson", "--noise", "0.1",
                              "--param", "oracle=deterministic", "--budget", "200", "--repeats", "1"])
    assert bad.exit_code != 0 and "oracle=deterministic" in bad.output


def test_annotation_loop_with_several_annotators(tmp_path, small_pool_file):
    """oracle=stochastic: `next` lists an item once per draw, and `label` takes one (maybe different) label each."""
    pool_file = small_pool_file
    session = tmp_path / "noisy.lw"
    ok("init", pool_file, "--session", session, "--design", "ais", "--param", "oracle=stochastic", "--param",
       "n_strata=4", "--param", "branching=4")
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", "60").stdout))
    assert len(batch) == 60 and batch["item_id"].duplicated().any()
    labels = batch[["item_id"]].assign(label=np.arange(60) % 2)  # annotators disagree on repeated items
    labels.iloc[:30].to_csv(tmp_path / "a.csv", index=False)
    labels.iloc[30:].to_csv(tmp_path / "b.csv", index=False)
    assert "total 30 labels, 30 still pending" in ok("label", session, tmp_path / "a.csv").stdout
    assert "total 60 labels, 0 still pending" in ok("label", session, tmp_path / "b.csv").stdout
    # the same file again: every draw of those items is labeled, so nothing is stored
    assert "waiting for a label" in fails("label", session, tmp_path / "b.csv")
    with Session.open(session) as s:
        np.testing.assert_array_equal(s.sample().labels, labels["label"].to_numpy())
        assert json.loads(ok("estimate", session, "--json").stdout)["n_labels"] == 60


def test_a_stochastic_batch_lists_draws_and_a_resubmitted_file_is_stored_once(tmp_path, small_pool_file):
    pool_file = small_pool_file
    session = tmp_path / "noisy.lw"
    ok("init", pool_file, "--session", session, "--design", "importance", "--param", "oracle=stochastic")
    ok("next", session, "-n", "60", "--out", tmp_path / "batch.jsonl")
    batch = pd.read_json(tmp_path / "batch.jsonl", lines=True)
    assert list(batch.columns[:2]) == ["item_id", "draw"] and list(batch["draw"]) == list(range(60))
    answers = batch.assign(label=np.arange(60) % 2)
    answers.iloc[:40].to_csv(tmp_path / "a.csv", index=False)
    answers.to_csv(tmp_path / "all.csv", index=False)
    assert "stored 40 labels (0 rows already stored); total 40 labels, 20 still pending" in ok(
        "label", session, tmp_path / "a.csv").stdout
    assert "stored 20 labels (40 rows already stored); total 60 labels" in ok("label", session, tmp_path / "all.csv").stdout
    assert "stored 0 labels (60 rows already stored)" in ok("label", session, tmp_path / "all.csv").stdout
    answers.assign(label=1 - answers["label"]).to_csv(tmp_path / "flipped.csv", index=False)
    assert "already has label" in fails("label", session, tmp_path / "flipped.csv")
    answers.assign(draw=answers["draw"].astype(float).where(answers.index > 0)).to_csv(tmp_path / "hole.csv",
                                                                                      index=False)
    assert "column 'draw' is empty" in fails("label", session, tmp_path / "hole.csv")
    with Session.open(session) as s:
        np.testing.assert_array_equal(s.sample().labels, answers["label"].to_numpy())


# ------------------------------------------------------------------ multi-label pools
def test_cli_reads_multilabel_pools(tmp_path):
    pool = lw.make_multilabel_pool(2000, 2, prevalence=[0.1, 0.05], seed=8, label_names=["toxic", "threat"])
    frame = pd.DataFrame({"item_id": pool.item_ids})
    V, F = lw.decode_multilabel(pool.labels, 2), lw.decode_multilabel(pool.preds[:, 0], 2)
    marginals = pool.probs[:, 0] @ lw.decode_multilabel(np.arange(4), 2)
    for k, name in enumerate(pool.label_names):
        frame[f"pred_{name}"], frame[f"prob_{name}"], frame[f"label_{name}"] = F[:, k], marginals[:, k], V[:, k]
    csv = tmp_path / "toxic.csv"
    frame.to_csv(csv, index=False)
    res = runner.invoke(app, ["simulate", "--pool", str(csv), "--multilabel", "toxic,threat", "--measure",
                              "multilabel_macro_f1", "--design", "importance", "--budget", "200", "--repeats", "2",
                              "--json", "--no-progress"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["true_value"] == pytest.approx(lw.true_value(pool, lw.MultiLabelMacroF1(2))[0], rel=1e-12)
    assert out["checkpoints"][-1]["labels"] == 200
    session = tmp_path / "toxic.lwsession"
    res = runner.invoke(app, ["init", str(csv), "--session", str(session), "--multilabel", "toxic,threat",
                              "--measure", "multilabel_micro_f1"])
    assert res.exit_code == 0 and "4 classes" in res.stdout, res.output
    assert "design:  importance" in res.stdout  # the default for multi-label pools
    res = runner.invoke(app, ["simulate", "--pool", str(csv), "--multilabel", "toxic,obscene"])
    assert res.exit_code == 1 and "label_obscene" in res.output and "<prefix>_<label>" in res.output
