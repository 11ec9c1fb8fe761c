"""Simulated evaluations against ground truth: ``labelwise demo`` and ``labelwise simulate``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import numpy as np
import typer
from rich.text import Text

from .options import (
    BatchOpt,
    DesignOpt,
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
    check_positive,
    describe_design,
    design_settings,
    parse_checkpoints,
    parse_systems,
    pool_columns,
    user_errors,
)
from .render import (
    demo_legend,
    demo_table,
    passive_comparison,
    print_json,
    rich_console,
    simulation_table,
)

if TYPE_CHECKING:
    from ..session import Session

# the library (pandas, scipy, the designs) is imported when a simulation runs, not to register the commands

__all__ = ["demo", "simulate_cmd"]


# --------------------------------------------------------------------------- demo
def demo(
    n_items: Annotated[int, typer.Option("--n-items", help="Items in the generated pool.")] = 200_000,
    prevalence: Annotated[float, typer.Option("--prevalence", help="Fraction of positives.")] = 0.002,
    budget: Annotated[int, typer.Option("--budget", help="Labels to spend.")] = 1000,
    batch_size: BatchOpt = 50,
    seed: SeedOpt = 0,
    design: DesignOpt = "default",
) -> None:
    """Simulate a full evaluation of F1, precision and recall on a generated, imbalanced pool.

    The pool's ground truth plays the annotator; the final table compares
    the estimates with the true values.
    """
    from ..datasets import make_pool
    from ..designs import make_design
    from ..measures import make_measure
    from ..oracle.annotators import TruthOracle
    from ..session import Session
    from ..simulate import true_value

    with user_errors():
        check_positive(budget=budget, batch_size=batch_size)
        pool = make_pool(n_items, prevalence, seed=seed)
        measure = make_measure("f1,precision,recall", pool)
        truth = np.asarray(true_value(pool, measure), dtype=float)
        chosen = make_design(design, pool, measure)
        typer.echo(f"pool: {pool.n_items} items, {int(pool.labels.sum())} positives; "
                   f"design {describe_design(chosen.spec())}; budget {budget} labels", err=True)
        session = Session(pool, measure, chosen, seed=seed)
        est = session.run(TruthOracle(pool), budget, batch_size, progress=True)
        runs = [(chosen.name, est, _positives(session))]
        if chosen.name != "passive":
            uniform = Session(pool, measure, make_design("passive"), seed=seed)
            runs.append(("passive", uniform.run(TruthOracle(pool), budget, batch_size), _positives(uniform)))
        console = rich_console()
        console.print(demo_table(est, truth))
        if len(runs) > 1:
            console.print(Text(passive_comparison(chosen.name, est, runs[1][1], truth)))
        console.print(demo_legend(runs, truth, float(np.mean(pool.labels == 1))))


def _positives(session: Session) -> int:
    """Positives among the items the session has labeled."""
    return int(np.sum(session.labels == 1))


# --------------------------------------------------------------------------- simulate
def simulate_cmd(
    pool_file: Annotated[
        Path, typer.Option("--pool", help="Pool with ground truth: CSV (.csv, .csv.gz), TSV, JSON lines (.jsonl) or Parquet.")
    ],
    measure: MeasureOpt = None,
    design: DesignOpt = "default",
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
        "afresh per draw (a stochastic oracle).")] = 0.0,
    engine: Annotated[str, typer.Option("--engine", help="memory (default), or duckdb|spark for a Parquet pool "
                                        "(file or glob) that stays in its files.")] = "memory",
) -> None:
    """Run repeated simulated evaluations against the pool's ground truth.

    Reports, per label checkpoint, the MSE, bias, fraction of undefined
    estimates, interval coverage and mean interval width. With --json,
    standard output is exactly one JSON object.
    """
    from ..measures import default_measure_name, make_measure
    from ..pool import Pool
    from ..simulate import simulate

    with user_errors():
        check_positive(budget=budget, batch_size=batch_size, repeats=repeats)
        check_level(level)
        marks = parse_checkpoints(checkpoints)
        show = sys.stderr.isatty() if progress is None else progress
        if engine != "memory":
            from .engine_cmds import engine_simulate

            result = engine_simulate(pool_file, engine, measure or "f1", design, param, budget, repeats, seed, marks, level,
                                     systems, show, {**pool_columns(id_col, pred_col, score_col, prob_col),
                                                     "label_col": label_col}, batch_size)
            return print_json(result.to_dict()) if as_json else rich_console().print(simulation_table(result))
        pool = Pool.from_file(pool_file, label_col=label_col,
                              **pool_columns(id_col, pred_col, score_col, prob_col, multilabel))
        if pool.labels is None:
            raise UserError(f"pool file {str(pool_file)!r} has no ground-truth column {label_col!r}; name the column "
                            "of true labels with --label-col (simulate needs them; `labelwise init` labels a pool "
                            "without)")
        target = make_measure(measure or default_measure_name(pool), pool, parse_systems(systems))
        settings, oracle = design_settings(param)
        result = simulate(pool, target, design, design_params=settings, budget=budget, batch_size=batch_size, repeats=repeats, seed=seed,
                          checkpoints=marks, level=level, noise=noise, oracle=oracle, progress=show)
        if as_json:
            print_json(result.to_dict())
        else:
            rich_console().print(simulation_table(result))
