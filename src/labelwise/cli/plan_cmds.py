"""``labelwise plan`` (labels needed for a half-width) and ``labelwise certify`` (a sequential test)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .options import (
    IdCol,
    JsonOpt,
    PredCol,
    ProbCol,
    ScoreCol,
    SeedOpt,
    SystemsOpt,
    UserError,
    check_level,
    parse_systems,
    pool_columns,
    user_errors,
)
from .render import emptied_note, print_json, rich_console

__all__ = ["certify", "plan"]

HalfWidthOpt = Annotated[float, typer.Option("--half-width", help="Target half-width of the interval, e.g. 0.02.")]


def plan(
    session: Annotated[Path | None, typer.Argument(help="Session file; omit it and give --pool to plan before one "
                                                   "exists.", show_default=False)] = None,
    half_width: HalfWidthOpt = 0.02,
    pool_file: Annotated[Path | None, typer.Option("--pool", help="Pool to plan for, every design (no session yet).",
                                                   show_default=False)] = None,
    measure: Annotated[str | None, typer.Option("--measure", "-m", help="Measure (default: the session's; f1 "
                                                "with --pool).", show_default=False)] = None,
    designs: Annotated[str | None, typer.Option("--designs", "--design", "-d", help="With --pool: designs to plan, e.g. "
                                                "importance,passive (default: all).", show_default=False)] = None,
    level: Annotated[float, typer.Option("--level", help="Confidence level of the interval.")] = 0.95,
    systems: SystemsOpt = "0",
    seed: SeedOpt = 0,
    id_col: IdCol = "item_id",
    pred_col: PredCol = "pred",
    score_col: ScoreCol = "score",
    prob_col: ProbCol = "prob",
    as_json: JsonOpt = False,
) -> None:
    """Project how many further labels reach --half-width, with a range.

    For a session, from its design's variance and the labels so far (before
    any label, from the pool's probabilities).  With --pool, for every
    design before a session exists, so you can pick a design and a budget.
    A session's plan toward its own measure is kept in the file and shown
    on the `serve` dashboard.
    """
    from ..measures import default_measure_name, make_measure
    from ..planning import plan_designs, save_target

    with user_errors():
        check_level(level)
        if half_width <= 0:
            raise UserError(f"--half-width: must be positive, got {half_width}")
        if (session is None) == (pool_file is None):
            raise UserError("give either a session file or --pool (to plan before a session exists), not both")
        if pool_file is not None:
            from ..pool import Pool

            pool = Pool.from_file(pool_file, **pool_columns(id_col, pred_col, score_col, prob_col, None))
            target = make_measure(measure or default_measure_name(pool), pool, parse_systems(systems))
            names = designs.split(",") if designs else None
            plans = plan_designs(pool, target, half_width, level, names, seed)
        else:
            from ..session import Session

            with Session.open(session) as s:
                target = make_measure(measure, s.pool, parse_systems(systems)) if measure else None
                plans = [s.labels_needed(half_width, target, level)]
                if target is None:  # the serve dashboard shows the plan toward this half-width
                    save_target(s, half_width, level)
    if as_json:
        print_json({"half_width": half_width, "level": level, "plans": [p.to_dict() for p in plans]})
        return
    table = Table(title=f"labels needed for half-width {half_width:g} at {level:.0%}")
    for column in ("design", "further labels", "range", "labels so far"):
        table.add_column(column, justify="left" if column == "design" else "right")
    for p in plans:
        table.add_row(p.design, str(p.labels_needed), f"{p.low} - {p.high}", str(p.labels_so_far))
    rich_console().print(table)


def certify(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    at_least: Annotated[float, typer.Option("--at-least", help="Threshold the measure must reach, e.g. 0.9.")],
    measure: Annotated[str | None, typer.Option("--measure", "-m", help="Measure (default: the session's).",
                                                show_default=False)] = None,
    component: Annotated[str | None, typer.Option("--component", help="Component of a vector measure (default: "
                                                  "the first).", show_default=False)] = None,
    level: Annotated[float | None, typer.Option("--level", help="Confidence level (default: the session's).",
                                                show_default=False)] = None,
    systems: SystemsOpt = "0",
    as_json: JsonOpt = False,
) -> None:
    """Sequential test of measure >= --at-least: certified, refuted or undecided, with the labels used.

    Uses the anytime-valid interval, so running it after every batch and
    stopping at the first verdict keeps the error below 1 - level.
    """
    from ..anytime import certify as run_certify
    from ..measures import make_measure
    from ..session import Session

    with user_errors(), Session.open(session) as s:
        if level is not None:
            check_level(level)
        if not -1 <= at_least <= 1:  # every measure the command line names lies in [-1, 1] (MCC), most in [0, 1]
            raise UserError(f"--at-least: {at_least:g} is outside every measure's range (F1, precision, recall, "
                            "accuracy, AUC... lie in [0, 1], MCC in [-1, 1]); give a fraction, e.g. 0.8 for 80%")
        target = make_measure(measure, s.pool, parse_systems(systems)) if measure else None
        cert = run_certify(s, at_least, target, component, level)
    if as_json:
        print_json(cert.to_dict())
        return
    typer.echo(f"{cert.verdict}: {cert.component} in [{cert.lower:.4f}, {cert.upper:.4f}] (anytime-valid, "
               f"{cert.level:.0%}) vs threshold {cert.threshold:g}, from {cert.labels} labels")
    if cert.emptied:
        typer.echo(emptied_note([cert.component]))
