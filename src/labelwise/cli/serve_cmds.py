"""``labelwise serve`` (the annotation web app) and ``labelwise annotators add/list/revoke`` (its tokens)."""

from __future__ import annotations

import errno
import os
import socket
import time
from contextlib import closing
from pathlib import Path
from typing import Annotated

import typer

from ..serve.tables import add_annotator, list_annotators, revoke_annotator
from ..store import Store
from .options import UserError, user_errors
from .render import print_json

__all__ = ["annotators", "serve"]

SessionArg = Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")]
annotators = typer.Typer(name="annotators", help="Who may label through `labelwise serve`: tokens per annotator.",
                         no_args_is_help=True)


def serve(
    session: SessionArg,
    content: Annotated[Path | None, typer.Option("--content", help="CSV (.csv, .csv.gz), TSV, JSON lines (.jsonl) "
                                                 "or Parquet keyed by item id whose columns annotators see (text, a "
                                                 "record pair, an image).")] = None,
    content_id: Annotated[str, typer.Option("--content-id", "--id-col", help="Id column of --content.")] = "item_id",
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback unless told otherwise).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    predictions: Annotated[bool, typer.Option("--predictions/--no-predictions", help="Show the systems' "
                                              "predictions and scores (hidden by default, to avoid anchoring).")]
    = False,
    lease: Annotated[float, typer.Option("--lease", help="Seconds an item handed to an annotator is kept for "
                                         "them.")] = 600.0,
    overlap: Annotated[float, typer.Option("--overlap", help="Fraction of labeled items a second annotator "
                                           "answers too, for agreement (Cohen's kappa, Krippendorff's alpha).")] = 0.0,
    until_half_width: Annotated[float | None, typer.Option(
        "--until-half-width", help="Stop handing out new items once the anytime-valid interval's half-width is at "
        "most this (valid however often it is checked).", show_default=False)] = None,
) -> None:
    """Serve a session to annotators: a keyboard-first labeling page, a dashboard and a JSON API.

    Every page and API call needs a token from `labelwise annotators add`;
    an answer is in the session file before the server says so.
    """
    with user_errors():
        import uvicorn

        from ..serve.app import Server, create_app

        if not 0 < port < 65536:
            raise UserError(f"--port: {port} is not a port number (1-65535)")
        if lease <= 0:
            raise UserError(f"--lease: give a positive number of seconds, got {lease:g}")
        if until_half_width is not None and until_half_width <= 0:
            raise UserError(f"--until-half-width: give a positive half-width, got {until_half_width:g}")
        listening = _listen(host, port)  # before the session and content load: a busy port is told at once
        with closing(listening):
            server = Server(session, content, content_id, predictions, lease, overlap, until_half_width)
            with closing(Store.open(session)) as store:
                if not any(a["revoked"] is None for a in list_annotators(store)):
                    typer.echo(f"note: no annotator yet; add one with `labelwise annotators add {session} NAME "
                               "--admin`", err=True)
            if host not in ("127.0.0.1", "localhost", "::1"):
                typer.echo(f"warning: listening on {host}: tokens travel in clear over HTTP; put the server behind "
                           "an HTTPS proxy or an SSH tunnel beyond a trusted network", err=True)
            typer.echo(f"serving {str(session)!r} on http://{host}:{port}/ (Ctrl-C stops)", err=True)
            uvicorn.Server(uvicorn.Config(create_app(server), log_level="warning")).run(sockets=[listening])


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port``; a :class:`UserError` naming the fix when it cannot be had."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except socket.gaierror as e:
        raise UserError(f"--host {host!r}: not an address of this machine ({e.strerror}); give an IP address or "
                        "a host name that resolves") from None
    except OSError as e:
        why = os.strerror(e.errno) if e.errno else str(e)
        if e.errno == errno.EADDRNOTAVAIL:
            raise UserError(f"--host {host!r}: not an address of this machine ({why}); give one of its addresses, "
                            "or 0.0.0.0 for all") from None
        fix = ("stop the program using it (another `labelwise serve`?) or choose another --port"
               if e.errno == errno.EADDRINUSE else "choose another --port (ports above 1023 need no privileges)")
        raise UserError(f"--port {port}: cannot listen on {host}:{port} ({why}); {fix}") from None


@annotators.command("add")
def add(
    session: SessionArg,
    name: Annotated[str, typer.Argument(help="The annotator's name (unique in the session).")],
    admin: Annotated[bool, typer.Option("--admin", help="May see the dashboard and export the labels.")] = False,
) -> None:
    """Create an annotator and print its token (shown once: the session file keeps only its hash)."""
    with user_errors(), closing(Store.open(session)) as store:
        token = add_annotator(store, name, admin)
        typer.echo(token)
        typer.echo(f"annotator {name!r} added{' (admin)' if admin else ''}; give them this token: it is not "
                   "stored and cannot be shown again", err=True)


@annotators.command("list")
def list_cmd(
    session: SessionArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List annotators: name, admin, answers given, revoked or not (tokens are never shown)."""
    with user_errors(), closing(Store.open(session)) as store:
        rows = list_annotators(store)
    if as_json:
        print_json(rows)
        return
    for a in rows:
        state = "revoked " + time.strftime("%Y-%m-%d %H:%M", time.localtime(a["revoked"])) if a["revoked"] else "active"
        typer.echo(f"{a['name']}\t{'admin' if a['admin'] else 'annotator'}\t{a['answers']} answers\t{state}")


@annotators.command("revoke")
def revoke(
    session: SessionArg,
    name: Annotated[str, typer.Argument(help="The annotator whose token stops working.")],
) -> None:
    """Revoke an annotator's token at once (their answers stay)."""
    with user_errors(), closing(Store.open(session)) as store:
        revoke_annotator(store, name)
        typer.echo(f"annotator {name!r} revoked; their answers stay in the session")
