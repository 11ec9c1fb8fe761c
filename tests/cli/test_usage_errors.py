"""A command line that does not parse is told in one ``error:`` line naming the command's help (``cli.main``)."""

import sys

import pytest

from labelwise.cli import main


def _run(monkeypatch, capfd, *argv):
    monkeypatch.setattr(sys, "argv", ["labelwise", *argv])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capfd.readouterr()
    return exit_.value.code, out, err


@pytest.mark.parametrize("argv, line", [
    (("simulate", "--seed", "abc"), ("error: Invalid value for '--seed': Input should be a valid integer, unable "
                                     "to parse string as an integer (see `labelwise simulate --help`)")),
    (("estimate",), "error: Missing argument 'session' (see `labelwise estimate --help`)"),
])
def test_a_usage_error_is_one_error_line_with_exit_code_2(monkeypatch, capfd, argv, line):
    code, out, err = _run(monkeypatch, capfd, *argv)
    assert code == 2 and out == ""
    assert err == line + "\n"  # no usage block, no boxed panel


def test_a_bare_command_group_prints_its_help(monkeypatch, capfd):
    code, out, err = _run(monkeypatch, capfd, "discover")
    assert code == 2 and "Usage: labelwise discover" in out and "error:" not in out + err


def test_a_user_error_keeps_its_own_line_and_exit_code_1(monkeypatch, capfd, tmp_path):
    code, _, err = _run(monkeypatch, capfd, "simulate", "--pool", str(tmp_path / "none.csv"), "--budget", "5")
    assert code == 1
    assert err == f"error: pool file {str(tmp_path / 'none.csv')!r} does not exist; check the path\n"


def test_a_command_that_succeeds_exits_0(monkeypatch, capfd):
    code, out, _ = _run(monkeypatch, capfd, "simulate", "--help")
    assert code == 0 and "--budget" in out
