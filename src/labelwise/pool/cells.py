"""The values of a pool table, checked column by column, each problem named by file, data row and column.

:func:`check_cells` runs before a table's columns become a pool's arrays, so
that a bad value is reported where the user can find it: the data row of a
file (1 = the first row after the header) or the index label of a DataFrame
(see :mod:`~labelwise.pool.table`).  Every check is a vectorised
mask over a column; the first offending row is named, with the number of
others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .errors import PoolError

__all__ = ["ROLES", "SUM_TOLERANCE", "check_cells", "check_class_sums", "first_sum_off", "show_value", "source"]

#: What a column can hold: role -> (one value, several values).
ROLES = {
    "id": ("item id", "item ids"),
    "pred": ("prediction", "predictions"),
    "label": ("label", "labels"),
    "score": ("score", "scores"),
    "prob": ("probability", "probabilities"),
    "feature": ("feature", "features"),
}

#: How far a system's class probabilities may sum from 1 (rounding to four decimals stays within it up to 20 classes).
SUM_TOLERANCE = 1e-3

def source(df: pd.DataFrame) -> str:
    """``pool file 'x.csv'`` (or the file's kind, :func:`~labelwise.pool.table.read_table`) for a table read from a
    file, else ``pool``."""
    where = df.attrs.get("source")
    return f"{df.attrs.get('kind', 'pool file')} {where[0]!r}" if where else "pool"


def _unit(df: pd.DataFrame) -> str:
    """What the index of ``df`` counts: ``data row`` (a file) or ``index`` (a DataFrame)."""
    where = df.attrs.get("source")
    return where[1] if where else "index"


def _at(df: pd.DataFrame, row, column: str) -> str:
    """``pool file 'x.csv', data row 6, column 'pred'``."""
    return f"{source(df)}, {_unit(df)} {row}, column {column!r}"


def at_rows(df: pd.DataFrame, positions: np.ndarray, column: str) -> str:
    """``pool file 'x.csv', column 'item_id', data rows 2 and 9``: the rows at ``positions`` (the first five)."""
    rows = [str(row) for row in df.index[positions[:5]]]
    listed = ", ".join(rows[:-1]) + f" and {rows[-1]}" if len(rows) > 1 else rows[0]
    more = f" (and {len(positions) - 5} more)" if len(positions) > 5 else ""
    unit = _unit(df) + ("s" if len(rows) > 1 and _unit(df) == "data row" else "")
    return f"{source(df)}, column {column!r}, {unit} {listed}{more}"


def show_value(value) -> str:
    """A value as the user wrote it: ``2`` rather than ``2.0``, strings quoted."""
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, str) else str(value)


def _first(df: pd.DataFrame, column: str, bad: np.ndarray, problem: str, fix: str) -> None:
    """Raise naming the first row of ``bad`` (if any), its value and how many rows share the problem."""
    if not bad.any():
        return
    rows = np.flatnonzero(bad)
    value = df[column].iloc[rows[0]]
    more = f" (and {len(rows) - 1} more row{'s' if len(rows) > 2 else ''})" if len(rows) > 1 else ""
    raise PoolError(f"{_at(df, df.index[rows[0]], column)}: {problem.format(value=show_value(value))}{more}; {fix}")


def _numbers(df: pd.DataFrame, column: str, role: str) -> np.ndarray:
    """The column as floats; empty cells and text that is not a number raise."""
    raw = df[column]
    _first(df, column, raw.isna().to_numpy(), "is empty (or NaN)",
           f"fill in every item's {ROLES[role][0]} or drop the row")
    values = raw if pd.api.types.is_numeric_dtype(raw) else pd.to_numeric(raw, errors="coerce")
    bad = values.isna().to_numpy()
    comma = raw.astype(str).str.fullmatch(r"-?\d*,\d+").to_numpy(dtype=bool) if bad.any() else bad
    _first(df, column, bad & comma, "{value} is not a number", "write decimals with a point (0.5, not 0,5)")
    classes = " (classes 0..C-1: write each class name as its number)" if role in ("pred", "label") else ""
    _first(df, column, bad, "{value} is not a number", f"{ROLES[role][1]} must be numbers{classes}")
    return values.to_numpy(dtype=float, na_value=np.nan)


def _check_classes(df: pd.DataFrame, column: str, values: np.ndarray, role: str, n_classes: int | None,
                   why: str) -> None:
    """Whole numbers 0..C-1; with ``n_classes`` (``why`` says where it comes from) below it."""
    _first(df, column, ~np.isfinite(values) | (values != np.round(values)) | (values < 0),
           "value {value} is not a class", f"{ROLES[role][1]} must be whole numbers 0..C-1 (0 or 1 for a binary pool)")
    if n_classes is not None:
        allowed = "0 or 1" if n_classes == 2 else f"0..{n_classes - 1}"
        fix = ": correct the label in the file" if role == "label" else ""
        _first(df, column, values >= n_classes, f"value {{value}} is not {allowed}",
               f"{why}, so {ROLES[role][1]} must be {allowed}{fix}")


def check_cells(df: pd.DataFrame, columns: Mapping[str, Sequence[str]], n_classes: int | None = None,
                why: str = "") -> None:
    """Check the values of the columns of ``df`` that a pool is built from.

    Parameters
    ----------
    df : pandas.DataFrame
        A pool table (its index locates rows in the file, :mod:`~labelwise.pool.table`).
    columns : mapping
        Role (a key of :data:`ROLES`) -> the columns holding it.
    n_classes : int, optional
        Size of the label set when it is known before the values are read
        (2 for a pool with one probability column per system or a
        multi-label pool); predictions and labels must lie below it.
    why : str
        Why the label set has that size, for the message.

    Raises
    ------
    PoolError
        Naming the file, the line (or row) and column of the first bad
        value, the value, and the fix: empty ids, empty cells, text where a number belongs, infinite values, predictions and
        labels that are not classes (or outside the label set), and
        probabilities outside [0, 1].
    """
    for column in columns.get("id", ()):  # duplicates are found on the arrays (checks.py), at a tenth of the cost
        _first(df, column, df[column].isna().to_numpy(), "is empty", "give every item an id or drop the row")
    for role in ("pred", "label", "score", "prob", "feature"):
        for column in columns.get(role, ()):
            values = _numbers(df, column, role)
            if role in ("pred", "label"):
                _check_classes(df, column, values, role, n_classes, why)
                continue
            _first(df, column, ~np.isfinite(values), "value {value} is infinite", f"{ROLES[role][1]} must be finite")
            if role == "prob":
                percent = np.mean(values > 1) > 0.5 and 0 <= values.min() and values.max() <= 100
                _first(df, column, (values < 0) | (values > 1), "value {value} is outside [0, 1]",
                       "probabilities must lie in [0, 1]" + (" (percentages? divide them by 100)" if percent else ""))


def first_sum_off(probs: np.ndarray, unit: str) -> tuple[int, int, float, str] | None:
    """Where class probabilities ``(N, S, C)`` first sum farther from 1 than :data:`SUM_TOLERANCE`: the row, its
    first such system, that sum and `` (and k more <unit>s)`` for the other rows off; ``None`` when none is.
    Shared by the checks of files (:func:`check_class_sums`) and of arrays
    (:func:`~labelwise.pool.checks.check_fields`)."""
    sums = probs.sum(axis=2)
    bad = np.abs(sums - 1.0) > SUM_TOLERANCE
    if not bad.any():
        return None
    row, system = np.argwhere(bad)[0]
    rows = int(bad.any(axis=1).sum())
    more = f" (and {rows - 1} more {unit}{'s' if rows > 2 else ''})" if rows > 1 else ""
    return int(row), int(system), float(sums[row, system]), more


def check_class_sums(df: pd.DataFrame, columns: Sequence[str], n_classes: int, by_sums: bool = False) -> None:
    """Check that each system's class probabilities sum to 1 on every row, within :data:`SUM_TOLERANCE`.

    Parameters
    ----------
    df : pandas.DataFrame
        A pool table whose ``columns`` passed :func:`check_cells`.
    columns : sequence of str
        ``n_classes`` columns per system, in class order 0..C-1, system after system.
    n_classes : int
    by_sums : bool
        The columns were read as class probabilities because they sum to 1 on most rows, there being no pred or
        score columns (:func:`~labelwise.pool.class_columns.summing_groups`): the message says so and how to have
        them read as binary systems' probabilities.

    Raises
    ------
    PoolError
        Naming the file, the first row and the system's columns whose probabilities do not sum to 1, how many
        other rows do not, and the fix.
    """
    off = first_sum_off(df[list(columns)].to_numpy(dtype=float).reshape(len(df), -1, n_classes), "row")
    if off is None:
        return
    row, system, total, more = off
    group = ", ".join(map(repr, columns[system * n_classes:(system + 1) * n_classes]))
    binary = (f" (read so because they sum to 1 on most rows and there are no pred or score columns; if each is a "
              f"binary system's p(y=1), name the systems' predictions with --pred-col or their scores with "
              f"--score-col, e.g. --score-col {','.join(columns)})" if by_sums else "")
    raise PoolError(
        f"{source(df)}, {_unit(df)} {df.index[row]}, columns {group}: the probabilities sum to "
        f"{total:.6g}, not 1{more}; the {len(columns)} probability columns are read as "
        f"{n_classes} per system, one per class in class order 0..{n_classes - 1}{binary}, and must sum to 1 (within "
        f"{SUM_TOLERANCE:g}; write them with four decimals or more): give every class its column, or normalise "
        f"each row"
    )
