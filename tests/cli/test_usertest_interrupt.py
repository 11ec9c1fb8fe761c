"""Ctrl-C in the middle of a command: one ``error:`` line, exit code 130, and the session file as it was."""

import sys

import numpy as np
import pandas as pd
import pytest

from labelwise.cli import INTERRUPTED, main
from labelwise.session import Session
from labelwise.store.journal import Store


def test_ctrl_c_while_labels_are_written_is_one_line_and_stores_nothing(monkeypatch, capfd, tmp_path, ok):
    pool = tmp_path / "pool.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"txn": [f"T{i}" for i in range(400)], "flag": (rng.uniform(size=400) < 0.2).astype(int),
                  "risk": rng.uniform(size=400)}).to_csv(pool, index=False)
    session, batch = tmp_path / "s.lw", tmp_path / "batch.csv"
    ok("init", pool, session, "--id-col", "txn", "--pred-col", "flag", "--score-col", "risk", "--design", "passive")
    ok("next", session, "-n", "5", "--out", batch)
    frame = pd.read_csv(batch)
    frame["label"] = [0, 1, 0, 1, 0]
    frame.to_csv(batch, index=False)

    def interrupted(self):  # Ctrl-C after the rows are inserted, before the transaction commits
        raise KeyboardInterrupt

    monkeypatch.setattr(Store, "_bump", interrupted)
    monkeypatch.setattr(sys, "argv", ["labelwise", "label", str(session), str(batch)])
    with pytest.raises(SystemExit) as exit_:
        main()
    _, err = capfd.readouterr()
    assert exit_.value.code == INTERRUPTED == 130
    assert err.count("\n") == 1 and err.startswith("error: interrupted;") and "Traceback" not in err
    monkeypatch.undo()
    with Session.open(session) as s:
        assert s.n_labels == 0 and s.pending_draws.size == 5
