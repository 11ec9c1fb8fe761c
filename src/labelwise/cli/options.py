"""Shared options of the ``labelwise`` commands, their parsers and the handling of user errors."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..store import StoreError

if TYPE_CHECKING:
    from ..designs import Design
    from ..measures import Measure
    from ..pool import Pool

__all__ = [
    "BUILTIN_DESIGNS",
    "BUILTIN_MEASURES",
    "DESIGNS_HELP",
    "MEASURES_HELP",
    "BatchOpt",
    "DesignOpt",
    "IdCol",
    "JsonOpt",
    "LevelOpt",
    "MeasureOpt",
    "MultiLabelOpt",
    "ParamOpt",
    "PredCol",
    "ProbCol",
    "ScoreCol",
    "SeedOpt",
    "SystemsOpt",
    "UserError",
    "check_budget_param",
    "check_level",
    "check_positive",
    "describe_design",
    "design_options",
    "design_settings",
    "parse_checkpoints",
    "parse_params",
    "parse_systems",
    "parse_value",
    "pool_columns",
    "session_path",
    "user_errors",
]

# The built-in measures (as MEASURE_NAMES lists them) and designs (sorted), written out so that the
# commands are registered without importing every measure and design (pandas, scipy): `labelwise status`
# reads a few rows.  tests/cli/test_options.py checks them against the registries.
BUILTIN_MEASURES = (
    "accuracy", "balanced_accuracy", "precision", "recall", "mcc", "fowlkes_mallows", "brier", "f1", "fbeta:<beta>",
    "auc", "auc:<n_thresholds>", "pr_curve", "pr_curve:<n_thresholds>", "class_precision", "class_recall",
    "macro_f1", "micro_f1", "multilabel_micro_f1", "multilabel_macro_f1", "roc_curve", "roc_curve:<n_thresholds>",
)
BUILTIN_DESIGNS = ("ais", "importance", "oasis", "online-poisson", "passive", "poisson", "stratified")
MEASURES_HELP = "Comma-separated measure names, estimated together: " + ", ".join(BUILTIN_MEASURES) + "."
DESIGNS_HELP = "Sampling design: " + ", ".join(BUILTIN_DESIGNS) + ", or default (the one init picks for the pool)."

IdCol = Annotated[str, typer.Option("--id-col", help="Pool column holding the item ids.")]
PredCol = Annotated[
    str, typer.Option("--pred-col", help="Predicted-label column(s), comma-separated for several systems.")
]
ScoreCol = Annotated[str, typer.Option("--score-col", help="Score column(s), comma-separated for several systems.")]
ProbCol = Annotated[str, typer.Option("--prob-col", help="Probability column(s), comma-separated for several systems. "
                                      "A multi-class pool gives one column per class, in class order 0..C-1, system "
                                      "after system (e.g. --prob-col p_0,p_1,p_2 with one pred column).")]
MultiLabelOpt = Annotated[
    str | None,
    typer.Option("--multilabel", help="Multi-label pool: comma-separated label names; label NAME is read from the "
                 "columns <pred-col>_NAME, <prob-col>_NAME and <label-col>_NAME (e.g. pred_toxic)."),
]
MeasureOpt = Annotated[str | None, typer.Option(
    "--measure", "-m", help=MEASURES_HELP + " Default: f1 on a binary pool, macro_f1 on a multi-class pool, "
    "multilabel_micro_f1 on a multi-label pool.", show_default=False)]
DesignOpt = Annotated[str, typer.Option("--design", "-d", "--designs", help=DESIGNS_HELP)]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--param", "-p", help="Design parameter as key=value (repeatable), e.g. --param lam=0.9."),
]
SystemsOpt = Annotated[str, typer.Option("--systems", help="Systems to evaluate: an index, 'all' or a list like 0,2.")]
LevelOpt = Annotated[float, typer.Option("--level", help="Confidence level of the intervals.")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Random seed (the only source of randomness).")]
BatchOpt = Annotated[
    int, typer.Option("--batch-size", help="Labels per batch (adaptive designs update between batches).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


class UserError(ValueError):
    """A problem with the command line arguments themselves."""


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the library's user-facing exceptions into ``error: ...`` and exit code 1."""
    try:
        yield
    except BrokenPipeError:  # the reader went away (`| head`): click exits quietly, as Unix tools do
        raise
    except (ValueError, StoreError, OSError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(code=1) from None


def _split(value: str) -> list[str]:
    """The non-empty, stripped parts of a comma-separated option value."""
    return [part.strip() for part in value.split(",") if part.strip()]


def _column_arg(value: str, flag: str) -> str | list[str]:
    """One column name, or a list when the option ``flag`` names several (one per system, or per class and system),
    none empty.  A column may be named for several systems (``--prob-col prob,prob`` for two thresholds of one
    model); one system's class columns are checked for repeats where they are grouped
    (:func:`~labelwise.pool.class_columns.check_class_groups`)."""
    from ..pool.class_columns import split_columns

    parts = split_columns(value, flag)
    if not parts:
        raise UserError(f"{flag}: empty value {value!r}; give a column name")
    return parts[0] if len(parts) == 1 else parts


def pool_columns(id_col: str, pred_col: str, score_col: str, prob_col: str,
                 multilabel: str | None = None) -> dict[str, Any]:
    """Keyword arguments of :meth:`Pool.from_file` from the shared column flags.

    ``multilabel`` (``--multilabel``) names the labels of a multi-label pool;
    the pred/prob/label columns are then prefixes (see :meth:`Pool.from_dataframe`).
    """
    columns: dict[str, Any] = {
        "id_col": id_col,
        "pred_cols": _column_arg(pred_col, "--pred-col"),
        "score_cols": _column_arg(score_col, "--score-col"),
        "prob_cols": _column_arg(prob_col, "--prob-col"),
    }
    if multilabel is not None:
        names = _split(multilabel)
        if not names:
            raise UserError(f"--multilabel: expected label names like toxic,threat; got {multilabel!r}")
        columns["multilabel"] = names
    return columns


def session_path(positional: Path | None, option: Path | None, command: str) -> Path:
    """The session file a command creates, named as an argument or with ``--session``, whichever was given.

    Raises
    ------
    UserError
        Naming ``command`` when neither or two different files were given.
    """
    if positional is not None and option is not None and positional != option:
        raise UserError(f"{command}: the session file is given twice ({str(positional)!r} and --session "
                        f"{str(option)!r}); give it once")
    chosen = positional if positional is not None else option
    if chosen is None:
        raise UserError(f"{command}: give the session file to create, as an argument or with --session")
    return chosen


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
    """``"all"``, ``"1"`` or ``"0,2"`` as accepted by :func:`make_measure`."""
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
    """``level`` itself, or :class:`UserError` naming ``--level`` unless ``0 < level < 1``."""
    if not 0.0 < level < 1.0:
        raise UserError(f"--level: must lie strictly between 0 and 1, got {level}")
    return level


def check_positive(**values: int) -> None:
    """:class:`UserError` naming the option (``batch_size`` is ``--batch-size``) of any value below 1."""
    for name, value in values.items():
        if value < 1:
            raise UserError(f"--{name.replace('_', '-')}: must be at least 1, got {value}")


def check_budget_param(design: Design, budget: int | None) -> None:
    """:class:`UserError` for a design's ``--param budget`` other than ``--budget``, which a session plans its sample
    for (``poisson``'s ``budget`` would otherwise win in memory, and be ignored on an engine)."""
    planned = getattr(design, "budget", None)
    if planned is not None and budget is not None and planned != budget:
        raise UserError(f"--param budget={planned}: the session plans its sample for --budget ({budget}); drop the "
                        f"parameter and give --budget {planned}")


def design_options(name: str, params: Sequence[str] | None, pool: Pool,
                   measure: Measure | None = None) -> tuple[Design, str | None]:
    """A registered design (or ``default`` for ``pool`` and ``measure``) from its name and ``--param`` strings, and the
    oracle mode if one was given (``--param oracle=stochastic``: the mode is the session's, not the design's)."""
    from ..designs import make_design

    settings, oracle = design_settings(params)
    return make_design(name, pool, measure, **settings), oracle


def design_settings(params: Sequence[str] | None) -> tuple[dict[str, Any], str | None]:
    """``--param`` strings as design settings, and the oracle mode if one was among them."""
    settings = parse_params(params)
    return settings, settings.pop("oracle", None)


def describe_design(spec: dict[str, Any], multiclass: bool = False, scores: bool = True,
                    budget: int | None = None) -> str:
    """``name (key=value, ...)`` of a design's ``spec`` (:meth:`~labelwise.designs.Design.spec`), or just its name
    without parameters.

    On a ``multiclass`` pool the oracle model's ``calibration`` temperature-scales the class probabilities
    (:mod:`labelwise.oracle.temperature`), and without ``scores`` the score partition ranks the items by
    ``1 - p(class 0)`` (:meth:`~labelwise.Pool.primary_scores`): the settings say so.  A design that plans for a
    ``budget`` of labels and leaves it to the session (``poisson``'s ``budget=None``) shows the session's
    ``budget``, which it plans for.
    """
    if spec.get("budget", 0) is None:
        spec = {**spec, "budget": budget}
    shown = {k: str(v) for k, v in spec.items() if k != "design"}
    if multiclass and shown.get("calibration", "none") != "none":
        shown["calibration"] += " (on this multi-class pool: temperature scaling of the class probabilities)"
    if multiclass and shown.get("partition") == "score" and not scores:
        shown["partition"] += " (no score column: strata of 1 - p(class 0))"
    params = ", ".join(f"{k}={v}" for k, v in shown.items())
    return f"{spec['design']} ({params})" if params else spec["design"]
