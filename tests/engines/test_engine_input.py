"""Engine pool files a user may get wrong, each refused at ``init`` in one line naming the files and the fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app

runner = CliRunner()

#: 40 items' class probabilities over three classes (rows sum to 1 exactly: quarters and halves)
_THIRDS = np.tile([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5], [0.75, 0.0, 0.25]], (10, 1))


def _frames() -> dict[str, tuple[pd.DataFrame, list[str]]]:
    ids = np.arange(40)
    binary = pd.DataFrame({"item_id": ids, "pred": ids % 2})
    classes = pd.DataFrame({"item_id": ids, "p_0": _THIRDS[:, 0], "p_1": _THIRDS[:, 1], "p_2": _THIRDS[:, 2]})
    softmax = pd.DataFrame({"item_id": ids, "q_0": 1 - _THIRDS[:, 0], "q_1": _THIRDS[:, 0]})
    percent = pd.DataFrame({"item_id": ids, "pred": ids % 2, "prob": 100 * _THIRDS[:, 0]})
    return {
        "class probabilities": (classes, ["--prob-col", "p_0,p_1,p_2"]),
        "two class probabilities": (softmax, ["--prob-col", "q_0,q_1", "-m", "brier"]),
        "percentages": (percent, []),
        "no rows": (binary.iloc[:0], []),
        "auc without probabilities": (binary, ["-m", "auc"]),
    }


MESSAGES = {
    "class probabilities": ("the prob columns 'p_0', 'p_1', 'p_2' sum to 1 by groups of 3, as one system's class "
                            "probabilities do; engine pools are binary (predictions 0 or 1, one probability p(y=1|x) "
                            "per system): read a multi-class pool in memory, without --engine"),
    "two class probabilities": ("the prob columns 'q_0', 'q_1' sum to 1 by groups of 2, as one system's class "
                                "probabilities do; they are binary systems' two class probabilities: give each "
                                "system's p(y=1), the column of class 1, alone (--prob-col q_1)"),
    "percentages": ("column 'prob' has 40 row(s) empty or outside [0, 1], e.g. item 0 (50); probabilities must lie "
                    "in [0, 1] (percentages? divide them by 100): fix or drop those rows"),
    "no rows": "no rows, only column names; give a pool of at least one item",
    "auc without probabilities": ("measure 'auc' needs system output 'probs', but the pool has none: give a column "
                                  "'prob' (or name yours with --prob-col on the command line, prob_cols= in Python), "
                                  "or a probs array when building the pool"),
}


@pytest.mark.parametrize("case", list(MESSAGES))
def test_init_refuses_in_one_line_naming_the_file(case, tmp_path):
    frame, options = _frames()[case]
    path, session = tmp_path / "pool.parquet", tmp_path / "s.lw"
    frame.to_parquet(path, index=False)
    result = runner.invoke(app, ["init", str(path), "-s", str(session), "--engine", "duckdb", "--budget", "10",
                                 *options])
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert result.stderr.splitlines() == [f"error: pool file {str(path)!r}: {MESSAGES[case]}"]
    assert not session.exists()


def _rules() -> np.ndarray:
    """Three rule-based systems (0 or 1) with exactly one firing on 32 rows of 40 and two on the others: they sum
    to 1 on 80% of the rows, and were three binary systems before class probabilities were read by their sums."""
    fired = np.tile(np.eye(3), (14, 1))[:40]
    fired[::5] = [1, 1, 0]
    return fired


def _half_summing() -> np.ndarray:
    """Binary systems' probabilities summing to 1 on 20 of the 40 rows."""
    probs = _THIRDS.copy()
    probs[::2] /= 2
    return probs


@pytest.mark.parametrize("probs", [_half_summing(), _rules()], ids=["half the rows", "rules of 0 and 1"])
def test_binary_probabilities_summing_to_1_by_chance_are_three_systems(tmp_path, probs):
    path = tmp_path / "pool.parquet"
    pd.DataFrame({"item_id": np.arange(40), "p_0": probs[:, 0], "p_1": probs[:, 1], "p_2": probs[:, 2]}).to_parquet(
        path, index=False)
    result = runner.invoke(app, ["init", str(path), "-s", str(tmp_path / "s.lw"), "--engine", "duckdb", "--budget",
                                 "10", "--prob-col", "p_0,p_1,p_2", "-m", "brier", "--systems", "all"])
    assert result.exit_code == 0, result.stderr
    assert "systems: system0, system1, system2" in result.stdout
