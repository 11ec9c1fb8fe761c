"""``labelwise add-system``: add a new system's outputs to a session and estimate it from the labels in."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..session_report import save_estimate
from .options import JsonOpt, user_errors
from .render import estimate_table, print_json, rich_console

__all__ = ["add_system"]


def add_system(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    predictions: Annotated[Path, typer.Argument(help="Predictions as CSV (.csv, .csv.gz), TSV, JSON lines (.jsonl) "
                                                "or Parquet, read as `init` reads a pool: columns item_id,pred and, "
                                                "when the pool's systems have them, score or prob; one row per pool "
                                                "item.")],
    name: Annotated[str | None, typer.Option("--name", help="The new system's name (default: the file's "
                                             "name without its extension).")] = None,
    as_json: JsonOpt = False,
    id_col: Annotated[str, typer.Option("--id-col", help="Predictions-file column holding the item ids.")] = "item_id",
    pred_col: Annotated[str, typer.Option("--pred-col", help="Predictions-file column holding the predicted "
                                          "labels.")] = "pred",
    score_col: Annotated[str, typer.Option("--score-col", help="Predictions-file column holding the scores "
                                           "(read when present).")] = "score",
    prob_col: Annotated[str, typer.Option("--prob-col", help="Predictions-file column holding the probabilities "
                                          "(read when present); on a pool with class probabilities one column "
                                          "per class, in class order, comma-separated.")] = "prob",
) -> None:
    """Add a system to a session: estimated from the labels already drawn; later draws go where it is under-covered.

    The session's measure is extended to the new system (named measures
    only).  The file is changed in one step; a rejected file leaves it as
    it was.
    """
    from ..session import Session
    from ..session_systems import add_system_file

    with user_errors(), Session.open(session) as s:
        columns = {"id": id_col, "pred": pred_col, "score": score_col, "prob": prob_col}
        added = add_system_file(s, predictions, name, columns)
        save_estimate(s)
    if as_json:
        print_json(added.to_dict())
        return
    rich_console().print(estimate_table(added.estimate, f"{added.measure.name} of new system {added.name!r} "
                                        "from the labels already in"))
    typer.echo(f"{added.n_labels} labels reused, {added.n_informative} of them on items where the loss of {added.name!r} is "
               "nonzero; `labelwise next` now draws where it is under-covered")
    if not added.covered:
        typer.echo(f"warning: not covered: {added.uncovered}", err=True)
