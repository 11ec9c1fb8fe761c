"""The annotation loop: ``labelwise init``, ``next``, ``label`` and ``estimate``.

The session file keeps everything, so each step is a separate process.
After every write the session's estimate is stored with the file
(:func:`~labelwise.session_report.save_estimate`), so ``estimate`` reads
it without the pool or the design.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import numpy as np
import typer

from ..engines.marker import is_engine_session
from ..session_report import cached_estimate, loss_rules_note, save_estimate
from ..store import Store
from .engine_cmds import engine_estimate, engine_init, engine_label, engine_next
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
    check_budget_param,
    check_level,
    check_positive,
    describe_design,
    design_options,
    parse_systems,
    pool_columns,
    session_path,
    user_errors,
)
from .render import emptied_note, print_estimate

if TYPE_CHECKING:
    import pandas as pd

    from ..measures import Measure
    from ..pool import Pool

# pandas, scipy and the designs are imported in the commands that need them: the stored estimate does not

__all__ = ["estimate", "init", "label", "next_batch"]


# --------------------------------------------------------------------------- init
def init(
    pool_files: Annotated[list[Path], typer.Argument(
        help="Pool of unlabeled items: CSV (.csv, .csv.gz), TSV, JSON lines (.jsonl) or Parquet; with --engine, "
        "Parquet files or globs. Without --session the last argument is the session file (init POOL SESSION).")],
    session: Annotated[Path | None, typer.Option("--session", "-s", help="Session file to create (or the last "
                                                 "argument).", show_default=False)] = None,
    measure: MeasureOpt = None,
    design: Annotated[str | None, typer.Option(
        "--design", "-d", "--designs", help=DESIGNS_HELP + " Default: online-poisson; stratified for auc and "
        "roc_curve (binary pools) and on multi-class pools whose classes besides the most common hold at least 10% "
        "of the items; importance for multi-label pools.", show_default=False)] = None,
    param: ParamOpt = None,
    seed: SeedOpt = 0,
    systems: SystemsOpt = "0",
    level: LevelOpt = 0.95,
    id_col: IdCol = "item_id",
    pred_col: PredCol = "pred",
    score_col: ScoreCol = "score",
    prob_col: ProbCol = "prob",
    multilabel: MultiLabelOpt = None,
    engine: Annotated[str, typer.Option("--engine", help="memory (default), or duckdb|spark: the pool stays in its "
                                        "Parquet files, the session references it; init makes a pass that "
                                        "refuses an item id held by several rows and one that stores a checksum "
                                        "of the outputs, besides the design's.")] = "memory",
    budget: Annotated[int | None, typer.Option("--budget", help="Labels the sample is planned for (poisson draws "
                                               "its whole sample for it; required with --engine for the planned "
                                               "designs).")] = None,
    spark_master: Annotated[str | None, typer.Option("--spark-master", help="With --engine spark: e.g. local[2] "
                                                     "or spark://host:7077 (default local[*]).")] = None,
) -> None:
    """Create a labeling session for a pool, a target measure and a sampling design.

    Any ground-truth label column in the pool is ignored.  Labels of a
    multi-label pool (--multilabel) are the codes sum_k v_k 2^k of the label
    vectors, in the order of the names given.  The default design is
    online-poisson; for multi-label pools it is importance, which estimates
    micro-F1 better there (benchmarks/multilabel.py); for auc and roc_curve,
    and on a multi-class pool whose classes besides the most common hold at
    least 10% of the items, it is stratified, which never loses much to
    uniform sampling (benchmarks/auc_designs.py,
    benchmarks/multiclass_default.py).
    """
    with user_errors():
        pool_files, session = _pool_and_session(pool_files, session)
    if engine != "memory":
        with user_errors():
            return engine_init(pool_files, session, engine=engine, measure=measure or "f1", design=design, param=param,
                               seed=seed, systems=systems, level=level, budget=budget, spark_master=spark_master,
                               columns=pool_columns(id_col, pred_col, score_col, prob_col))
    from ..designs import DEFAULT
    from ..measures import default_measure_name, make_measure
    from ..pool import Pool, PoolError, read_pool_file
    from ..pool.core import naming_file
    from ..pool.readers import find_column
    from ..session import Session

    with user_errors():
        if len(pool_files) > 1:
            raise UserError(f"{len(pool_files)} pool files given: an in-memory pool is one file; pass "
                            "--engine duckdb for a pool of several Parquet files")
        pool_file = pool_files[0]
        check_level(level)
        if budget is not None:
            check_positive(budget=budget)
        Store.check_new(session)
        columns = pool_columns(id_col, pred_col, score_col, prob_col, multilabel)
        df = read_pool_file(pool_file, id_col=id_col)
        with naming_file(pool_file):
            pool = Pool.from_dataframe(df, label_col=None, name=pool_file.name.split(".")[0], **columns)
        chosen_systems = parse_systems(systems)
        unread = {} if multilabel else _unread_outputs(df, pool, columns)
        try:
            target = make_measure(measure or default_measure_name(pool), pool, chosen_systems)
            chosen, oracle = design_options(design or DEFAULT, param, pool, target)
            check_budget_param(chosen, budget)
            if budget is None and getattr(chosen, "budget", 0) is None:
                raise UserError(f"--budget: design {chosen.name!r} plans its sample for a number of labels; give "
                                "--budget M (M >= 1)")
            created = Session(pool, target, chosen, oracle=oracle or "deterministic", budget=budget, seed=seed,
                              path=session, level=level)
        except PoolError as exc:  # an output the measure needs is missing: perhaps in a column of another name
            raise UserError("; ".join([f"pool file {str(pool_file)!r}: {exc}", *unread.values()])) from None
        for absent, hint in unread.items():
            typer.echo(f"warning: pool file {str(pool_file)!r} has no column {absent!r}; {hint}", err=True)
        ids_like = [str(c) for c in df.columns if str(c).strip().casefold().endswith("id")]
        _warn_about(pool, find_column(df, id_col) is not None, chosen_systems, ids_like)
        with created as s:
            typer.echo(f"created session {str(session)!r}")
            typer.echo(f"  items:   {pool.n_items} (pool {pool.name!r}, {pool.n_classes} classes)")
            typer.echo(f"  systems: {', '.join(pool.system_names)}")
            typer.echo(f"  measure: {', '.join(target.names)}")
            typer.echo(f"  design:  {describe_design(s.design.spec(), *_multiclass(pool), budget)}, seed {seed}, "
                       f"level {level:g}")


def _multiclass(pool: Pool) -> tuple[bool, bool]:
    """Whether ``pool`` is multi-class (not multi-label) and whether it has scores (:func:`describe_design`)."""
    return pool.n_classes > 2 and not pool.label_names, pool.scores is not None


def _pool_and_session(arguments: list[Path], session: Path | None) -> tuple[list[Path], Path]:
    """The pool files and the session file of ``init``: ``--session``, else the last of two or more arguments
    (``init POOL SESSION``, as ``ondemand init`` and ``discover init`` take a session argument)."""
    from ..pool.table import file_suffixes

    if session is not None or len(arguments) < 2:
        return arguments, session_path(None, session, "init")
    if file_suffixes(arguments[-1]) in (".csv", ".csv.gz", ".tsv", ".jsonl", ".parquet", ".pq"):
        raise UserError(f"init: {str(arguments[-1])!r} looks like a pool file, not the session to create; give "
                        "the session with --session (e.g. --session eval.lw) or as the last argument")
    return arguments[:-1], arguments[-1]


def _unread_outputs(df: pd.DataFrame, pool: Pool, columns: dict) -> dict[str, str]:
    """For each system output the pool lacks (its default column absent), the columns of ``df`` not read whose
    name begins like that column's (``probability`` for ``prob``): the absent column -> a hint naming the flag
    that reads them."""
    from ..pool.readers import find_column

    named = [columns["id_col"], *(c for k in ("pred_cols", "score_cols", "prob_cols") for c in
                                  ([columns[k]] if isinstance(columns[k], str) else columns[k]))]
    read = {find_column(df, name) for name in named}
    hints = {}
    for role, what, held in (("pred", "predicted labels", pool.preds), ("score", "scores", pool.scores),
                             ("prob", "probabilities", pool.probs)):
        if held is not None:
            continue
        near = [str(c) for c in df.columns if c not in read and str(c).strip().casefold().startswith(role)]
        if near:  # a multi-class pool's probabilities are a column per class
            per_class = role == "prob" and pool.n_classes > 2 and len(near) > 1
            flag = f"{','.join(near)} if they hold" if per_class else f"{near[0]} if it holds"
            hints[columns[role + "_cols"]] = (f"column(s) {near} were not read: pass --{role}-col {flag} the "
                                              f"systems' {what}")
    return hints


def _warn_about(pool: Pool, has_ids: bool, systems: str | int | list[int], ids_like: list[str]) -> None:
    """Warnings on standard error for pools that are valid but probably not what the user meant (``ids_like``:
    the columns whose name ends in "id", when the id column was not found)."""
    if not has_ids:
        hint = f" (--id-col {ids_like[0]}?)" if ids_like else ""
        typer.echo("warning: the pool has no id column; items are numbered by row (0, 1, ...). Name the id "
                   f"column with --id-col{hint} so batches and exports show your ids", err=True)
    evaluated = list(range(pool.n_systems)) if systems == "all" else [systems] if isinstance(systems, int) \
        else list(systems)
    flat = [pool.system_names[s] for s in evaluated if np.ptp(pool.primary_scores(s)) == 0]
    if flat:
        typer.echo(f"warning: every item has the same score for {', '.join(flat)}; adaptive designs cannot "
                   "focus the labels (check the score/prob columns)", err=True)
    silent = [pool.system_names[s] for s in evaluated if pool.n_classes == 2 and pool.preds is not None
              and pool.preds.ndim == 2 and not pool.preds[:, s].any()]
    if silent:
        typer.echo(f"warning: {', '.join(silent)} predicts no positive item: its precision is undefined, its "
                   "recall and F1 are 0 (undefined until a positive is labeled); check the pred column", err=True)
    if len(evaluated) < pool.n_systems:
        typer.echo(f"warning: the pool has {pool.n_systems} systems ({', '.join(pool.system_names)}) but only "
                   f"{', '.join(pool.system_names[s] for s in evaluated)} is evaluated; pass --systems all for "
                   "every one", err=True)


# --------------------------------------------------------------------------- next
def next_batch(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    batch_size: Annotated[int, typer.Option("-n", "--batch-size", help="How many items to hand out: pending "
                                            "ones first, then new draws.")] = 50,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the batch to this .csv, .tsv, .jsonl, .json or .parquet file; - "
                     "(the default) for CSV on standard output. A batch file holding labels not stored yet is "
                     "not overwritten (`labelwise label` it first)."),
    ] = None,
    new: Annotated[bool, typer.Option("--new", help="Hand out new draws only (e.g. for a second annotator "
                                      "while the pending items are with the first).")] = False,
) -> None:
    """Hand out items to label, with the systems' outputs for context and an empty label column.

    Items handed out earlier and not labeled yet come first (skipped ones
    last), then the design draws new items.  Asking for more than the pool
    has left hands out what there is.
    """
    if is_engine_session(session):
        with user_errors():
            return engine_next(session, batch_size, out, new)
    from ..pool import batch_frame, write_batch
    from ..pool.writers import is_stdout
    from ..session import Session
    from .unstored import refuse_unstored_labels

    with user_errors(), Session.open(session) as s:
        refuse_unstored_labels(s, session, out)  # before anything is drawn: a refusal leaves the session as it was
        before = len(s.draws)
        rows = s.hand_out(batch_size, new_only=new)
        frame = batch_frame(s.pool, s.pool.item_ids[s.draws.items[rows]])
        if s.stochastic:  # a row per draw: its number lets `label` store a resubmitted file once
            frame.insert(1, "draw", rows)
        write_batch(frame, out)
        save_estimate(s)
        written = "" if is_stdout(out) else f" written to {str(out)!r}"
        fresh = int(np.sum(rows >= before))
        typer.echo(f"{rows.size} items to label{written}: {rows.size - fresh} pending from earlier, {fresh} new",
                   err=True)
        if rows.size < batch_size:
            why = (f"{s.design.name} draws its next round once the {s.pending_draws.size} pending items are "
                   "labeled" if s.can_draw() == 0 and s.pending_draws.size else "no unlabeled item is left to draw")
            typer.echo(f"note: {batch_size} asked for, {rows.size} handed out: {why}", err=True)


# --------------------------------------------------------------------------- label
def label(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    labels_file: Annotated[Path, typer.Argument(help="Labels as CSV, TSV, JSONL (one object per line) or "
                                                "Parquet; - reads CSV/TSV/JSONL from standard input.")],
    id_col: Annotated[str, typer.Option("--id-col", help="Labels-file column holding the item ids.")] = "item_id",
    label_col: Annotated[str, typer.Option("--label-col", help="Labels-file column holding the labels.")] = "label",
    draw_col: Annotated[str, typer.Option("--draw-col", help="Labels-file column holding the draw numbers `next` "
                                          "lists in a stochastic session (used when present).")] = "draw",
) -> None:
    """Store annotators' labels for proposed items.

    Rows with an empty label (a batch file partly filled in) are left
    pending.  The whole file is rejected, and nothing stored changes, if
    any id is unknown or was not proposed, any label lies outside the
    label set, or any label contradicts one already stored (correct a label
    with `labelwise relabel`).  In a session whose design has
    oracle=stochastic (noisy or several annotators) an id may appear as
    many times as `next` returned it, and its labels may differ; keep the
    draw column `next` wrote, and submitting a file twice stores it once.
    """
    if is_engine_session(session):
        with user_errors():
            return engine_label(session, labels_file, id_col, label_col)
    from ..ledger import LabelError, NotProposedError
    from ..pool import read_labels_file
    from ..session import Session

    with user_errors(), Session.open(session) as s:
        df = read_labels_file(labels_file, id_col=id_col, label_col=label_col, draw_col=draw_col, skip_empty=True)
        draws = df["draw"].to_numpy() if "draw" in df.columns else None
        source = "stdin" if str(labels_file) == "-" else f"file:{labels_file.name}"
        try:
            new = s.add_labels(df["item_id"].to_numpy(), df["label"].to_numpy(), source=source, draws=draws)
        except NotProposedError as exc:
            raise UserError(_not_proposed(df, exc.index, labels_file, id_col)) from None
        except LabelError as exc:  # one row named: say which line of which file
            if exc.index is None:
                raise
            told = "" if "Nothing was stored" in str(exc) else ". Nothing was stored"
            raise UserError(f"labels file {str(labels_file)!r}, data row {int(df.index[exc.index])}: "
                            f"{exc}{told}") from None
        save_estimate(s)
        empty = df.attrs["empty_labels"]
        blank = f"; {empty} rows without a label left pending" if empty else ""
        if s.stochastic:  # every row answers a draw of its own
            again = f" ({len(df) - new} rows already stored)" if draws is not None else ""
            typer.echo(f"stored {new} labels{again}; total {s.n_labels} labels, {s.pending.size} still "
                       f"pending{blank}")
        else:
            typer.echo(f"stored {new} new labels ({len(df) - new} rows already stored); total {s.n_labels} labeled "
                       f"items, {s.pending.size} still pending{blank}")


def _not_proposed(labels: pd.DataFrame, i: int, path: Path, id_col: str) -> str:
    """The refusal of a label (row ``i`` of ``labels``) of a pool item the session's design never proposed (drew),
    naming the file and row.

    Such a label has no design weight, so no estimate can use it: a ``labelwise discover export``, for one,
    lists positives found by querying annotators, outside the session's draws.
    """
    from ..ledger import show_id

    return (f"labels file {str(path)!r}, column {id_col!r}, data row {int(labels.index[i])}: item "
            f"{show_id(labels['item_id'].iloc[i])} was not proposed by the session's design, so its label has no "
            "design weight (a `labelwise discover export` lists positives found outside its draws); keep only the "
            "rows of items `labelwise next` handed out. Nothing was stored")


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
    anytime: Annotated[bool, typer.Option("--anytime", help="Anytime-valid interval (a confidence sequence): it "
                                          "holds however often you look and whenever you stop.")] = False,
) -> None:
    """Estimate the measure from the labels so far, with confidence intervals."""
    if is_engine_session(session):
        with user_errors():
            return engine_estimate(session, measure, systems, level, as_json)
    with user_errors():
        if level is not None:
            check_level(level)
        if measure is None and systems is None and not anytime:  # the stored estimate, if the file has not changed since
            with closing(Store.open(session)) as store:
                cached = cached_estimate(store, level)
                if cached is not None:
                    return print_estimate(*cached, store.pool_meta()["name"], store.counts()["excluded"], as_json,
                                           loss_rules_note(store, cached[1]))
    from ..measures import make_measure
    from ..session import Session

    with user_errors(), Session.open(session) as s:
        if measure is not None:
            target: Measure = make_measure(measure, s.pool, parse_systems(systems or "0"))
        elif systems is not None:
            raise UserError("--systems needs --measure: name the measures to estimate for those systems")
        else:
            target = s.measure
        est = s.estimate(target, level, anytime=anytime)
        if target is s.measure and (level is None or level == s.level) and not anytime:
            save_estimate(s)
        print_estimate(est, target.name, s.pool.name, s.n_excluded, as_json, loss_rules_note(s.store, target.name))
        if getattr(est, "emptied", ()) and not as_json:
            typer.echo(emptied_note(est.emptied))
