"""The ``labelwise`` command tree: every command registered on one :data:`app`, and :func:`run`, the script's body.

Kept apart from :mod:`labelwise.cli` so that the ``labelwise`` script can catch a Ctrl-C that arrives while
these modules (typer, numpy, pandas) are still being imported.
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

__all__ = ["app", "parse_params", "parse_systems", "parse_value", "run"]

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


def run(argv: list[str] | None = None) -> int:
    """Run :data:`app` on ``argv`` (the process's arguments by default); return the exit code.

    Click's usage errors (an unknown option, ``--seed abc``) would otherwise print the usage and a boxed panel;
    the line names the problem and the command's ``--help``, and the exit code stays click's 2.  A Ctrl-C
    comes back as :data:`~labelwise.cli.INTERRUPTED`, for :func:`~labelwise.cli.main` to report.
    """
    from . import INTERRUPTED

    try:
        code = app(args=argv, prog_name="labelwise", standalone_mode=False)
    except KeyboardInterrupt:  # before typer's own handler is in place (while it builds the commands)
        return INTERRUPTED
    except typer.TyperException as e:  # click's exceptions (typer vendors click: its own classes)
        if type(e).__name__ == "NoArgsIsHelpError":  # a bare command group: its help, as typer prints it
            e.show()
        else:
            ctx = getattr(e, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            typer.echo(f"error: {e.format_message().rstrip('.')}{hint}", err=True)
        return e.exit_code
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        return 1
    return code or 0
