"""``labelwise logs value|auc|calibrate``: evaluation from logs whose zero-reward rows were subsampled,
and ``labelwise calibrate SESSION``: a session's pool recalibrated from its design-weighted labels.

The method is that of Mineiro, "On the Unimportance of Zeroes", Machined
Learnings (blog, 2010) (:mod:`labelwise.logs`).  The ``--json`` outputs are
stable contracts: ``estimate``, ``lower``, ``upper``, ``level``, ``n_rows``,
``effective_size`` (``calibrate`` adds ``ece_before`` and ``ece_after``; ``labelwise calibrate`` also
``ece_after_cv``, ``prior_strength`` and ``certain_share`` per system).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import numpy as np
import typer

from .options import (
    JsonOpt,
    LevelOpt,
    UserError,
    check_level,
    check_positive,
    user_errors,
)
from .render import print_json, rich_console

if TYPE_CHECKING:
    import pandas as pd

    from ..logs import LogEstimate

__all__ = ["calibrate", "logs"]

logs = typer.Typer(name="logs", no_args_is_help=True,
                   help="Evaluate from logs whose zero-reward rows were subsampled at a known keep rate: policy "
                        "value, AUC and calibration.")

LogsArg = Annotated[Path, typer.Argument(help="Log rows: CSV (.csv, .csv.gz), TSV, JSON lines (.jsonl) or Parquet.")]
RewardCol = Annotated[str, typer.Option("--reward-col", help="Column of the observed reward (0 for no reward).")]
KeepRateCol = Annotated[str, typer.Option("--keep-rate-col", help="Column of each row's keep rate l in (0, 1]: "
                                          "the probability a zero-reward row was kept.")]
KeepRateOpt = Annotated[float | None, typer.Option("--keep-rate", help="One keep rate for every zero-reward row "
                                                   "(instead of a column); 1 when nothing was dropped.")]
MethodOpt = Annotated[str, typer.Option("--method", help="Calibration: spline (linear spline through weighted "
                                        "equal-count bins) or isotonic (weighted PAV).")]
BinsOpt = Annotated[int, typer.Option("--bins", help="Equal-count bins of the spline.")]


def _read_log(path: Path) -> pd.DataFrame:
    """The log's table, column names stripped and lower-cased; a missing or unreadable file is a user error."""
    from ..pool import PoolError
    from ..pool.table import read_table

    try:
        frame = read_table(path, kind="logs file")
    except PoolError as exc:
        raise UserError(str(exc)) from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    return frame


def _column(frame: pd.DataFrame, path: Path, name: str, option: str, numeric: bool = True) -> np.ndarray:
    """Column ``name`` of the log, every cell filled (and a number when ``numeric``)."""
    import pandas as pd

    key = name.strip().lower()
    if key not in frame.columns:
        raise UserError(f"{path}: no column {name!r} ({option}); the file has {', '.join(frame.columns)}")
    values = frame[key]
    if numeric:
        values = pd.to_numeric(values, errors="coerce")
    bad = values.isna().to_numpy()
    if bad.any():
        raise UserError(f"{_where(frame, path, int(np.argmax(bad)))}: column {key} is empty or not a number; "
                        "fix the value or drop the row")
    return values.to_numpy(dtype=float if numeric else None)


def _where(frame: pd.DataFrame, path: Path, row: int) -> str:
    """``file, data row N`` of the frame's ``row``-th row."""
    _, unit = frame.attrs.get("source", (str(path), "data row"))
    return f"{path}, {unit} {frame.index[row]}"


def _check_range(frame: pd.DataFrame, path: Path, column: str, values: np.ndarray, ok: np.ndarray,
                 rule: str) -> None:
    if not ok.all():
        row = int(np.argmax(~ok))
        raise UserError(f"{_where(frame, path, row)}: {column} is {values[row]:g}; {rule}")


def _keep_rates(frame: pd.DataFrame, path: Path, column: str, constant: float | None) -> np.ndarray:
    """Each row's keep rate: ``--keep-rate`` for all, else the keep-rate column, checked to lie in (0, 1]."""
    if constant is not None:
        if not 0 < constant <= 1:
            raise UserError(f"--keep-rate: must lie in (0, 1], got {constant:g}")
        return np.full(len(frame), constant)
    if column.strip().lower() not in frame.columns:
        raise UserError(f"{path}: no column {column!r} (--keep-rate-col); name the keep-rate column, or give "
                        "--keep-rate 1 if no row was dropped")
    rates = _column(frame, path, column, "--keep-rate-col")
    _check_range(frame, path, column, rates, (rates > 0) & (rates <= 1), "keep rates must lie in (0, 1]")
    return rates


def _check_file(out: Path) -> None:
    """``--out`` of the calibrate commands is a file: their report takes standard output."""
    from ..pool.writers import is_stdout

    if is_stdout(out):
        raise UserError(f"--out {str(out)!r}: calibrate prints its report on standard output; write the calibrated "
                        "table to a file (e.g. --out calibrated.csv)")


def _check_choice(option: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise UserError(f"{option}: {value!r} is not one of {', '.join(choices)}")


def _show(est: LogEstimate, title: str, as_json: bool, extra: dict | None = None) -> None:
    """The estimate as one JSON object or a table."""
    if as_json:
        print_json({**est.to_dict(), **(extra or {})})
        return
    from rich.table import Table

    table = Table(title=title)
    for name in ("estimate", "lower", "upper", "n rows", "effective size"):
        table.add_column(name, justify="right")
    table.add_row(f"{est.estimate:.4f}", f"{est.lower:.4f}", f"{est.upper:.4f}", str(est.n_rows),
                  f"{est.effective_size:.1f}")
    console = rich_console()
    console.print(table)
    console.print(f"{est.level:.0%} interval ({est.method}); standard error {est.std_error:.4g}"
                  + "".join(f"; {k.replace('_', ' ')} {v:.4f}" for k, v in (extra or {}).items()))


def _policy(frame: pd.DataFrame, path: Path, policy: str, as_prob: bool) -> np.ndarray:
    """The policy's action (or with ``as_prob`` its probability of the logged action) on every log row.

    ``policy`` names a column of the log, or a CSV/TSV/JSONL/Parquet file with one row per log row and a column
    ``action`` (``prob``), or a single column.
    """
    if policy.strip().lower() in frame.columns:
        return _column(frame, path, policy, "--policy", numeric=as_prob)
    policy_path = Path(policy)
    if not policy_path.is_file():
        raise UserError(f"--policy {policy!r}: neither a column of {path} nor a file; give a column name or "
                        "a CSV/TSV/JSONL/Parquet file with one row per log row")
    table = _read_log(policy_path)
    want = "prob" if as_prob else "action"
    if len(table) != len(frame):
        raise UserError(f"{policy_path}: {len(table)} rows but {path} has {len(frame)}; give one row per log row")
    if want not in table.columns and len(table.columns) != 1:
        raise UserError(f"{policy_path}: no column {want!r}; name it {want} or keep a single column")
    return _column(table, policy_path, want if want in table.columns else table.columns[0], "--policy", as_prob)


@logs.command("value")
def value_cmd(
    log_file: LogsArg,
    policy: Annotated[str, typer.Option("--policy", help="The new policy: a column of LOGS holding its action on "
                                        "each row, or a CSV/TSV/JSONL/Parquet file with an 'action' column (one row per "
                                        "log row).")],
    policy_prob: Annotated[bool, typer.Option("--policy-prob", help="The policy values are the new (stochastic) "
                                              "policy's probabilities of the logged action ('prob' column).")] = False,
    action_col: Annotated[str, typer.Option("--action-col", help="Column of the logged action.")] = "action",
    reward_col: RewardCol = "reward",
    propensity_col: Annotated[str, typer.Option("--propensity-col", help="Column of the logging policy's "
                                                "probability p(a|x) of the logged action.")] = "propensity",
    keep_rate_col: KeepRateCol = "keep_rate",
    keep_rate: KeepRateOpt = None,
    method: Annotated[str | None, typer.Option("--method", help="eta (normalized by the effective size), ht "
                                               "(Horvitz-Thompson: needs --n-logged or --n-dropped) or snips "
                                               "(self-normalized). Default: ht when the logged count is known, "
                                               "else eta.")] = None,
    n_logged: Annotated[int | None, typer.Option("--n-logged", help="Rows logged before subsampling.")] = None,
    n_dropped: Annotated[int | None, typer.Option("--n-dropped", help="Rows dropped by the subsampling.")] = None,
    clip: Annotated[float | None, typer.Option("--clip", help="Clip pi/p at this value.")] = None,
    level: LevelOpt = 0.95,
    as_json: JsonOpt = False,
) -> None:
    """Value of a new policy (its expected reward) from the log, with an interval."""
    from ..logs import POLICY_VALUE_METHODS, policy_value, target_probabilities

    with user_errors():
        check_level(level)
        _check_choice("--method", method, POLICY_VALUE_METHODS)
        frame = _read_log(log_file)
        reward = _column(frame, log_file, reward_col, "--reward-col")
        propensity = _column(frame, log_file, propensity_col, "--propensity-col")
        _check_range(frame, log_file, propensity_col, propensity, (propensity > 0) & (propensity <= 1),
                     "propensities must lie in (0, 1]: a logged action had a chance to be chosen")
        rates = _keep_rates(frame, log_file, keep_rate_col, keep_rate)
        chosen = _policy(frame, log_file, policy, policy_prob)
        if policy_prob:
            _check_range(frame, log_file, "policy probability", chosen, (chosen >= 0) & (chosen <= 1),
                         "probabilities must lie in [0, 1]")
            target = chosen
        else:
            target = target_probabilities(chosen, _column(frame, log_file, action_col, "--action-col",
                                                          numeric=False))
        est = policy_value(reward, propensity, target, rates, method=method, n_logged=n_logged,
                           n_dropped=n_dropped, clip=clip, level=level)
        _show(est, "policy value", as_json)


@logs.command("auc")
def auc_cmd(
    log_file: LogsArg,
    score_col: Annotated[str, typer.Option("--score-col", help="Column of the model's score.")] = "score",
    label_col: Annotated[str, typer.Option("--label-col", help="Column of the outcome (non-zero: positive).")] = "label",
    keep_rate_col: KeepRateCol = "keep_rate",
    keep_rate: KeepRateOpt = None,
    level: LevelOpt = 0.95,
    as_json: JsonOpt = False,
) -> None:
    """AUC of a score from the log, each kept negative weighted by 1/keep rate, with a weighted DeLong interval."""
    from ..logs import logged_auc

    with user_errors():
        check_level(level)
        frame = _read_log(log_file)
        score = _column(frame, log_file, score_col, "--score-col")
        label = _column(frame, log_file, label_col, "--label-col")
        rates = _keep_rates(frame, log_file, keep_rate_col, keep_rate)
        _show(logged_auc(score, label, rates, level), "AUC", as_json)


@logs.command("calibrate")
def calibrate_logs_cmd(
    log_file: LogsArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Write the log with a 'calibrated' column here "
                                      "(.csv, .tsv, .jsonl, .json or .parquet).", show_default=False)],
    score_col: Annotated[str, typer.Option("--score-col", help="Column of the raw estimate to calibrate.")] = "score",
    reward_col: RewardCol = "reward",
    keep_rate_col: KeepRateCol = "keep_rate",
    keep_rate: KeepRateOpt = None,
    method: MethodOpt = "spline",
    bins: BinsOpt = 20,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write a reliability diagram (PNG) here.")] = None,
    level: LevelOpt = 0.95,
    as_json: JsonOpt = False,
) -> None:
    """Calibrate a score to the expected reward, kept zero-reward rows counting 1/keep rate.

    The estimate is the mean reward of the logged rows (what the calibrated
    scores average to); ECEs are over the log, weighted.
    """
    from ..logs import (
        CALIBRATION_METHODS,
        expected_calibration_error,
        fit_calibration,
        keep_weights,
        policy_value,
        reliability_diagram,
    )
    from ..pool.readers import write_batch

    with user_errors():
        _check_file(out)
        check_level(level)
        check_positive(bins=bins)
        _check_choice("--method", method, CALIBRATION_METHODS)
        frame = _read_log(log_file)
        score = _column(frame, log_file, score_col, "--score-col")
        reward = _column(frame, log_file, reward_col, "--reward-col")
        rates = _keep_rates(frame, log_file, keep_rate_col, keep_rate)
        weight = keep_weights(reward, rates)
        calibrated = fit_calibration(score, reward, weight, method=method, n_bins=bins)(score)
        ones = np.ones_like(reward)
        est = policy_value(reward, ones, ones, rates, method="eta", level=level)
        eces = {"ece_before": expected_calibration_error(score, reward, weight),
                "ece_after": expected_calibration_error(calibrated, reward, weight)}
        write_batch(frame.assign(calibrated=calibrated), out)
        if plot is not None:
            reliability_diagram(plot, reward, {"before": score, "after": calibrated}, weight)
        _show(est, "mean reward of the log", as_json, eces)
        typer.echo(f"wrote {len(frame)} rows with a calibrated column to {str(out)!r}", err=True)


def calibrate(
    session: Annotated[Path, typer.Argument(help="Session file (from `labelwise init`).")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the pool with calibrated probabilities "
                                             "here (.csv, .tsv, .jsonl or .parquet, readable by `labelwise init`); "
                                             "required.", show_default=False)] = None,
    method: MethodOpt = "spline",
    bins: BinsOpt = 10,
    unweighted: Annotated[bool, typer.Option("--unweighted", help="Ignore the design weights (biased unless the "
                                             "design is passive).")] = False,
    shrink: Annotated[bool, typer.Option("--shrink/--no-shrink", help="Shrink each bin's rate toward its mean "
                                         "probability by as much as its labels allow (--no-shrink: the labels' "
                                         "mean, 0 in a bin without a positive).")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Recalibrate the pool's probabilities from the session's labels, each weighted by its design weight.

    Each bin's rate is the posterior given its labels under a prior centred
    on its mean probability: a bin whose few labels hold no positive keeps
    about its raw rate (--no-shrink: exactly 0). ECE after (5-fold) judges
    each label by a map fitted without it; ECE after is optimistic.
    """
    from ..logs import CALIBRATION_METHODS, calibrate_pool
    from ..logs.pool_calibration import check_calibratable
    from ..pool.readers import batch_frame, write_batch
    from ..session import Session

    with user_errors():
        if out is not None:
            _check_file(out)
        check_positive(bins=bins)
        _check_choice("--method", method, CALIBRATION_METHODS)
        with Session.open(session) as s:
            check_calibratable(s.pool)  # a pool calibrate cannot serve is refused before asking for --out
            if out is None:
                raise UserError("calibrate: give the file to write the calibrated pool to with --out (-o), e.g. "
                                "--out calibrated.csv")
            pool, report = calibrate_pool(s, method=method, n_bins=bins, weighted=not unweighted,
                                         shrink=shrink)
            n_labels = s.n_labels
        write_batch(batch_frame(pool, pool.item_ids).drop(columns="label"), out)
    if as_json:
        print_json({"n_labels": n_labels, "method": method, "weighted": not unweighted, "shrink": shrink,
                    "out": str(out), "systems": report})
        return
    from rich.table import Table

    table = Table(title=f"calibration from {n_labels} labels ({method}, "
                        f"{'unweighted' if unweighted else 'design-weighted'})")
    for name in ("system", "ECE before", "ECE after", "ECE after (5-fold)"):
        table.add_column(name, justify="right")
    for row in report:
        table.add_row(row["system"], f"{row['ece_before']:.4f}", f"{row['ece_after']:.4f}",
                      "n/a" if np.isnan(row["ece_after_cv"]) else f"{row['ece_after_cv']:.4f}")  # < 2 labels
    rich_console().print(table)
    typer.echo(f"wrote {pool.n_items} items with calibrated probabilities to {str(out)!r}", err=True)
    for row in report:
        if not shrink and row["certain_share"] > 0:  # shrunk, only the items the pool gave 0 or 1 have it
            typer.echo(f"warning: {row['system']}: {row['certain_share']:.0%} of the items now have probability "
                       "exactly 0 or 1 (calibration bins whose labels hold no positive or no negative); a design "
                       "or interval reading this pool takes them as certain, which the labels cannot show: "
                       "keep the original pool for `labelwise init` unless you trust that", err=True)
