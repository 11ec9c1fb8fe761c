"""The ``labelwise`` command line: label-efficient evaluation from the shell.

Annotation loop (the session file keeps everything, so each step is a
separate process)::

    labelwise init pool.csv --session eval.lw --measure f1 --design importance
    labelwise next eval.lw -n 50 --out batch.csv     # give batch.csv to annotators
    labelwise label eval.lw labels.csv               # ingest their labels
    labelwise estimate eval.lw                       # estimate with intervals

Simulation against ground truth: ``labelwise simulate --pool pool.csv ...``
(its ``--json`` output is a stable contract) and ``labelwise demo``.

Every user error is reported as one line starting with ``error:`` on
standard error, with exit code 1.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..datasets import make_pool
from ..designs import DESIGNS, Design, get_design
from ..estimators import Estimate
from ..measures import MEASURE_NAMES, Measure, build_measure
from ..oracle.annotators import TruthOracle
from ..pool import Pool, batch_frame, read_labels_file, write_batch
from ..session import Session
from ..simulate import SimulationResult, simulate, true_value
from ..store import StoreError

__all__ = ["app"]

app = typer.Typer(
    name="labelwise",
    help="Label-efficient evaluation of ML systems: estimate F1, precision, recall and more "
    "from few human labels, with confidence intervals.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

# --------------------------------------------------------------------------- shared options
_MEASURES_HELP = "Comma-separated measure names, estimated together: " + ", ".join(MEASURE_NAMES) + "."
_DESIGNS_HELP = "Sampling design: " + ", ".join(sorted(DESIGNS)) + "."

IdCol = Annotated[str, typer.Option("--id-col", help="Pool column holding the item ids.")]
PredCol = Annotated[
    str, typer.Option("--pred-col", help="Predicted-label column(s), comma-separated for several systems.")
]
ScoreCol = Annotated[str, typer.Option("--score-col", help="Score column(s), comma-separated for several systems.")]
ProbCol = Annotated[str, typer.Option("--prob-col", help="Probability column(s), comma-separated for several systems.")]
MultiLabelOpt = Annotated[
    str | None,
    typer.Option("--multilabel", help="Multi-label pool: comma-separated label names; label NAME is read from the "
                 "columns <pred-col>_NAME, <prob-col>_NAME and <label-col>_NAME (e.g. pred_toxic)."),
]
MeasureOpt = Annotated[str, typer.Option("--measure", "-m", help=_MEASURES_HELP)]
DesignOpt = Annotated[str, typer.Option("--design", "-d", help=_DESIGNS_HELP)]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--param", "-p", help="Design parameter as key=value (repeatable), e.g. --param lam=0.9."),
]
SystemsOpt = Annotated[str, typer.Option("--systems", help="Systems to evaluate: an index, 'all' or a list like 0,2.")]
LevelOpt = Annotated[float, typer.Option("--level", help="Confidence level of the intervals.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed (the only source of randomness).")]
BatchOpt = Annotated[
    int, typer.Option("--batch-size", help="Labels per batch (adaptive designs update between batches).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


class UserError(ValueError):
    """A problem with the command line arguments themselves."""


@contextmanager
def _user_errors() -> Iterator[None]:
    """Turn the library's user-facing exceptions into ``error: ...`` and exit code 1."""
    try:
        yield
    except (ValueError, StoreError, OSError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(code=1) from None


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _column_arg(value: str) -> str | list[str]:
    """One column name, or a list when the option names several (one per system)."""
    parts = _split(value)
    if not parts:
        raise UserError(f"column option: empty value {value!r}; give a column name")
    return parts[0] if len(parts) == 1 else parts


def pool_columns(id_col: str, pred_col: str, score_col: str, prob_col: str,
                 multilabel: str | None = None) -> dict[str, Any]:
    """Keyword arguments of :meth:`Pool.from_file` from the shared column flags.

    ``multilabel`` (``--multilabel``) names the labels of a multi-label pool;
    the pred/prob/label columns are then prefixes (see :meth:`Pool.from_dataframe`).
    """
    columns: dict[str, Any] = {
        "id_col": id_col,
        "pred_cols": _column_arg(pred_col),
        "score_cols": _column_arg(score_col),
        "prob_cols": _column_arg(prob_col),
    }
    if multilabel is not None:
        names = _split(multilabel)
        if not names:
            raise UserError(f"--multilabel: expected label names like toxic,threat; got {multilabel!r}")
        columns["multilabel"] = names
    return columns


def parse_value(text: str) -> bool | int | float | str:
    """``true``/``false`` -> bool, then int, then float, else the string itself."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    """``["lam=0.9", "n_strata=8"]`` -> ``{"lam": 0.9, "n_strata": 8}``."""
    params: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--param: expected key=value, got {item!r}")
        params[key.strip()] = parse_value(value.strip())
    return params


def parse_systems(value: str) -> str | int | list[int]:
    """``"all"``, ``"1"`` or ``"0,2"`` as accepted by :func:`build_measure`."""
    if value.strip().lower() == "all":
        return "all"
    try:
        systems = [int(s) for s in _split(value)]
    except ValueError:
        raise UserError(f"--systems: expected an index, 'all' or a list like 0,2; got {value!r}") from None
    if not systems:
        raise UserError("--systems: give at least one system index")
    return systems[0] if len(systems) == 1 else systems


def parse_checkpoints(value: str | None) -> list[int] | None:
    """``"250,500"`` -> ``[250, 500]``; ``None`` keeps the default checkpoints."""
    if value is None:
        return None
    try:
        marks = [int(s) for s in _split(value)]
    except ValueError:
        raise UserError(f"--checkpoints: expected label counts like 250,500,1000; got {value!r}") from None
    if not marks or min(marks) < 1:
        raise UserError(f"--checkpoints: give positive label counts, got {value!r}")
    return marks


def check_level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise UserError(f"--level: must lie strictly between 0 and 1, got {level}")
    return level


def check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise UserError(f"--{name.replace('_', '-')}: must be at least 1, got {value}")


def make_design(name: str, params: Sequence[str] | None) -> Design:
    """A registered design from its name and ``--param`` strings."""
    return get_design(name, **parse_params(params))


def describe_design(design: Design) -> str:
    params = ", ".join(f"{k}={v}" for k, v in design.params().items())
    return f"{design.name} ({params})" if params else design.name


def _finite(obj: Any) -> Any:
    """Replace NaN/inf by ``None`` so that the output is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def print_json(obj: dict) -> None:
    """Print exactly one JSON object (and a newline) on standard output."""
    typer.echo(json.dumps(_finite(obj)))


def _console() -> Console:
    return Console(highlight=False)


def _f(x: float, spec: str = ".4f") -> str:
    return "nan" if not math.isfinite(x) else format(x, spec)


# --------------------------------------------------------------------------- init
@app.command()
def init(
    pool_file: Annotated[Path, typer.Argument(help="Pool of unlabeled items: CSV (.csv, .csv.gz, .tsv) or Parquet.")],
    session: Annotated[Path, typer.Option("--session", "-s", help="Session file to create.")],
    measure: MeasureOpt = "f1",
    design: Annotated[str | None, typer.Option(
        "--design", "-d", help=_DESIGNS_HELP + " Default: online-poisson, or importance for multi-label pools.",
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
    online-poisson; for multi-label pools it is importance, whose micro-F1
    MSE was 3.7x lower there (benchmarks/multilabel.py).
    """
    if design is None:
        design = "importance" if multilabel else "online-poisson"
    with _user_errors():
        check_level(level)
        pool = Pool.from_file(pool_file, label_col=None,
                              **pool_columns(id_col, pred_col, score_col, prob_col, multilabel))
        target = build_measure(measure, pool, parse_systems(systems))
        with Session(pool, target, make_design(design, param), seed=seed, path=session, level=level) as s:
            typer.echo(f"created session {str(session)!r}")
            typer.echo(f"  items:   {pool.n_items} (pool {pool.name!r}, {pool.n_classes} classes)")
            typer.echo(f"  systems: {', '.join(pool.system_names)}")
            typer.echo(f"  measure: {', '.join(target.names)}")
            typer.echo(f"  design:  {describe_design(s.design)}, seed {seed}, level {level:g}")


# --------------------------------------------------------------------------- next
@app.command("next")
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
    with _user_errors(), Session.open(session) as s:
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
@app.command()
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
    with _user_errors(), Session.open(session) as s:
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
def estimate_table(est: Estimate, title: str) -> Table:
    """Component, estimate, standard error, interval and defined flag."""
    lo, hi = est.interval()
    table = Table(title=Text(title), caption=Text(f"{est.n_labels} labels, {est.n_draws} draws, "
                                                  f"{est.level:.0%} intervals"))
    for header in ("component", "estimate", "std error", "interval", "defined"):
        table.add_column(header, justify="left" if header == "component" else "right")
    for name, v, s, a, b, d in zip(est.names, est.value, est.std, lo, hi, est.defined):
        table.add_row(Text(name), _f(v), _f(s), f"[{_f(a)}, {_f(b)}]", "yes" if d else "no")
    return table


@app.command()
def estimate(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    measure: Annotated[
        str | None,
        typer.Option("--measure", "-m", help="Measures to estimate from the same labels (default: the session's). "
                     + _MEASURES_HELP),
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
    with _user_errors(), Session.open(session) as s:
        if level is not None:
            check_level(level)
        if measure is not None:
            target: Measure = build_measure(measure, s.pool, parse_systems(systems or "0"))
        elif systems is not None:
            raise UserError("--systems needs --measure: name the measures to estimate for those systems")
        else:
            target = s.measure
        est = s.estimate(target, level)
        if as_json:
            print_json({"measure": target.name, **est.to_dict()})
        else:
            _console().print(estimate_table(est, f"{target.name} on {s.pool.name}"))


# --------------------------------------------------------------------------- demo
def demo_table(est: Estimate, truth: np.ndarray) -> Table:
    """True value, estimate, interval and whether the interval covers the truth."""
    lo, hi = est.interval()
    table = Table(title="Estimates vs the truth",
                  caption=f"{est.n_labels} labels, {est.level:.0%} intervals")
    for header in ("component", "true value", "estimate", "interval", "covered?"):
        table.add_column(header, justify="left" if header == "component" else "right")
    for name, t, v, a, b in zip(est.names, truth, est.value, lo, hi):
        table.add_row(Text(name), _f(t), _f(v), f"[{_f(a)}, {_f(b)}]", "yes" if a <= t <= b else "NO")
    return table


@app.command()
def demo(
    n_items: Annotated[int, typer.Option("--n-items", help="Items in the generated pool.")] = 200_000,
    prevalence: Annotated[float, typer.Option("--prevalence", help="Fraction of positives.")] = 0.002,
    budget: Annotated[int, typer.Option("--budget", help="Labels to spend.")] = 1000,
    batch_size: BatchOpt = 50,
    seed: SeedOpt = 0,
    design: DesignOpt = "online-poisson",
) -> None:
    """Simulate a full evaluation of F1, precision and recall on a generated, imbalanced pool.

    The pool's ground truth plays the annotator; the final table compares
    the estimates with the true values.
    """
    with _user_errors():
        check_positive(budget=budget, batch_size=batch_size)
        pool = make_pool(n_items, prevalence, seed=seed)
        measure = build_measure("f1,precision,recall", pool)
        truth = np.asarray(true_value(pool, measure), dtype=float)
        chosen = get_design(design)
        typer.echo(f"pool: {pool.n_items} items, {int(pool.labels.sum())} positives; "
                   f"design {describe_design(chosen)}; budget {budget} labels", err=True)
        est = Session(pool, measure, chosen, seed=seed).run(TruthOracle(pool), budget, batch_size, progress=True)
        console = _console()
        console.print(demo_table(est, truth))
        if chosen.name != "passive":
            passive = Session(pool, measure, get_design("passive"), seed=seed).run(TruthOracle(pool), budget,
                                                                                  batch_size)
            console.print(Text(passive_comparison(chosen.name, est, passive, truth)))


def passive_comparison(design: str, est: Estimate, passive: Estimate, truth: np.ndarray) -> str:
    """One line: the first component by the design and by passive sampling with the same labels."""
    def summary(e: Estimate) -> str:
        lo, hi = e.interval()
        covered = "covers" if lo[0] <= truth[0] <= hi[0] else "misses"
        undefined = "" if e.defined[0] else ", undefined"
        return (f"{_f(e.value[0])} [{_f(lo[0])}, {_f(hi[0])}] (error {_f(abs(e.value[0] - truth[0]))}, "
                f"{covered} the truth{undefined})")

    return (f"{est.names[0]} with {est.n_labels} labels: {design} {summary(est)}; "
            f"passive sampling {summary(passive)}")


# --------------------------------------------------------------------------- simulate
def simulation_table(result: SimulationResult) -> Table:
    """One row per checkpoint (and component, for vector measures)."""
    truth = np.atleast_1d(result.true_value)
    table = Table(
        title=Text(f"{result.measure} on {result.pool} ({result.n_items} items), design {result.design}, "
                   f"{result.repeats} repeats"),
        caption=Text("true value " + ", ".join(f"{n} {_f(t)}" for n, t in zip(result.names, truth))
                     + f"; {result.seconds_per_run:.2f} s per run; {result.level:.0%} intervals"),
    )
    vector = len(result.names) > 1
    headers = (["labels"] + (["component"] if vector else [])
               + ["mse", "bias", "undefined", "coverage", "mean width"])
    for header in headers:
        table.add_column(header, justify="left" if header == "component" else "right")
    for row in result.checkpoint_rows():
        for c, name in enumerate(result.names):
            pick = (lambda v, c=c: float(np.atleast_1d(v)[c]))
            table.add_row(
                str(row["labels"]), *([Text(name)] if vector else []),
                _f(pick(row["mse"]), ".3g"), _f(pick(row["bias"]), "+.4f"),
                _f(pick(row["undefined_fraction"]), ".3f"), _f(pick(row["coverage"]), ".3f"),
                _f(pick(row["mean_width"]), ".4f"),
            )
    return table


@app.command("simulate")
def simulate_cmd(
    pool_file: Annotated[
        Path, typer.Option("--pool", help="Pool with ground truth: CSV (.csv, .csv.gz, .tsv) or Parquet.")
    ],
    measure: MeasureOpt = "f1",
    design: DesignOpt = "importance",
    budget: Annotated[int, typer.Option("--budget", help="Distinct labels per run.")] = 2000,
    batch_size: BatchOpt = 50,
    repeats: Annotated[int, typer.Option("--repeats", help="Independent simulated evaluations.")] = 100,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    param: ParamOpt = None,
    checkpoints: Annotated[
        str | None,
        typer.Option("--checkpoints", help="Label counts to summarise, e.g. 250,500,1000,2000 "
                     "(default: those up to --budget, plus --budget)."),
    ] = None,
    level: LevelOpt = 0.95,
    systems: SystemsOpt = "0",
    progress: Annotated[
        bool | None,
        typer.Option("--progress/--no-progress", help="Progress bar on stderr (default: when stderr is a terminal)."),
    ] = None,
    id_col: IdCol = "item_id",
    pred_col: PredCol = "pred",
    score_col: ScoreCol = "score",
    prob_col: ProbCol = "prob",
    label_col: Annotated[str, typer.Option("--label-col", help="Ground-truth label column.")] = "label",
    multilabel: MultiLabelOpt = None,
    noise: Annotated[float, typer.Option(
        "--noise", help="Annotator noise: each answer is wrong (another class) with this probability, drawn "
        "afresh per draw (a stochastic oracle; run the design with --param oracle=stochastic).")] = 0.0,
) -> None:
    """Run repeated simulated evaluations against the pool's ground truth.

    Reports, per label checkpoint, the MSE, bias, fraction of undefined
    estimates, interval coverage and mean interval width. With --json,
    standard output is exactly one JSON object.
    """
    with _user_errors():
        check_positive(budget=budget, batch_size=batch_size, repeats=repeats)
        check_level(level)
        marks = parse_checkpoints(checkpoints)
        pool = Pool.from_file(pool_file, label_col=label_col,
                              **pool_columns(id_col, pred_col, score_col, prob_col, multilabel))
        target = build_measure(measure, pool, parse_systems(systems))
        chosen = make_design(design, param)
        show = sys.stderr.isatty() if progress is None else progress
        result = simulate(pool, target, chosen, budget=budget, batch_size=batch_size, repeats=repeats, seed=seed,
                          checkpoints=marks, level=level, noise=noise, progress=show)
        if as_json:
            print_json(result.to_dict())
        else:
            _console().print(simulation_table(result))


if __name__ == "__main__":  # pragma: no cover
    app()
