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

import typer

from .discover_cmds import discover
from .logs_cmds import calibrate, logs
from .ondemand_cmds import ondemand
from .options import parse_params, parse_systems, parse_value
from .plan_cmds import certify, plan
from .serve_cmds import annotators, serve
from .session_cmds import estimate, init, label, next_batch
from .simulate_cmds import demo, simulate_cmd
from .system_cmds import add_system
from .workflow_cmds import exclude, export, relabel, skip, status

__all__ = ["INTERRUPTED", "app", "main", "parse_params", "parse_systems", "parse_value"]

#: Exit code of a command stopped by Ctrl-C (typer's, the shell's 128 + SIGINT).
INTERRUPTED = 130

app = typer.Typer(
    name="labelwise",
    help="Label-efficient evaluation of ML systems: estimate F1, precision, recall and more "
    "from few human labels, with confidence intervals.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

app.command()(init)
app.command("next")(next_batch)
app.command()(label)
app.command()(estimate)
app.command()(skip)
app.command()(exclude)
app.command()(relabel)
app.command()(status)
app.command()(export)
app.command("add-system")(add_system)
app.command()(demo)
app.command("simulate")(simulate_cmd)
app.command()(serve)
app.command()(plan)
app.command()(certify)
app.add_typer(annotators)
app.add_typer(ondemand)
app.add_typer(discover)
app.command()(calibrate)
app.add_typer(logs)


def main() -> None:
    """The ``labelwise`` script: :data:`app`, with a command line that does not parse told in one ``error:`` line.

    Click's usage errors (an unknown option, ``--seed abc``) would otherwise print the usage and a boxed panel;
    the line names the problem and the command's ``--help``, and the exit code stays click's 2.  A command
    stopped by Ctrl-C says so in one line, with exit code :data:`INTERRUPTED`.
    """
    try:
        code = app(prog_name="labelwise", standalone_mode=False)
    except KeyboardInterrupt:  # before typer's own handler is in place (while it builds the commands)
        code = INTERRUPTED
    except typer.TyperException as e:  # click's exceptions (typer vendors click: its own classes)
        if type(e).__name__ == "NoArgsIsHelpError":  # a bare command group: its help, as typer prints it
            e.show()
        else:
            ctx = getattr(e, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            typer.echo(f"error: {e.format_message().rstrip('.')}{hint}", err=True)
        raise SystemExit(e.exit_code) from None
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        raise SystemExit(1) from None
    if code == INTERRUPTED:  # typer's answer to Ctrl-C (KeyboardInterrupt), otherwise silent
        typer.echo("error: interrupted; a session file keeps only whole writes (each is one transaction), so "
                   "run the command again to go on", err=True)
    raise SystemExit(code or 0)
