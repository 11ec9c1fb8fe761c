"""Running ``labelwise`` commands in-process: ``ok`` (exit code 0) and ``fails`` (exactly one ``error:`` line)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import CliRunner, Result

from labelwise.cli import app

_runner = CliRunner()


def _ok(*args) -> Result:
    result = _runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def _fails(*args) -> str:
    result = _runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def ok() -> Callable[..., Result]:
    """``ok(*args)``: run the command, assert it succeeded, return the result (``.stdout``, ``.stderr``)."""
    return _ok


@pytest.fixture
def fails() -> Callable[..., str]:
    """``fails(*args)``: run the command, assert it exited 1 with one ``error:`` line, return that line."""
    return _fails
