"""``labelwise ondemand simulate``: files in, the library's result out, one-line errors."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.ondemand import OnDemandConfig
from labelwise.ondemand.corpus import make_kbp_corpus
from labelwise.ondemand.simulate import simulate


def write_corpus(tmp_path, n_docs: int = 60):
    corpus = make_kbp_corpus(n_docs=n_docs, seed=4)
    truth = tmp_path / "truth.csv"
    pd.DataFrame({"instance_id": corpus["instance_id"], "doc_id": corpus["doc_id"],
                  "correct": corpus["correct"].astype(int)}).to_csv(truth, index=False)
    doc_of = dict(zip(corpus["instance_id"], corpus["doc_id"]))
    args = []
    for name, ids in corpus["systems"][:4]:
        path = tmp_path / f"{name}.csv"
        pd.DataFrame({"instance_id": ids, "doc_id": [doc_of[i] for i in ids]}).to_csv(path, index=False)
        args += ["--system", f"{name}={path}"]
    return corpus, truth, args


@pytest.mark.parametrize("flag", [None, "--control-variate", "--composite", "--unnormalized", "--product-recall"])
def test_simulate_json_is_the_librarys_result(tmp_path, flag):
    corpus, truth, systems = write_corpus(tmp_path)
    out = CliRunner().invoke(app, ["ondemand", "simulate", "--truth", str(truth), *systems, "--repeats", "3",
                                   "--half-width", "0.1", "--json", *([flag] if flag else [])])
    assert out.exit_code == 0, out.output
    printed = json.loads(out.stdout)
    expected = simulate(corpus["instance_id"].astype(str), corpus["doc_id"].astype(str), corpus["correct"],
                        [(n, np.asarray(i).astype(str)) for n, i in corpus["systems"][:4]],
                        OnDemandConfig(half_width=0.1, control_variate=flag == "--control-variate",
                                       composite=flag == "--composite", normalized=flag != "--unnormalized",
                                       combined_recall=flag != "--product-recall"),
                        repeats=3, seed=0)
    assert printed == json.loads(json.dumps(expected))
    first_name, first_ids = corpus["systems"][0]
    correct = dict(zip(corpus["instance_id"], corpus["correct"]))
    assert printed["systems"][0]["name"] == first_name
    assert printed["systems"][0]["true_precision"] == pytest.approx(np.mean([correct[i] for i in first_ids]))
    assert set(printed["systems"][0]["joint"]) >= {"mse_precision", "mse_recall", "mse_f1", "coverage_precision",
                                                   "coverage_recall", "labels", "documents"}
    assert set(printed["cost"]) == {"joint_dollars", "simple_dollars", "exhaustive_dollars"}


def test_simulate_errors_are_one_line(tmp_path):
    _, truth, systems = write_corpus(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("instance_id,document\nx,1\n")
    cases = [
        (["--system", f"b={bad}"], "no column doc_id"),
        (["--system", "nofile"], "is not NAME=FILE"),
        (systems[:2] + systems[:2], "given twice"),
        (["--system", f"b={truth}", "--scheme", "odd"], "not one of overlap"),
    ]
    for extra, words in cases:
        out = CliRunner().invoke(app, ["ondemand", "simulate", "--truth", str(truth), *extra, "--repeats", "1"])
        assert out.exit_code == 1 and out.output.count("\n") == 1 and words in out.output, out.output
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("instance_id,doc_id\nnot-there,1\n")
    out = CliRunner().invoke(app, ["ondemand", "simulate", "--truth", str(truth), "--system", f"u={unknown}"])
    assert out.exit_code == 1 and "'not-there' is not in" in out.output


def start_evaluation(tmp_path, *options: str):
    """``ondemand init`` on a 40-document corpus; the corpus, the ``--system`` arguments and the file."""
    corpus, _, systems = write_corpus(tmp_path, n_docs=40)
    docs = tmp_path / "docs.csv"
    pd.DataFrame({"doc_id": np.arange(40)}).to_csv(docs, index=False)
    ev = tmp_path / "eval.od"
    assert CliRunner().invoke(app, ["ondemand", "init", str(ev), "--documents", str(docs), *options]).exit_code == 0
    return corpus, systems, ev


@pytest.mark.parametrize("half_width", ["0.1", "0.05"])
def test_the_workflow_end_to_end_gives_the_librarys_report(tmp_path, half_width):
    """init, submit two systems, next / label / annotate until nothing waits, report: as the library says.  At
    the narrower half-width recall asks for more documents once the first ones are in, and says so."""
    from labelwise.ondemand import OnDemandSession

    corpus, systems, ev = start_evaluation(tmp_path, "--half-width", half_width)
    requested = []
    run = CliRunner()
    correct = dict(zip(corpus["instance_id"], corpus["correct"].astype(int)))
    found_in = pd.DataFrame({"doc_id": corpus["doc_id"], "instance_id": corpus["instance_id"]})[corpus["correct"]]
    for spec in systems[1::2][:2]:
        name, file = spec.split("=")
        out = run.invoke(app, ["ondemand", "submit", str(ev), name, file])
        assert out.exit_code == 0 and "new verifications" in out.output, out.output
        for _ in range(10):  # answer until nothing waits (recall may ask for more documents)
            tasks_file = tmp_path / "tasks.csv"
            assert run.invoke(app, ["ondemand", "next", str(ev), "--out", str(tasks_file)]).exit_code == 0
            tasks = pd.read_csv(tasks_file, dtype={"instance_id": str})
            if tasks.empty:
                break
            verify = tasks[tasks["task"] == "verify"].copy()
            verify["label"] = [correct[i] for i in verify["instance_id"]]
            pd.concat([verify, tasks[tasks["task"] == "annotate"]]).to_csv(tmp_path / "answers.csv", index=False)
            assert run.invoke(app, ["ondemand", "label", str(ev), str(tmp_path / "answers.csv")]).exit_code == 0
            wanted = tasks.loc[tasks["task"] == "annotate", "doc_id"].astype(int)
            if len(wanted):
                rows = found_in[found_in["doc_id"].isin(wanted)]
                empty = pd.DataFrame({"doc_id": pd.Series(sorted(set(wanted) - set(rows["doc_id"])), dtype=int),
                                      "instance_id": ""})
                pd.concat([rows, empty]).to_csv(tmp_path / "found.csv", index=False)
                out = run.invoke(app, ["ondemand", "annotate", str(ev), str(tmp_path / "found.csv")])
                assert out.exit_code == 0, out.output
                # every waiting document was annotated: those waiting now were requested by this answer, and say why
                waiting = int(re.search(r"(\d+) documents wait", out.output).group(1))
                assert (f"({waiting} more requested: recall's interval" in out.output) == (waiting > 0), out.output
                requested.append(waiting)
    assert any(requested) == (half_width == "0.05")
    printed = json.loads(run.invoke(app, ["ondemand", "report", str(ev), "--json"]).stdout)
    assert printed == json.loads(json.dumps(OnDemandSession.open(ev).report()))
    assert [s["status"] for s in printed["systems"]] == ["estimated", "estimated"]
    assert printed["pending_verifications"] == 0 and printed["labels"] > 0 and printed["documents"] > 0
    table = run.invoke(app, ["ondemand", "report", str(ev)])
    assert table.exit_code == 0 and printed["systems"][0]["name"] in table.output


def test_workflow_errors_name_the_file(tmp_path):
    _, systems, ev = start_evaluation(tmp_path)
    run = CliRunner()
    name, file = systems[1].split("=")
    run.invoke(app, ["ondemand", "submit", str(ev), name, file])
    before = ev.read_bytes()
    bad = tmp_path / "bad.csv"
    bad.write_text("instance_id,label\nnot-drawn,1\n")
    out = run.invoke(app, ["ondemand", "label", str(ev), str(bad)])
    assert out.exit_code == 1 and out.output.count("\n") == 1 and str(bad) in out.output and "not-drawn" in out.output
    assert "`labelwise ondemand next` lists" in out.output  # the command to run, not the Python method
    missing = run.invoke(app, ["ondemand", "submit", str(ev), "other", str(tmp_path / "nope.csv")])
    assert missing.exit_code == 1 and f"predictions file '{tmp_path / 'nope.csv'}' does not exist" in missing.output
    bad.write_text("instance_id,label\nx,2\n")
    out = run.invoke(app, ["ondemand", "label", str(ev), str(bad)])
    assert out.exit_code == 1 and "column label: '2' is not 0 or 1" in out.output
    empty = tmp_path / "empty.csv"
    empty.write_text("doc_id,instance_id\n")
    out = run.invoke(app, ["ondemand", "annotate", str(ev), str(empty)])
    assert out.exit_code == 1 and f"{empty}: no rows" in out.output
    again = run.invoke(app, ["ondemand", "submit", str(ev), name, file])
    assert again.exit_code == 1 and "already submitted" in again.output
    scored = tmp_path / "scored.csv"
    pd.read_csv(file).assign(score=["0.5"] * 2 + ["high"] + ["0.5"] * (len(pd.read_csv(file)) - 3)).to_csv(
        scored, index=False)
    out = run.invoke(app, ["ondemand", "submit", str(ev), "scored", str(scored)])
    assert out.exit_code == 1 and out.stderr == (f"error: predictions file {str(scored)!r}, data row 3, column 'score': "
                                                 "'high' is not a number; scores must be numbers\n")
    assert ev.read_bytes() == before


def test_simulate_with_scores_draws_by_score(tmp_path):
    """A score column makes p_i proportional to the score (the library given the same scores)."""
    corpus, truth, _ = write_corpus(tmp_path)
    doc_of = dict(zip(corpus["instance_id"], corpus["doc_id"]))
    name, ids = corpus["systems"][0]
    scores = np.linspace(1.0, 3.0, len(ids))
    path = tmp_path / "scored.csv"
    pd.DataFrame({"instance_id": ids, "doc_id": [doc_of[i] for i in ids], "score": scores}).to_csv(path, index=False)
    out = CliRunner().invoke(app, ["ondemand", "simulate", "--truth", str(truth), "--system", f"{name}={path}",
                                   "--repeats", "2", "--half-width", "0.1", "--json"])
    assert out.exit_code == 0, out.output
    expected = simulate(corpus["instance_id"].astype(str), corpus["doc_id"].astype(str), corpus["correct"],
                        [(name, np.asarray(ids).astype(str))], OnDemandConfig(half_width=0.1), repeats=2, seed=0,
                        scores={name: scores})
    assert json.loads(out.stdout) == json.loads(json.dumps(expected))


@pytest.mark.parametrize("adjust", ["--control-variate", "--composite"])
def test_normalized_with_an_adjustment_of_the_unnormalized_estimator_is_refused(tmp_path, adjust):
    _, truth, systems = write_corpus(tmp_path)
    out = CliRunner().invoke(app, ["ondemand", "simulate", "--truth", str(truth), *systems, "--repeats", "1",
                                   "--normalized", adjust])
    assert out.exit_code == 1 and "--normalized: --control-variate and --composite adjust" in out.output
    assert len(out.output.strip().splitlines()) == 1
