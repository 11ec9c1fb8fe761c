"""Looking after a session: ``labelwise skip``, ``exclude``, ``relabel``, ``status`` and ``export``."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Annotated

import typer

from ..engines.marker import is_engine_session
from ..session_report import (
    cached_estimate,
    export_frame,
    loss_rules_note,
    save_estimate,
    session_status,
)
from ..store import Store
from .engine_cmds import engine_export, engine_status
from .options import JsonOpt, UserError, describe_design, user_errors
from .render import estimate_table, excluded_note, print_json, rich_console

__all__ = ["exclude", "export", "relabel", "skip", "status"]

SessionArg = Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")]


def skip(
    session: SessionArg,
    items: Annotated[list[str], typer.Argument(help="Ids of pending items to hand out later.", show_default=False)],
) -> None:
    """Defer items an annotator wants to come back to: `next` hands them out after the other pending items.

    A skipped item is still a draw of the design: the estimate waits for its
    label (it stays unbiased), so label it, or correct nothing and come back.
    """
    from ..session import Session

    with user_errors(), Session.open(session) as s:
        n = s.skip(items)
        save_estimate(s)
        typer.echo(f"deferred {n} items; {s.pending.size} pending in all")


def exclude(
    session: SessionArg,
    items: Annotated[list[str], typer.Argument(help="Ids of pending items annotators cannot judge.",
                                               show_default=False)],
) -> None:
    """Exclude items annotators cannot judge from the population: every estimate is then over the judgeable items.

    An excluded item is handed out no more and takes no label.  Its draws
    stay draws of the design, counted as outside the population, so F1,
    precision and recall become exactly those of the judgeable items, and
    other measures (accuracy, MCC) are estimated over the estimated number of
    judgeable items.  The file records every exclusion (time, source).
    """
    from ..session import Session

    with user_errors(), Session.open(session) as s:
        n = s.exclude(items, source="cli")
        save_estimate(s)
        typer.echo(f"excluded {n} items as not judgeable ({s.n_excluded} in all); {s.pending.size} pending")


def relabel(
    session: SessionArg,
    item: Annotated[str, typer.Argument(help="Id of a labeled item.", show_default=False)],
    new_label: Annotated[str, typer.Argument(metavar="LABEL", help="Its correct label.", show_default=False)],
    draw: Annotated[int | None, typer.Option("--draw", help="The draw whose label is corrected (stochastic "
                                             "sessions, as listed by `next` or `export`).")] = None,
) -> None:
    """Correct a stored label.  The file keeps the first label and the correction; estimates use the latest."""
    from ..session import Session

    with user_errors(), Session.open(session) as s:
        if s.stochastic and draw is None:
            raise UserError(f"session {str(session)!r} has a stochastic oracle: its labels are per draw; give the draw "
                            f"whose label to correct with --draw N (the draw column of `labelwise export {session}`)")
        changed = s.relabel([item], [new_label], source="cli", draws=None if draw is None else [draw])
        est = save_estimate(s)
        if changed:
            typer.echo(f"item {item}: label corrected to {new_label}; {est.n_labels} labels in the estimate")
        else:
            typer.echo(f"item {item} already has label {new_label}; nothing changed")


def status(session: SessionArg, as_json: JsonOpt = False) -> None:
    """Pool, design, labels, pending and deferred items, the current estimate and the file's health."""
    if is_engine_session(session):
        with user_errors():
            return engine_status(session, as_json)
    with user_errors():
        with closing(Store.open(session)) as store:
            info, cached = session_status(store), cached_estimate(store)
            note = None if cached is None else loss_rules_note(store, cached[1])
        if cached is None:  # written by a library session: estimate once and store it
            from ..session import Session

            with Session.open(session) as s:
                cached = save_estimate(s), s.measure.name
                note = loss_rules_note(s.store, s.measure.name)
        est, measure = cached
    if note:  # on stderr: the JSON too stays one object
        typer.echo(note, err=True)
    if as_json:
        print_json({**info, "estimate": {"measure": measure, **est.to_dict()}})
        return
    multiclass = info["n_classes"] > 2 and not info["label_names"]
    classes = f"{info['n_classes']} classes, " if multiclass else ""
    lines = [
        f"session  {info['session']}",
        f"pool     {info['pool']}: {info['n_items']} items, {classes}systems {', '.join(info['systems'])}",
        f"design   {describe_design(info['design'], multiclass, 'scores' in info['outputs'], info['budget'])}, {info['oracle']} oracle",
        (f"labels   {info['labels']} ({info['draws']} draws), {info['pending']} pending of which "
         f"{info['deferred']} deferred, {info['relabels']} corrections, {info['excluded']} excluded"),
        f"file     {'ok' if info['health'] == 'ok' else 'DAMAGED: ' + info['health']}",
    ]
    typer.echo("\n".join(lines))
    rich_console().print(estimate_table(est, f"{measure} on {info['pool']}"))
    if info["excluded"]:
        typer.echo(excluded_note(info["excluded"]))


def export(
    session: SessionArg,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File to write: .csv, .tsv, .jsonl, .json or "
                                             ".parquet; - (the default) for CSV on standard output, as `next`.",
                                             show_default=False)] = None,
) -> None:
    """Write every label, correction and exclusion: item id as given, label, draw, weight, time, source, event."""
    from ..pool import write_batch
    from ..pool.writers import where

    if is_engine_session(session):
        with user_errors():
            return engine_export(session, out)
    with user_errors(), closing(Store.open(session)) as store:
        frame = export_frame(store)
        write_batch(frame, out)
        typer.echo(f"wrote {len(frame)} rows to {where(out)}", err=True)
