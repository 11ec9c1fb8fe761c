"""Ctrl-C in the middle of a command: one ``error:`` line, exit code 130, and the session file as it was."""

import sys

import pandas as pd
import pytest

from labelwise.cli import INTERRUPTED, main
from labelwise.session import Session
from labelwise.store.journal import Store

from .usertest_session import user_session


def test_ctrl_c_while_labels_are_written_is_one_line_and_stores_nothing(monkeypatch, capfd, tmp_path, ok):
    session, batch = user_session(tmp_path, ok)
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
