"""``labelwise logs value|auc|calibrate``: files in, the library's estimates out, one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.logs import (
    expected_calibration_error,
    fit_calibration,
    keep_weights,
    logged_auc,
    policy_value,
    target_probabilities,
)

FIELDS = {"estimate", "lower", "upper", "level", "n_rows", "effective_size"}


@pytest.fixture(scope="module")
def log(bandit):
    """A kept log at l = 0.2 with a new policy column, a score and its label."""
    rng = np.random.default_rng(9)
    data = bandit(3000, 0.2, rng)
    frame = pd.DataFrame({"action": data["action"], "propensity": data["propensity"], "reward": data["reward"],
                          "keep_rate": data["keep_rate"], "new": 3})
    frame["score"] = rng.normal(size=len(frame)) + frame["reward"]
    return frame


def run(*args):
    return CliRunner().invoke(app, ["logs", *map(str, args)])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_value_json_is_the_librarys_estimate(log, tmp_path, suffix):
    path = tmp_path / f"log{suffix}"
    log.to_csv(path, index=False) if suffix == ".csv" else log.to_parquet(path)
    result = run("value", path, "--policy", "new", "--n-dropped", 1234, "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert FIELDS <= printed.keys()
    expected = policy_value(log["reward"], log["propensity"], target_probabilities(3, log["action"]),
                            log["keep_rate"], n_dropped=1234)
    assert printed == pytest.approx(expected.to_dict())


def test_value_reads_a_stochastic_policy_from_a_file(log, tmp_path):
    path, policy = tmp_path / "log.csv", tmp_path / "policy.csv"
    log.to_csv(path, index=False)
    prob = np.linspace(0, 1, len(log))
    pd.DataFrame({"prob": prob}).to_csv(policy, index=False)
    result = run("value", path, "--policy", policy, "--policy-prob", "--method", "snips", "--json")
    assert result.exit_code == 0, result.output
    expected = policy_value(log["reward"], log["propensity"], prob, log["keep_rate"], method="snips")
    assert json.loads(result.stdout)["estimate"] == pytest.approx(expected.estimate)


def test_auc_json_is_the_librarys_estimate(log, tmp_path):
    path = tmp_path / "log.csv"
    log.to_csv(path, index=False)
    result = run("auc", path, "--score-col", "score", "--label-col", "reward", "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert FIELDS <= printed.keys()
    assert printed == pytest.approx(logged_auc(log["score"], log["reward"], log["keep_rate"]).to_dict())


def test_calibrate_writes_the_calibrated_column_and_the_plot(log, tmp_path):
    path, out, plot = tmp_path / "log.csv", tmp_path / "calibrated.csv", tmp_path / "reliability.png"
    log.to_csv(path, index=False)
    result = run("calibrate", path, "--out", out, "--plot", plot, "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert FIELDS | {"ece_before", "ece_after"} <= printed.keys()
    weight = keep_weights(log["reward"], log["keep_rate"])
    calibrated = fit_calibration(log["score"], log["reward"], weight, n_bins=20)(log["score"])
    np.testing.assert_allclose(pd.read_csv(out)["calibrated"], calibrated)
    assert printed["ece_after"] == pytest.approx(expected_calibration_error(calibrated, log["reward"], weight))
    assert printed["ece_after"] < printed["ece_before"]
    assert printed["estimate"] == pytest.approx(log["reward"].sum() / weight.sum())  # the logged mean reward
    assert plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("column", "value", "message"), [
    ("keep_rate", 0.0, "log.csv, data row 3: keep_rate is 0; keep rates must lie in (0, 1]"),
    ("keep_rate", 1.5, "log.csv, data row 3: keep_rate is 1.5; keep rates must lie in (0, 1]"),
    ("propensity", 0.0, "log.csv, data row 3: propensity is 0; propensities must lie in (0, 1]"),
    ("reward", None, "log.csv, data row 3: column reward is empty or not a number"),
])
def test_bad_cells_are_one_line_errors_naming_file_and_row(log, tmp_path, column, value, message):
    frame = log.copy()
    frame[column] = frame[column].astype(float)
    frame.loc[frame.index[2], column] = value
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    result = run("value", path, "--policy", "new")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("args", [["value", "--policy", "new", "--method", "dr"], ["calibrate", "--out", "x.csv",
                                                                                  "--method", "platt"]])
def test_unknown_method_names_the_option(log, tmp_path, args):
    path = tmp_path / "log.csv"
    log.to_csv(path, index=False)
    result = run(args[0], path, *args[1:])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --method: ") and result.stderr.count("\n") == 1


def test_missing_column_names_the_option(log, tmp_path):
    path = tmp_path / "log.csv"
    log.drop(columns="keep_rate").to_csv(path, index=False)
    result = run("auc", path, "--label-col", "reward")
    assert result.exit_code == 1
    assert "no column 'keep_rate' (--keep-rate-col)" in result.stderr and result.stderr.count("\n") == 1
    with_rate = run("auc", path, "--label-col", "reward", "--keep-rate", "0.2", "--json")
    assert json.loads(with_rate.stdout)["estimate"] == pytest.approx(logged_auc(log["score"], log["reward"]).estimate)
