"""Error lines that name the fix, and help texts that say what the command does.

Each error is one line naming the file, the row or field, and the option
or command that fixes it: a pool without truth given to ``simulate``, a
stochastic ``relabel`` without ``--draw``, an empty labels file, a cost
model with text for a price, and a session file of one kind given to the
commands of another.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.datasets import make_pool


def flat(text: str) -> str:
    """A help text's lines joined (rich wraps them inside boxes)."""
    return " ".join(line.strip(" │╭╮╰╯─") for line in text.splitlines())


@pytest.fixture
def pool(tmp_path, write_pool_csv):
    model = make_pool(500, prevalence=0.2, separation=2.0, seed=5)
    return model, write_pool_csv(model, tmp_path / "pool.csv", labels=False)


@pytest.fixture
def kinds(tmp_path, pool, ok):
    """A labeling session, an on-demand evaluation and a discovery session."""
    _, pool_file = pool
    ok("init", pool_file, "--session", tmp_path / "s.lw")
    docs = tmp_path / "docs.csv"
    pd.DataFrame({"doc_id": np.arange(5)}).to_csv(docs, index=False)
    ok("ondemand", "init", tmp_path / "e.od", "--documents", docs)
    items = tmp_path / "items.csv"
    pd.DataFrame({"item_id": ["a", "b", "c"], "g": ["x", "y", "x"]}).to_csv(items, index=False)
    ok("discover", "init", tmp_path / "d.lw", "--hierarchy", items, "--attributes", "g", "--budget", 5)
    return {"pool": tmp_path / "s.lw", "ondemand": tmp_path / "e.od", "discover": tmp_path / "d.lw"}


# ------------------------------------------------------------------ 8, 9, 10, 11
def test_simulate_on_a_pool_without_truth_names_label_col(pool, fails):
    _, pool_file = pool
    line = fails("simulate", "--pool", pool_file, "--budget", 20, "--repeats", 1)
    assert f"pool file {str(pool_file)!r} has no ground-truth column 'label'" in line and "--label-col" in line


def test_relabel_in_a_stochastic_session_names_draw(tmp_path, pool, ok, fails):
    model, pool_file = pool
    session = tmp_path / "noisy.lw"
    ok("init", pool_file, "--session", session, "--design", "importance", "--param", "oracle=stochastic")
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 5).stdout))
    batch.assign(label=model.labels[batch["item_id"].to_numpy()]).to_csv(tmp_path / "l.csv", index=False)
    ok("label", session, tmp_path / "l.csv")
    item, draw = batch.loc[0, "item_id"], batch.loc[0, "draw"]
    assert "--draw N" in fails("relabel", session, item, 1 - model.labels[item])
    assert "label corrected" in ok("relabel", session, item, 1 - model.labels[item], "--draw", draw).stdout


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_an_empty_labels_file_is_named_empty(tmp_path, pool, content, ok, fails):
    _, pool_file = pool
    ok("init", pool_file, "--session", tmp_path / "s.lw")
    (tmp_path / "empty.csv").write_text(content)
    assert fails("label", tmp_path / "s.lw", tmp_path / "empty.csv") == (
        f"error: labels file {str(tmp_path / 'empty.csv')!r} is empty; it needs a header line with the column names "
        "and a row per item")


@pytest.mark.parametrize(("costs", "message"), [
    ({"per_query": "abc"}, 'per_query is "abc"; give a number like 0.5'),
    ({"per_item": True}, "per_item is true; give a number"),
    ({"k": [5, "a"]}, 'k is [5, "a"]; give a list of whole numbers like [5, 10]'),
    ({"l": 3}, "l is 3; give a list of whole numbers"),
])
def test_a_cost_model_with_text_for_a_number_names_the_key(tmp_path, costs, message, fails):
    items = tmp_path / "items.csv"
    pd.DataFrame({"item_id": ["a", "b"], "g": ["x", "y"]}).to_csv(items, index=False)
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(costs))
    line = fails("discover", "init", tmp_path / "d.lw", "--hierarchy", items, "--attributes", "g", "--budget", 5,
                 "--costs", path)
    assert line.startswith(f"error: {path}: {message}"), line


# ------------------------------------------------------------------ 13: a session file given to the wrong command
@pytest.mark.parametrize(("kind", "command", "says"), [
    ("ondemand", ("estimate",), "is an on-demand evaluation file; use `labelwise ondemand report {}`"),
    ("ondemand", ("status",), "is an on-demand evaluation file; use `labelwise ondemand report {}`"),
    ("discover", ("estimate",), "is a discovery session file; use `labelwise discover report {}`"),
    ("pool", ("ondemand", "report"), "is a labeling session file; use `labelwise estimate {}`"),
    ("discover", ("ondemand", "report"), "is a discovery session file; use `labelwise discover report {}`"),
    ("pool", ("discover", "report"), "is a labeling session file; use `labelwise estimate {}`"),
    ("ondemand", ("discover", "report"), "is an on-demand evaluation file; use `labelwise ondemand report {}`"),
])
def test_a_session_file_of_another_kind_names_its_command(kinds, kind, command, says, fails):
    path = kinds[kind]
    assert fails(*command, path) == f"error: {str(path)!r} " + says.format(path)


# ------------------------------------------------------------------ 15: help texts
def test_help_texts_say_what_the_command_does(ok):
    def helps(*command: str) -> str:
        return flat(ok(*command, "--help").stdout)

    assert "(from `labelwise discover init`)" not in helps("discover", "init").split("--session")[0]
    assert "(from `labelwise ondemand init`)" not in helps("ondemand", "init").split("--session")[0]
    assert all(kind in helps("serve") for kind in ("TSV", "JSON lines", "Parquet"))
    assert "Default: online-poisson; stratified for auc and roc_curve" in helps("init")


def test_a_label_outside_a_binary_truth_pool_says_to_correct_it(tmp_path, write_pool_csv, fails):
    model = make_pool(300, seed=6)
    path = write_pool_csv(model, tmp_path / "truth.csv")
    frame = pd.read_csv(path)
    frame.loc[4, "label"] = 2
    frame.to_csv(path, index=False)
    line = fails("simulate", "--pool", path, "--budget", 20, "--repeats", 1)
    assert line == (f"error: pool file {str(path)!r}, data row 5, column 'label': value 2 is not 0 or 1; the pool is "
                    "binary (its systems give one probability each, in 'prob'; a multi-class pool gives one column per "
                    "class), so labels must be 0 or 1: correct "
                    "the label in the file")


def test_calibrate_refuses_standard_output_that_its_report_takes(tmp_path, pool, ok, fails):
    _, pool_file = pool
    ok("init", pool_file, "--session", tmp_path / "s.lw")
    assert "calibrate prints its report on standard output" in fails("calibrate", tmp_path / "s.lw", "--out", "-")


def test_a_negative_seed_is_refused_naming_seed(tmp_path, pool):
    """NumPy's own "expected non-negative integer" named no option; the session file was not created either way."""
    _, pool_file = pool
    result = CliRunner().invoke(app, ["init", str(pool_file), "--session", str(tmp_path / "s.lw"), "--seed", "-1"])
    assert result.exit_code == 2
    assert "Invalid value for '--seed'" in flat(result.stderr)
    assert not (tmp_path / "s.lw").exists()


def test_each_command_is_one_line_of_the_command_list():
    """A summary written over two docstring lines broke add-system's entry in `labelwise --help` in two."""
    listing = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250"}).stdout
    entries = [line for line in listing.splitlines() if line.startswith("│ ")]
    assert entries and all(line.split("│")[1][:12].strip() for line in entries), listing


@pytest.mark.parametrize("threshold", ["80", "-2"])
def test_certify_refuses_a_threshold_outside_every_measures_range(tmp_path, pool, ok, fails, threshold):
    """80 for 80% would otherwise be "refuted" at once, from no label."""
    _, pool_file = pool
    ok("init", pool_file, "--session", tmp_path / "s.lw", "--design", "passive")
    assert fails("certify", tmp_path / "s.lw", "--at-least", threshold) == (
        f"error: --at-least: {threshold} is outside every measure's range (F1, precision, recall, accuracy, AUC... lie "
        "in [0, 1], MCC in [-1, 1]); give a fraction, e.g. 0.8 for 80%")
    assert "certified" in ok("certify", tmp_path / "s.lw", "--at-least", "0").stdout


def test_init_and_status_show_the_budget_poisson_plans_for(tmp_path, write_pool_csv, ok, fails):
    """``init --budget 20 -d poisson`` printed ``poisson (budget=None, ...)``: the design's budget, left to the
    session, not the one it plans for; without any budget ``next`` failed naming ``Session.run``."""
    pool = make_pool(300, prevalence=0.2, seed=1)
    path = write_pool_csv(pool, tmp_path / "pool.csv", labels=False)
    created = ok("init", path, tmp_path / "a.lw", "-d", "poisson", "--budget", 20).stdout
    assert "design:  poisson (budget=20, lam=1.0, defensive=0.1), seed 0" in created, created
    assert "design   poisson (budget=20, lam=1.0, defensive=0.1), deterministic oracle" in ok(
        "status", tmp_path / "a.lw").stdout
    # a budget set on the design alone is the one it plans for: 30 items to hand out
    created = ok("init", path, tmp_path / "b.lw", "-d", "poisson", "-p", "budget=30").stdout
    assert "design:  poisson (budget=30, " in created, created
    assert len(pd.read_csv(io.StringIO(ok("next", tmp_path / "b.lw", "-n", 30).stdout))) == 30
    # one that differs from --budget was taken silently over it: refused, as on an engine
    assert fails("init", path, tmp_path / "d.lw", "-d", "poisson", "-p", "budget=30", "--budget", 20) == (
        "error: --param budget=30: the session plans its sample for --budget (20); drop the parameter and give "
        "--budget 30")
    assert not (tmp_path / "d.lw").exists()
    assert "design:  poisson (budget=20, " in ok("init", path, tmp_path / "e.lw", "-d", "poisson", "-p", "budget=20",
                                                 "--budget", 20).stdout
    assert fails("init", path, tmp_path / "c.lw", "-d", "poisson") == (
        "error: --budget: design 'poisson' plans its sample for a number of labels; give --budget M (M >= 1)")
    assert not (tmp_path / "c.lw").exists()
