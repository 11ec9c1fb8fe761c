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


class _InterruptedImport:
    """A meta-path finder that raises Ctrl-C's exception when ``name`` is imported, as if the user pressed it then."""

    def __init__(self, name: str):
        self.name = name

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.name:
            raise KeyboardInterrupt


def test_ctrl_c_while_the_commands_are_imported_is_one_line(monkeypatch, capfd):
    monkeypatch.delitem(sys.modules, "labelwise.cli.commands", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_InterruptedImport("labelwise.cli.commands"), *sys.meta_path])
    monkeypatch.setattr(sys, "argv", ["labelwise", "simulate", "--pool", "pool.csv"])
    with pytest.raises(SystemExit) as exit_:
        main()
    _, err = capfd.readouterr()
    assert exit_.value.code == INTERRUPTED
    assert err == "error: interrupted\n"  # simulate keeps no session file: nothing to resume


@pytest.mark.parametrize(("argv", "names_the_session"), [
    (["simulate", "--pool", "p.csv"], False), (["demo"], False), (["ondemand", "simulate"], False),
    (["logs", "value", "log.csv"], False), (["label", "demo", "b.csv"], True), (["next", "simulate"], True),
    (["ondemand", "submit"], True), ([], True)])
def test_the_interrupted_line_speaks_of_a_session_file_only_where_the_command_writes_one(argv, names_the_session):
    from labelwise.cli import interrupted_message

    assert ("session file" in interrupted_message(argv)) is names_the_session
