"""The annotation loop: ``labelwise init``, ``next``, ``label`` and ``estimate``.

The session file keeps everything, so each step is a separate process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..designs import DEFAULT
from ..measures import Measure, make_measure
from ..pool import Pool, batch_frame, read_labels_file, write_batch
from ..session import Session
from .options import (
    DESIGNS_HELP,
    MEASURES_HELP,
    IdCol,
    JsonOpt,
    LevelOpt,
    MeasureOpt,
    MultiLabelOpt,
    ParamOpt,
    PredCol,
    ProbCol,
    ScoreCol,
    SeedOpt,
    SystemsOpt,
    UserError,
    check_level,
    describe_design,
    design_options,
    parse_systems,
    pool_columns,
    user_errors,
)
from .render import estimate_table, print_json, rich_console

__all__ = ["estimate", "init", "label", "next_batch"]


# --------------------------------------------------------------------------- init
def init(
    pool_file: Annotated[Path, typer.Argument(help="Pool of unlabeled items: CSV (.csv, .csv.gz, .tsv) or Parquet.")],
    session: Annotated[Path, typer.Option("--session", "-s", help="Session file to create.")],
    measure: MeasureOpt = "f1",
    design: Annotated[str | None, typer.Option(
        "--design", "-d", help=DESIGNS_HELP + " Default: online-poisson, or importance for multi-label pools.",
        show_default=False)] = None,
    param: ParamOpt = None,
    seed: SeedOpt = 0,
    systems: SystemsOpt = "0",
    level: LevelOpt = 0.95,
    id_col: IdCol = "item_id",
    pred_col: PredCol = "pred",
    score_col: ScoreCol = "score",
    prob_col: ProbCol = "prob",
    multilabel: MultiLabelOpt = None,
) -> None:
    """Create a labeling session for a pool, a target measure and a sampling design.

    Any ground-truth label column in the pool is ignored.  Labels of a
    multi-label pool (--multilabel) are the codes sum_k v_k 2^k of the label
    vectors, in the order of the names given.  The default design is
    online-poisson; for multi-label pools it is importance, which estimates
    micro-F1 better there (benchmarks/multilabel.py).
    """
    with user_errors():
        check_level(level)
        pool = Pool.from_file(pool_file, label_col=None,
                              **pool_columns(id_col, pred_col, score_col, prob_col, multilabel))
        target = make_measure(measure, pool, parse_systems(systems))
        chosen, oracle = design_options(design or DEFAULT, param, pool)
        with Session(pool, target, chosen, oracle=oracle or "deterministic", seed=seed, path=session,
                     level=level) as s:
            typer.echo(f"created session {str(session)!r}")
            typer.echo(f"  items:   {pool.n_items} (pool {pool.name!r}, {pool.n_classes} classes)")
            typer.echo(f"  systems: {', '.join(pool.system_names)}")
            typer.echo(f"  measure: {', '.join(target.names)}")
            typer.echo(f"  design:  {describe_design(s.design)}, seed {seed}, level {level:g}")


# --------------------------------------------------------------------------- next
def next_batch(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    batch_size: Annotated[int, typer.Option("-n", "--batch-size", help="How many new items to draw.")] = 50,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the batch to this .csv or .jsonl file (default: CSV on stdout)."),
    ] = None,
) -> None:
    """Propose the next items to label, with the systems' outputs for context.

    Items proposed earlier but not labeled yet are returned again (and
    nothing new is drawn) until they are labeled.
    """
    with user_errors(), Session.open(session) as s:
        earlier = s.pending.size > 0
        ids = s.next_batch(batch_size)
        frame = batch_frame(s.pool, ids)
        if s.stochastic:  # a row per draw: its number lets `label` store a resubmitted file once
            frame.insert(1, "draw", s.pending_draws)
        write_batch(frame, out)
        where = f" written to {str(out)!r}" if out is not None else ""
        if earlier:
            typer.echo(f"{len(ids)} items pending from an earlier batch{where}; label them before new items "
                       "are drawn", err=True)
        else:
            typer.echo(f"{len(ids)} new items to label{where}", err=True)


# --------------------------------------------------------------------------- label
def label(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    labels_file: Annotated[Path, typer.Argument(help="Labels as CSV or JSONL (one object per line).")],
    id_col: Annotated[str, typer.Option("--id-col", help="Labels-file column holding the item ids.")] = "item_id",
    label_col: Annotated[str, typer.Option("--label-col", help="Labels-file column holding the labels.")] = "label",
    draw_col: Annotated[str, typer.Option("--draw-col", help="Labels-file column holding the draw numbers `next` "
                                          "lists in a stochastic session (used when present).")] = "draw",
) -> None:
    """Store annotators' labels for proposed items.

    The whole file is rejected, and nothing stored changes, if any id is
    unknown or was not proposed, any label lies outside the label set, or
    any label contradicts one already stored.  In a session whose design
    has oracle=stochastic (noisy or several annotators) an id may appear as
    many times as `next` returned it, and its labels may differ; keep the
    draw column `next` wrote, and submitting a file twice stores it once.
    """
    with user_errors(), Session.open(session) as s:
        df = read_labels_file(labels_file, id_col=id_col, label_col=label_col, draw_col=draw_col)
        draws = df["draw"].to_numpy() if "draw" in df.columns else None
        new = s.add_labels(df["item_id"].to_numpy(), df["label"].to_numpy(), source=f"file:{labels_file.name}",
                           draws=draws)
        if s.stochastic:  # every row answers a draw of its own
            again = f" ({len(df) - new} rows already stored)" if draws is not None else ""
            typer.echo(f"stored {new} labels{again}; total {s.n_labels} labels, {s.pending.size} still pending")
        else:
            typer.echo(f"stored {new} new labels ({len(df) - new} rows already stored); total {s.n_labels} labeled "
                       f"items, {s.pending.size} still pending")


# --------------------------------------------------------------------------- estimate
def estimate(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    measure: Annotated[
        str | None,
        typer.Option("--measure", "-m", help="Measures to estimate from the same labels (default: the session's). "
                     + MEASURES_HELP),
    ] = None,
    systems: Annotated[
        str | None, typer.Option("--systems", help="Systems for --measure: an index, 'all' or 0,2.")
    ] = None,
    level: Annotated[
        float | None, typer.Option("--level", help="Confidence level (default: the session's, set by init).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Estimate the measure from the labels so far, with confidence intervals."""
    with user_errors(), Session.open(session) as s:
        if level is not None:
            check_level(level)
        if measure is not None:
            target: Measure = make_measure(measure, s.pool, parse_systems(systems or "0"))
        elif systems is not None:
            raise UserError("--systems needs --measure: name the measures to estimate for those systems")
        else:
            target = s.measure
        est = s.estimate(target, level)
        if as_json:
            print_json({"measure": target.name, **est.to_dict()})
        else:
            rich_console().print(estimate_table(est, f"{target.name} on {s.pool.name}"))
