"""``init --engine``, ``next``, ``label`` and ``estimate`` for sessions on engine pools.

The commands of :mod:`labelwise.cli.session_cmds` hand over to these when
``init`` is given ``--engine duckdb|spark`` or the session file is an engine
session (:func:`labelwise.engines.marker.is_engine_session`): the pool stays
in its Parquet files and the session file references it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..progress import progress_bar
from ..session_report import estimate_record
from .options import (
    UserError,
    check_budget_param,
    check_level,
    describe_design,
    design_settings,
    parse_systems,
)
from .render import estimate_table, print_json, rich_console

__all__ = ["engine_estimate", "engine_export", "engine_init", "engine_label", "engine_next", "engine_simulate",
           "engine_status"]

#: The design an engine session uses unless told otherwise (it plans the whole sample at ``init``).
ENGINE_DEFAULT_DESIGN = "poisson"


def _design(design: str | None, param: list[str] | None):
    """The design named (``default``: :data:`ENGINE_DEFAULT_DESIGN`) with its ``--param`` settings."""
    from ..designs import make_design
    from ..engines.plan import check_engine_design

    settings, oracle = design_settings(param)
    if oracle not in (None, "deterministic"):
        raise UserError("--param oracle=stochastic: engine pools label each item once; drop the option")
    name = design if design not in (None, "default") else ENGINE_DEFAULT_DESIGN
    check_engine_design(name)
    return make_design(name, **settings)


def engine_init(pool_files: list[Path], session: Path, *, engine: str, measure: str, design: str | None,
                param: list[str] | None, seed: int, systems: str, level: float, budget: int | None,
                spark_master: str | None, columns: dict) -> None:
    """Create an engine session: summarise the pool, plan the design for ``budget`` labels, draw the sample.

    ``columns`` are the column options (:func:`~labelwise.cli.options.pool_columns`).
    """
    from ..engines import EnginePool, EngineSession
    from ..engines.plan import PER_BATCH

    check_level(level)
    chosen = _design(design, param)
    online = chosen.name in PER_BATCH
    check_budget_param(chosen, budget)
    if not online and (budget is None or budget < 1):
        raise UserError(f"--budget: design {chosen.name!r} plans its sample for a number of labels; give --budget M "
                        "(M >= 1), or use --design online-poisson or stratified, which draw at every batch")
    if session.exists():
        raise UserError(f"session file {str(session)!r} already exists; `labelwise next` continues it, or choose "
                        "another path")
    pool = EnginePool.open([str(p) for p in pool_files], engine, spark_master=spark_master, **columns)
    with progress_bar(sys.stderr.isatty(), 2, f"{engine}: passes over the pool (summary, then the design's set-up)") as update:
        _ = pool.summary
        update(1)
        s = EngineSession.create(session, pool, measure=measure, systems=parse_systems(systems), design=chosen,
                                 budget=budget or 0, seed=seed, level=level)
        update(2)
    with s:
        typer.echo(f"created session {str(session)!r} (engine {engine}; the pool stays in its files)")
        typer.echo(f"  items:   {pool.n_items} (pool {pool.name!r}, {len(pool.files)} file(s))")
        typer.echo(f"  systems: {', '.join(pool.system_names)}")
        typer.echo(f"  measure: {', '.join(s.make_measure().names)}")
        typer.echo(f"  design:  {describe_design(chosen.spec(), budget=budget)}, seed {seed}, level {level:g}")
        typer.echo("  sample:  drawn at every `next`, from the labels so far" if online else
                   f"  sample:  {len(s.sample)} items planned for a budget of {budget}")


def engine_next(session: Path, batch_size: int, out: Path | None, new_only: bool) -> None:
    """Hand out a batch: pending items first (unless ``new_only``), then the next of the planned sample, rows
    read from the engine."""
    from ..engines import EngineSession
    from ..pool import write_batch
    from ..pool.writers import is_stdout
    from .unstored import refuse_unstored_engine_labels

    with EngineSession.open(session) as s:
        refuse_unstored_engine_labels(s.pending(), session, out)
        frame, fresh = s.hand_out(batch_size, new_only)
        write_batch(frame, out)
        written = "" if is_stdout(out) else f" written to {str(out)!r}"
        typer.echo(f"{len(frame)} items to label{written}: {len(frame) - fresh} pending from earlier, {fresh} new",
                   err=True)
        if len(frame) < batch_size and not s.per_batch:
            typer.echo(f"note: {batch_size} asked for, {len(frame)} handed out: the planned sample of "
                       f"{len(s.sample)} items is used up; start a session with a larger --budget", err=True)


def engine_label(session: Path, labels_file: Path, id_col: str, label_col: str) -> None:
    """Store the labels of handed-out items."""
    from ..engines import EngineSession
    from ..ledger import LabelError
    from ..pool import read_labels_file

    with EngineSession.open(session) as s:
        df = read_labels_file(labels_file, id_col=id_col, label_col=label_col, draw_col=None, skip_empty=True)
        source = "stdin" if str(labels_file) == "-" else f"file:{labels_file.name}"
        try:
            new = s.add_labels(df["item_id"].to_numpy(), df["label"].to_numpy(), source)
        except LabelError as e:  # the checks of labelwise.engines.labels: name the file and row they were read from
            row = "" if e.index is None else f", data row {int(df.index[e.index])}"
            raise UserError(f"labels file {str(labels_file)!r}{row}: {str(e).removeprefix('labels: ')}. "
                            "Nothing was stored") from None
        empty = df.attrs["empty_labels"]
        blank = f"; {empty} rows without a label left pending" if empty else ""
        typer.echo(f"stored {new} new labels ({len(df) - new} rows already stored); total {s.n_labels} labeled "
                   f"items, {s.pending().size} still pending{blank}")


def engine_estimate(session: Path, measure: str | None, systems: str | None, level: float | None,
                    as_json: bool) -> None:
    """Estimate from the labels so far; needs no pass over the pool."""
    from ..engines import EngineSession

    if level is not None:
        check_level(level)
    if systems is not None and measure is None:
        raise UserError("--systems needs --measure: name the measures to estimate for those systems")
    with EngineSession.open(session) as s:
        target = s.make_measure(measure, None if systems is None else parse_systems(systems))
        est = s.estimate(target, level)
        if as_json:
            print_json(estimate_record(est, target.name, 0))
        else:
            rich_console().print(estimate_table(est, f"{target.name} on {s.meta['name']}"))


def engine_status(session: Path, as_json: bool) -> None:
    """Pool, design, labels and pending items of an engine session, and the estimate (no pass over the pool)."""
    from ..engines import EngineSession

    with EngineSession.open(session) as s:
        info, est, measure, budget = s.status(), s.estimate(), s.make_measure().name, s.meta["budget"]
    if as_json:
        print_json({**info, "estimate": {"measure": measure, **est.to_dict()}})
        return
    typer.echo("\n".join([
        f"session  {info['session']}",
        (f"pool     {info['pool']}: {info['n_items']} items in {len(info['files'])} file(s) (engine "
         f"{info['engine']}), systems {', '.join(info['systems'])}"),
        f"design   {describe_design(info['design'], budget=budget)}",
        f"labels   {info['labels']} ({info['draws']} handed out), {info['pending']} pending",
        f"file     {'ok' if info['health'] == 'ok' else 'DAMAGED: ' + info['health']}"]))
    rich_console().print(estimate_table(est, f"{measure} on {info['pool']}"))


def engine_export(session: Path, out: Path | None) -> None:
    """Write every label of an engine session (:meth:`~labelwise.engines.EngineSession.export_frame`); ``None``:
    standard output."""
    from ..engines import EngineSession
    from ..pool import write_batch
    from ..pool.writers import where

    with EngineSession.open(session) as s:
        frame = s.export_frame()
    write_batch(frame, out)
    typer.echo(f"wrote {len(frame)} rows to {where(out)}", err=True)


def engine_simulate(pool_file: Path, engine: str, measure: str, design: str | None, param: list[str] | None,
                    budget: int, repeats: int, seed: int, checkpoints: list[int] | None, level: float, systems: str,
                    progress: bool, columns: dict, batch_size: int = 50):
    """``simulate --engine``: :func:`~labelwise.engines.simulate.simulate_engine` on a Parquet pool.

    ``columns`` are the column options (:func:`~labelwise.cli.options.pool_columns` and ``label_col``).
    """
    from ..engines import EnginePool
    from ..engines.simulate import simulate_engine

    pool = EnginePool.open(str(pool_file), engine, **columns)
    pool.check_items()
    return simulate_engine(pool, pool.measure(measure, parse_systems(systems)), _design(design, param),
                           budget=budget, repeats=repeats, seed=seed, checkpoints=checkpoints, level=level,
                           progress=progress, batch_size=batch_size)
