"""Pool, label and batch files: every file format labelwise reads or writes.

* Pool files: CSV (optionally gzipped), TSV or Parquet, one row per item
  (:func:`read_pool_file`), whose columns :func:`frame_fields` maps to the
  arrays of a :class:`~labelwise.pool.Pool`.
* Label files: CSV, TSV, JSONL (one object per line), Parquet or standard
  input with an id and a label per row (:func:`read_labels_file`).
* Every file is read by :func:`~labelwise.pool.table.read_table`, so every
  command takes the same formats, matches column names the same way
  (:func:`find_column`) and numbers rows the same way (data row 1 = the
  first row after the header).
* Batch files: the items proposed for labeling with the systems' outputs for
  context (:func:`batch_frame`), written as CSV, TSV, JSON lines or Parquet
  (:func:`write_batch`, i.e. :func:`~labelwise.pool.writers.write_table`).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .cells import check_cells, check_class_sums, source
from .class_columns import check_class_groups, class_column_names, classes_per_system
from .class_order import check_class_order
from .errors import PoolError
from .ids import ids_from_text, strip_ids
from .table import ROW, delimiter_of, read_delimited, read_table
from .writers import write_table

if TYPE_CHECKING:
    from .core import Pool

__all__ = [
    "DEFAULT_COLUMNS",
    "LabelFileError",
    "batch_frame",
    "find_column",
    "frame_fields",
    "read_labels_file",
    "read_pool_file",
    "write_batch",
]

#: Default column names of a pool file (those of the benchmark pools).
DEFAULT_COLUMNS = {"id": "item_id", "pred": "pred", "score": "score", "prob": "prob", "label": "label"}


class LabelFileError(ValueError):
    """A labels file that cannot be used; the message names the field and the fix."""


# ---------------------------------------------------------------- pool files
def read_pool_file(path: Path, id_col: str | None = None) -> pd.DataFrame:
    """The table of a pool file: CSV (optionally gzipped), TSV or Parquet (:func:`~labelwise.pool.table.read_table`).

    Parameters
    ----------
    path : Path
    id_col : str, optional
        Read as text from CSV/TSV, so ids keep leading zeros (see :func:`frame_fields`).

    Returns
    -------
    pandas.DataFrame
        Indexed by the line (text) or row (Parquet) of each item in the file.

    Raises
    ------
    PoolError
        Naming the file, the line and the fix.
    """
    return read_table(Path(path), id_col)


#: How each role's column(s) are named: the keyword of :meth:`~labelwise.pool.Pool.from_dataframe`, and the
#: command-line flag where there is one
_NAMED_BY = {"id": "--id-col on the command line, id_col= in Python",
             "label": "--label-col on the command line, label_col= in Python",
             "pred": "--pred-col on the command line, pred_cols= in Python",
             "score": "--score-col on the command line, score_cols= in Python",
             "prob": "--prob-col on the command line, prob_cols= in Python",
             "feature": "feature_cols= in Python"}


def find_column(df: pd.DataFrame, name: str):
    """The column of ``df`` called ``name``, else the one column that matches it but for case and surrounding
    spaces, else ``None``."""
    if name in df.columns:
        return name
    near = [c for c in df.columns if str(c).strip().casefold() == name.strip().casefold()]
    return near[0] if len(near) == 1 else None


def frame_fields(
    df: pd.DataFrame,
    *,
    id_col: str | None,
    pred_cols: str | Sequence[str] | None,
    score_cols: str | Sequence[str] | None,
    prob_cols: str | Sequence[str] | None,
    label_col: str | None,
    feature_cols: Sequence[str] | None,
    system_names: Sequence[str] | None,
    multilabel: Sequence[str] | None,
    n_classes: int | None = None,
) -> dict[str, Any]:
    """The pool fields held in the columns of ``df``.

    The column options are those of :meth:`labelwise.pool.Pool.from_dataframe`:
    one name or a list (one column per system); a default column name
    (:data:`DEFAULT_COLUMNS`) that is absent is skipped, an explicitly named
    column that is absent is an error.  Column names match regardless of
    case and surrounding spaces where no column matches exactly.  With
    ``multilabel``, the pred, prob and label options are prefixes of the
    columns ``<prefix>_<label name>``.  The values are checked
    (:func:`~labelwise.pool.cells.check_cells`) before they become arrays, so
    that a bad value is named by its line in the file; a pool with one
    probability column per system, a multi-label pool or ``n_classes=2`` is
    binary.  A multi-class pool's probabilities are one column per class
    and system, in class order, system after system
    (:mod:`~labelwise.pool.class_columns`).

    Returns
    -------
    dict
        ``item_ids``, ``preds``, ``scores``, ``probs``, ``labels``,
        ``features`` and ``system_names``: keyword arguments of
        :meth:`~labelwise.pool.Pool.from_arrays`, or, with ``multilabel``,
        of :meth:`~labelwise.pool.Pool.from_multilabel` together with
        ``label_names``.  ``system_names`` defaults to the first column
        option that lists several columns.

    Raises
    ------
    PoolError
        Naming the missing columns and the available ones, or the line and
        column of a bad value.
    """
    if df.empty and df.attrs.get("source"):
        raise PoolError(f"{source(df)} has no data rows, only column names; give one row per item")
    names = None if multilabel is None else [multilabel] if isinstance(multilabel, str) else list(multilabel)
    per_label = names is not None
    found = sorted(map(str, df.columns))

    def pick(role: str, arg, per_label=False):
        if arg is None:
            return None
        heads = [arg] if isinstance(arg, str) else list(arg)
        wanted = [f"{h}_{lab}" for h in heads for lab in names] if per_label else heads
        columns = [find_column(df, c) for c in wanted]
        missing = [w for w, c in zip(wanted, columns) if c is None]
        if missing:
            if isinstance(arg, str) and arg == DEFAULT_COLUMNS.get(role) and len(missing) == len(wanted):
                return None
            raise PoolError(
                f"{source(df)}: column(s) {missing} not found; available columns: {found}. "
                + ("Multi-label pools read one column <prefix>_<label> per label; pass the right prefix"
                   if per_label else "Pass the right name") + f" ({_NAMED_BY[role]})"
            )
        return columns

    def values(columns, per_label=False):
        if columns is None:
            return None
        out = df[columns].to_numpy()
        return out.reshape(len(df), -1, len(names)) if per_label else out

    use = {
        "id": pick("id", id_col),
        "label": pick("label", label_col, per_label),
        "pred": pick("pred", pred_cols, per_label),
        "score": pick("score", score_cols),
        "prob": pick("prob", prob_cols, per_label),
        "feature": pick("feature", list(feature_cols)) if feature_cols else None,
    }
    if use["pred"] is None and use["score"] is None and use["prob"] is None:
        expected = [DEFAULT_COLUMNS[k] for k in ("pred", "score", "prob")]
        raise PoolError(
            f"{source(df)}: no column of system outputs; expected {expected} (any case), found {found}. "
            "Name yours with the pred/score/prob column options (--pred-col, --score-col, --prob-col)"
        )
    per_class = None
    if per_label:
        n_classes, why = 2, "a multi-label pool's columns are per label"
    elif use["prob"] is not None:
        others = use["pred"] or use["score"]
        numbers = None if others is not None or n_classes is not None else (  # read by their sums
            df[use["prob"]].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float))
        per_class = classes_per_system(use["prob"], None if others is None else len(others), n_classes, source(df),
                                       numbers)
        listed = ", ".join(map(repr, use["prob"]))
        n_classes = per_class or 2
        why = (f"the probability columns give {per_class} classes ({listed}; list one per class, in class order)"
               if per_class else f"the pool is binary (its systems give one probability each, in {listed}; a "
               "multi-class pool gives one column per class" + (", each system's summing to 1 on every row"
                                                                  if others is None else "") + ")")
    else:
        why = f"n_classes is {n_classes}"
    if not per_label:
        _check_system_counts(df, use, per_class)
    check_cells(df, {role: columns for role, columns in use.items() if columns is not None}, n_classes, why)
    if per_class:
        check_class_groups(use["prob"], per_class, source(df))
        check_class_sums(df, use["prob"], per_class, by_sums=numbers is not None)
        if use["pred"] is not None:
            check_class_order(df, use["pred"], use["prob"], per_class)
    labels = values(use["label"], per_label)
    probs = values(use["prob"], per_label)
    fields: dict[str, Any] = {
        "item_ids": None if use["id"] is None else _ids(df[use["id"][0]]),
        "labels": None if labels is None else labels[:, 0],
        "features": values(use["feature"]),
        "preds": values(use["pred"], per_label),
        "scores": values(use["score"]),
        "probs": probs.reshape(len(df), -1, per_class) if per_class else probs,
        "system_names": system_names,
    }
    if system_names is None:  # the prob columns name the systems only when they are one per system
        for arg in (pred_cols, score_cols, None if per_class else prob_cols):
            if arg is not None and not isinstance(arg, str) and len(arg) > 1:
                fields["system_names"] = list(arg)
                break
    if per_label:
        fields["label_names"] = names
    return fields


def _check_system_counts(df: pd.DataFrame, use: dict[str, list | None], per_class: int | None) -> None:
    """Raise unless the pred, score and prob columns give as many systems each (``per_class`` prob columns per
    system when given), naming the columns and the option of the kind with fewer."""
    counts = {role: len(use[role]) // ((per_class or 1) if role == "prob" else 1)
              for role in ("pred", "score", "prob") if use[role] is not None}
    if len(set(counts.values())) <= 1:
        return
    few, most = min(counts, key=counts.__getitem__), max(counts, key=counts.__getitem__)
    listed = {role: ", ".join(map(repr, use[role])) for role in (few, most)}
    raise PoolError(f"{source(df)}: {counts[few]} {few} column(s) ({listed[few]}) for the {counts[most]} systems of "
                    f"the {most} columns ({listed[most]}); every system needs each kind of output the pool has: name "
                    f"one {few} column per system ({_NAMED_BY[few]}), or remove the {few} column(s) from the file")


def _ids(column: pd.Series) -> np.ndarray:
    """Ids as given: numbers as read, text kept as text (``00123`` stays ``00123``) unless plain integers."""
    return column.to_numpy() if pd.api.types.is_numeric_dtype(column) else ids_from_text(column)


# ---------------------------------------------------------------- label files
def read_labels_file(path: str | Path, id_col: str = "item_id", label_col: str = "label",
                     draw_col: str | None = "draw", skip_empty: bool = False) -> pd.DataFrame:
    """Read ``id_col`` and ``label_col`` from a file :func:`~labelwise.pool.table.read_table` reads (CSV, TSV,
    JSON lines, Parquet), or from standard input (``-``: CSV, TSV or JSON lines).

    Column names match as a pool file's do, regardless of case and surrounding
    spaces (:func:`find_column`), and ids lose surrounding spaces as a pool's
    do.  The result has columns ``item_id`` and ``label``, and ``draw`` when
    the file has a ``draw_col`` column (the draw numbers ``labelwise next``
    lists in a stochastic session; optional), indexed by data row (1 = the
    first row after the header).  With ``skip_empty`` rows without a label (a
    batch file partly filled in) are left out and counted in
    ``attrs["empty_labels"]``.

    Raises
    ------
    LabelFileError
        For a missing or empty file, an unknown format, missing columns, empty ids or empty labels.
    """
    path = Path(path)
    df = _labels_table(path, id_col)
    found = {role: find_column(df, name) for role, name in (("item_id", id_col), ("label", label_col))}
    missing = [name for name, column in zip((id_col, label_col), found.values()) if column is None]
    if missing:
        raise LabelFileError(
            f"labels file {str(path)!r}: missing column(s) {missing}; found {list(map(str, df.columns))}. "
            "Name the columns with --id-col/--label-col"
        )
    draw = None if draw_col is None else find_column(df, draw_col)
    if draw is not None:
        found["draw"] = draw
    df = df[list(found.values())].set_axis(list(found), axis=1)
    df["item_id"] = strip_ids(df["item_id"])
    empty_id = df["item_id"].isna() | (df["item_id"].astype(str) == "")
    if empty_id.any():
        raise LabelFileError(
            f"labels file {str(path)!r}: column {id_col!r} is empty on data row {df.index[empty_id.to_numpy()][0]}; "
            "give every label the id of its item or drop the row"
        )
    empty = df["label"].isna() | (df["label"].astype(str).str.strip() == "")
    if skip_empty:
        df = df[~empty.to_numpy()]
    _check_filled(df, path, "label", label_col, "fill in every label or drop the row")
    if draw is not None:
        _check_filled(df, path, "draw", draw_col, "keep the draw numbers `next` listed, or drop the column")
    df.attrs["empty_labels"] = int(empty.sum())
    return df


def _labels_table(path: Path, id_col: str) -> pd.DataFrame:
    """The table of a labels file (:func:`~labelwise.pool.table.read_table`) or of standard input (``-``: JSON
    lines when the first line is an object, else delimited text read as a file's is), indexed by data row."""
    if str(path) != "-":
        try:
            return read_table(path, id_col=id_col, kind="labels file")
        except PoolError as exc:
            raise LabelFileError(str(exc)) from None
    data = sys.stdin.buffer.read().removeprefix(b"\xef\xbb\xbf").lstrip()
    first = data.split(b"\n", 1)[0]
    if not first.strip():
        raise LabelFileError("labels from standard input: nothing was read; pipe a CSV, TSV or JSON-lines file "
                             "with a header line")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        row = data.count(b"\n", 0, exc.start)  # the header is data row 0
        raise LabelFileError(f"labels file '-', {f'{ROW} {row}' if row else 'the header'}: byte "
                             f"0x{data[exc.start]:02x} is not UTF-8 text; pipe UTF-8 (e.g. through iconv -f latin1 "
                             "-t utf-8)") from None
    try:
        if first.startswith(b"{"):
            df = pd.read_json(io.BytesIO(data), lines=True, dtype=False)
            df.index = pd.RangeIndex(1, len(df) + 1)
            return df
        return read_delimited(io.BytesIO(data), first, delimiter_of(first), id_col=id_col, what="labels file '-'")
    except PoolError as exc:
        raise LabelFileError(str(exc)) from None
    except ValueError as exc:
        raise LabelFileError(f"labels from standard input could not be parsed: {' '.join(str(exc).split())}") \
            from None


def _check_filled(df: pd.DataFrame, path: Path, column: str, name: str, fix: str) -> None:
    """``LabelFileError`` naming the first item whose ``column`` (called ``name`` in the file) is empty, and ``fix``."""
    if df[column].isna().any():
        first = df.loc[df[column].isna(), "item_id"].iloc[0]
        first = first.item() if isinstance(first, np.generic) else first
        raise LabelFileError(f"labels file {str(path)!r}: column {name!r} is empty for item {first!r}; {fix}")


# ---------------------------------------------------------------- batch files
def batch_frame(pool: Pool, ids: np.ndarray) -> pd.DataFrame:
    """Item ids plus the systems' predictions, scores and probabilities for context.

    Parameters
    ----------
    pool : Pool
    ids : ndarray
        Ids of the items of the batch.

    Returns
    -------
    pandas.DataFrame
        Columns ``item_id``, an empty ``label`` column to fill in, then
        ``pred``, ``score`` and ``prob`` for a single system, or
        ``pred_<system>``, ... for several; a multi-class pool's
        probabilities are ``prob_<class>`` (``prob_<system>_<class>``), one
        per class (:func:`~labelwise.pool.class_columns.class_column_names`),
        as the readers take them back.  A multi-label pool's probabilities
        are left out.
    """
    pos = pool.positions(ids)
    outputs = pool.outputs(pos)
    columns: dict[str, Any] = {"item_id": ids, "label": ""}
    single = pool.n_systems == 1
    for kind, arr in (("pred", outputs.preds), ("score", outputs.scores), ("prob", outputs.probs)):
        if arr is None or (arr.ndim == 3 and pool.label_names):
            continue  # a multi-label pool's probabilities are over its 2^C label sets; its files hold marginals
        for s, name in enumerate(pool.system_names):
            if arr.ndim == 2:
                columns[kind if single else f"{kind}_{name}"] = arr[:, s]
            else:
                columns |= dict(zip(class_column_names(kind, None if single else name, arr.shape[2]), arr[:, s].T))
    return pd.DataFrame(columns)


#: Writing a batch (or any table) is :func:`~labelwise.pool.writers.write_table`.
write_batch = write_table
