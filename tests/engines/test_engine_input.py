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
    return {
        "class probabilities": (classes, ["--prob-col", "p_0,p_1,p_2"]),
        "no rows": (binary.iloc[:0], []),
        "auc without probabilities": (binary, ["-m", "auc"]),
    }


MESSAGES = {
    "class probabilities": ("the prob columns 'p_0', 'p_1', 'p_2' sum to 1 by groups of 3 on 40 of 40 rows, as a "
                            "multi-class system's class probabilities do; engine pools are binary (predictions 0 or 1, "
                            "one probability p(y=1|x) per system): read a multi-class pool in memory, without "
                            "--engine"),
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


def test_binary_probabilities_summing_to_1_on_half_the_rows_or_fewer_are_three_systems(tmp_path):
    probs = _THIRDS.copy()
    probs[::2] /= 2  # 20 of the 40 rows sum to 1
    path = tmp_path / "pool.parquet"
    pd.DataFrame({"item_id": np.arange(40), "p_0": probs[:, 0], "p_1": probs[:, 1], "p_2": probs[:, 2]}).to_parquet(
        path, index=False)
    result = runner.invoke(app, ["init", str(path), "-s", str(tmp_path / "s.lw"), "--engine", "duckdb", "--budget",
                                 "10", "--prob-col", "p_0,p_1,p_2", "-m", "brier", "--systems", "all"])
    assert result.exit_code == 0, result.stderr
    assert "systems: system0, system1, system2" in result.stdout
