"""``labelwise plan``, ``labelwise certify`` and ``estimate --anytime`` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.session import Session

from .conftest import labeled_passive_session

runner = CliRunner()


@pytest.fixture(scope="module")
def pool_csv(tmp_path_factory, write_pool_csv, pool) -> Path:
    return write_pool_csv(pool, tmp_path_factory.mktemp("pool") / "pool.csv", labels=False)


@pytest.fixture(scope="module")
def session_file(tmp_path_factory, pool_csv, pool) -> Path:
    """A session with the passive design and 300 labels, given in batches of 50."""
    return labeled_passive_session(tmp_path_factory.mktemp("session") / "s.lw", pool_csv, pool)


def test_plan_for_a_pool_lists_every_design_asked(pool_csv):
    result = runner.invoke(app, ["plan", "--pool", str(pool_csv), "--measure", "f1", "--half-width", "0.05",
                                 "--designs", "passive,importance", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [p["design"] for p in out["plans"]] == ["passive", "importance"]
    assert all(set(p) >= {"design", "labels_needed", "low", "high"} for p in out["plans"])


def test_plan_for_a_session_matches_the_library(session_file):
    result = runner.invoke(app, ["plan", str(session_file), "--half-width", "0.02", "--json"])
    assert result.exit_code == 0, result.output
    with Session.open(session_file) as s:
        assert json.loads(result.stdout)["plans"] == [s.labels_needed(0.02).to_dict()]


def test_estimate_anytime_and_certify_agree(session_file):
    est = json.loads(runner.invoke(app, ["estimate", str(session_file), "--anytime", "--json"]).stdout)
    (comp,) = est["components"]
    assert "anytime-valid" in est["interval_basis"] and comp["lower"] < comp["value"] < comp["upper"]
    below = json.loads(runner.invoke(app, ["certify", str(session_file), "--at-least", str(comp["lower"] - 0.01),
                                           "--json"]).stdout)
    assert below == {"verdict": "certified", "component": "f1", "threshold": comp["lower"] - 0.01,
                     "lower": comp["lower"], "upper": comp["upper"], "labels": 300, "level": 0.95,
                     "emptied": False}
    result = runner.invoke(app, ["certify", str(session_file), "--at-least", "0.999"])
    assert result.exit_code == 0 and result.stdout.startswith("refuted: f1 in [")


@pytest.mark.parametrize(("args", "message"), [
    (["plan", "--half-width", "0.02"], "give either a session file or --pool"),
    (["plan", "SESSION", "--half-width", "0"], "--half-width: must be positive"),
    (["estimate", "SESSION", "--anytime", "--measure", "mcc"], "'mcc' is neither"),
    (["certify", "SESSION", "--at-least", "0.5", "--component", "recall"], "component: 'recall' is not one of f1"),
])
def test_user_errors_are_one_line(session_file, args, message):
    result = runner.invoke(app, [str(session_file) if a == "SESSION" else a for a in args])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ") and message in result.stderr


def test_a_design_without_replacement_names_the_fix(tmp_path, pool_csv):
    path = tmp_path / "p.lw"
    runner.invoke(app, ["init", str(pool_csv), "-s", str(path), "-d", "online-poisson"])
    result = runner.invoke(app, ["estimate", str(path), "--anytime"])
    assert result.exit_code == 1 and "--design passive" in result.stderr


