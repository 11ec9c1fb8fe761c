"""``labelwise discover``: the annotation loop through files, the simulate contract, one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.discover import Hierarchy, simulate_discovery


@pytest.fixture
def population(tmp_path):
    rng = np.random.default_rng(0)
    n = 120
    frame = pd.DataFrame({"item_id": [f"x{i:03d}" for i in range(n)], "a": rng.choice(["u", "v"], n),
                          "b": rng.choice(["p", "q", "r"], n), "positive": (rng.random(n) < 0.4).astype(int),
                          "popularity": rng.pareto(1.0, n) + 0.1})
    path = tmp_path / "population.csv"
    frame.to_csv(path, index=False)
    return frame, path


def run(*args):
    return CliRunner().invoke(app, ["discover", *map(str, args)])


def test_annotation_loop(tmp_path, population):
    frame, path = population
    disco = tmp_path / "d.lw"
    assert run("init", disco, "--hierarchy", path, "--attributes", "a,b", "--budget", 10).exit_code == 0
    out = run("next", disco, "--out", tmp_path / "q.csv")
    assert out.exit_code == 0, out.output
    query = pd.read_csv(tmp_path / "q.csv")
    assert list(query.columns) == ["query", "node", "k", "exclude_item_id"]
    first = json.loads(run("next", disco).stdout)
    assert set(first) == {"query", "node", "k", "exclude", "cost"} and first["query"] == 0
    positives = frame.loc[frame["positive"] == 1, "item_id"].head(first["k"])
    positives.to_frame().to_csv(tmp_path / "answers.csv", index=False)
    assert run("answer", disco, tmp_path / "answers.csv").exit_code == 0
    report = json.loads(run("report", disco, "--json").stdout)
    assert report["found"] == positives.size and report["queries"] == 1
    assert set(report["remaining_estimate"]) == {"value", "interval", "estimated_total", "lower_bound_only", "doubts",
                                                 "unseen_share"}
    printed = " ".join(run("report", disco).stdout.split())
    assert ("lower bound only" in printed) == report["remaining_estimate"]["lower_bound_only"]
    assert run("export", disco, "--out", tmp_path / "labels.csv").exit_code == 0
    labels = pd.read_csv(tmp_path / "labels.csv", dtype=str)
    assert list(labels.columns) == ["item_id", "label"] and sorted(labels["item_id"]) == sorted(positives)


def test_user_errors_are_one_line(tmp_path, population):
    _, path = population
    disco = tmp_path / "d.lw"
    run("init", disco, "--hierarchy", path, "--attributes", "a,b", "--budget", 10)
    cases = [
        (run("init", tmp_path / "e.lw", "--hierarchy", path, "--attributes", "a,zz", "--budget", 10), "no column zz"),
        (run("init", tmp_path / "e.lw", "--hierarchy", path, "--attributes", "a", "--budget", -1), "--budget: give"),
        (run("answer", disco, path), "no query waits"),
        (run("next", tmp_path / "missing.lw"), "does not exist"),
        (run("simulate", "--population", path, "--attributes", "a", "--budget", 5, "--policy", "best"),
         "--policy: 'best' is not one of"),
    ]
    for out, message in cases:
        assert out.exit_code == 1
        assert out.stderr.startswith("error: ") and message in out.stderr and out.stderr.count("\n") == 1


@pytest.mark.parametrize("policy", ["crux", "oracle"])
def test_simulate_json_is_the_librarys_result(population, policy):
    frame, path = population
    out = run("simulate", "--population", path, "--attributes", "a,b", "--budget", 12, "--policy", policy,
              "--repeats", 3, "--seed", 5, "--json")
    assert out.exit_code == 0, out.output
    printed = json.loads(out.stdout)
    expected = simulate_discovery(Hierarchy.from_frame(frame, ["a", "b"]), frame["positive"].to_numpy() == 1,
                                  frame["popularity"].to_numpy(), 12.0, policy, repeats=3, seed=5)
    assert printed == json.loads(json.dumps(expected))
    assert {"policy", "budget", "curve", "remaining_estimate", "coverage"} <= set(printed)
    assert len(printed["curve"]) == 10
    assert set(printed["curve"][0]) >= {"spent", "distinct_found", "true_total"}


def test_the_report_gives_one_estimate_in_text_table_and_json(tmp_path):
    """26 crux queries on 3000 items, the later ones below the root with exclude lists: the root's row is the
    report's estimate, not the rougher guide from every answer, and the text prints the same value and interval."""
    rng = np.random.default_rng(1)
    n = 3000
    frame = pd.DataFrame({"item_id": [f"it{i:04d}" for i in range(n)], "genre": rng.choice(list("abcd"), n),
                          "decade": rng.choice(["70s", "80s", "90s"], n), "positive": (rng.random(n) < 0.1).astype(int),
                          "popularity": rng.pareto(1.0, n) + 0.1})
    path = tmp_path / "population.csv"
    frame.to_csv(path, index=False)
    disco = tmp_path / "d.lw"
    assert run("init", disco, "--hierarchy", path, "--attributes", "genre,decade", "--budget", 200).exit_code == 0
    positives = frame[frame["positive"] == 1]
    for _ in range(26):
        query = json.loads(run("next", disco).stdout)
        match = positives[~positives["item_id"].isin(query["exclude"])]
        for attribute, value in query["node"].items():
            match = match[match[attribute].astype(str) == str(value)]
        k = min(query["k"], len(match))
        weights = match["popularity"] / match["popularity"].sum()
        picked = match.iloc[rng.choice(len(match), k, replace=False, p=weights)] if k else match.iloc[:0]
        picked[["item_id"]].to_csv(tmp_path / "answers.csv", index=False)
        assert run("answer", disco, tmp_path / "answers.csv").exit_code == 0
    report = json.loads(run("report", disco, "--json").stdout)
    est = report["remaining_estimate"]
    root = next(row for row in report["nodes"] if row["depth"] == 0)
    assert (root["remaining"], root["interval"], root["estimated_total"], root["lower_bound_only"]) == (
        est["value"], est["interval"], est["estimated_total"], est["lower_bound_only"])
    printed = " ".join(run("report", disco).stdout.split())
    low, high = est["interval"]
    assert f"not found yet: {est['value']:.1f} [{low:.1f}, {high:.1f}]" in printed
    assert (f"at least {low:.1f}" in printed) == est["lower_bound_only"]
    assert any(row["depth"] > 0 for row in report["nodes"])  # crux went below the root, with exclude lists
