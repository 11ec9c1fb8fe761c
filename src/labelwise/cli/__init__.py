"""The ``labelwise`` command line: label-efficient evaluation from the shell.

Annotation loop (the session file keeps everything, so each step is a
separate process)::

    labelwise init pool.csv --session eval.lw --measure f1 --design importance
    labelwise next eval.lw -n 50 --out batch.csv     # give batch.csv to annotators
    labelwise label eval.lw labels.csv               # ingest their labels
    labelwise estimate eval.lw                       # estimate with intervals
    labelwise skip eval.lw ID / exclude eval.lw ID / relabel eval.lw ID LABEL
    labelwise status eval.lw / export eval.lw --out all.csv
    labelwise add-system eval.lw new_system.csv      # a new system, estimated from the labels in

Simulation against ground truth: ``labelwise simulate --pool pool.csv ...``
(its ``--json`` output is a stable contract) and ``labelwise demo``; systems
submitted one after another: ``labelwise ondemand simulate --truth ...``; finding
the positives on a budget: ``labelwise discover init/next/answer/report``.
Logs whose zero-reward rows were subsampled: ``labelwise logs value|auc|calibrate``;
a session's pool recalibrated from its labels: ``labelwise calibrate eval.lw --out pool.csv``.

Every user error is reported as one line starting with ``error:`` on
standard error, with exit code 1 (2 for a command line that does not parse:
an unknown option, a value of the wrong type; :func:`main`).  Every command reads its tables with
:func:`~labelwise.pool.table.read_table` and writes them with
:func:`~labelwise.pool.writers.write_table`, so the formats, column
matching, row numbers ("data row N") and ``--out -`` are the same
everywhere.
"""

from __future__ import annotations

import sys

__all__ = ["INTERRUPTED", "app", "main", "parse_params", "parse_systems", "parse_value"]

#: Exit code of a command stopped by Ctrl-C (typer's, the shell's 128 + SIGINT).
INTERRUPTED = 130

#: Command-line prefixes of the commands that write no session file: a Ctrl-C there loses nothing to resume.
STORELESS = (("simulate",), ("demo",), ("ondemand", "simulate"), ("discover", "simulate"), ("logs",))


def main() -> None:
    """The ``labelwise`` script: the commands of :mod:`labelwise.cli.commands`, every failure told in one line.

    The command tree is imported here, not at module level, so a Ctrl-C while typer, numpy and pandas load
    (the first half second) gets the same one line as a Ctrl-C later, with exit code :data:`INTERRUPTED`.
    """
    try:
        from .commands import run

        code = run()
    except KeyboardInterrupt:  # while the commands were being imported
        code = INTERRUPTED
    if code == INTERRUPTED:  # typer's answer to Ctrl-C (KeyboardInterrupt), otherwise silent
        print(interrupted_message(sys.argv[1:]), file=sys.stderr)
    raise SystemExit(code)


def interrupted_message(argv: list[str]) -> str:
    """The one line for a command stopped by Ctrl-C; it speaks of the session file only where there is one."""
    if any(tuple(argv[:len(prefix)]) == prefix for prefix in STORELESS):
        return "error: interrupted"
    return ("error: interrupted; a session file keeps only whole writes (each is one transaction), so "
            "run the command again to go on")


def __getattr__(name: str) -> object:
    """:data:`app` and the option parsers, imported from :mod:`labelwise.cli.commands` when first asked for."""
    if name in {"app", "parse_params", "parse_systems", "parse_value"}:
        from . import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
