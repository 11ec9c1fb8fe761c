"""A new system's outputs for an existing pool: read from a predictions file, appended as a new column."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .cells import ROLES, check_cells, check_class_sums, source
from .class_columns import check_class_groups, class_column_names, split_columns
from .class_order import check_class_order
from .core import Pool
from .errors import PoolError
from .ids import ids_from_text, match_pool_ids, show_id
from .table import ROW, read_table

__all__ = ["SystemOutputs", "read_system_outputs", "with_system"]

#: the output kinds of a system, as pool fields and as predictions-file columns
_KINDS = (("preds", "pred"), ("scores", "score"), ("probs", "prob"))


@dataclass(frozen=True)
class SystemOutputs:
    """One system's outputs aligned to a pool's items (``None`` for a kind not given)."""

    preds: np.ndarray | None = None
    scores: np.ndarray | None = None
    probs: np.ndarray | None = None


def read_system_outputs(path: str | Path, pool: Pool, columns: dict[str, str] | None = None) -> SystemOutputs:
    """Read a new system's ids and outputs from a file :func:`~labelwise.pool.table.read_table` reads (CSV, TSV,
    JSON lines, Parquet), aligned to ``pool``'s items.

    Parameters
    ----------
    path : str or Path
    pool : Pool
    columns : dict, optional
        The file's column of each role (``id``, ``pred``, ``score``, ``prob``), matched as a pool file's
        (:func:`~labelwise.pool.readers.find_column`); default: ``item_id``, ``pred``, ``score``, ``prob``.
        ``id`` is required, and ``pred`` when the pool's systems give predictions; ``score`` and ``prob`` are read
        when present.  For a pool with class probabilities ``prob`` is one column per class, in class order,
        comma-separated (``"p_0,p_1,p_2"``; :mod:`~labelwise.pool.class_columns`).

    Raises
    ------
    PoolError
        For a missing file or column, an id not in the pool, an id given
        twice, pool items missing from the file (one error naming the
        file, how many are missing and one of them), a value that is not a
        number, a prediction outside the pool's label set, a probability
        outside [0, 1] or an infinite score (naming the data row and the
        column, :func:`~labelwise.pool.cells.check_cells`), or class
        probabilities in the wrong number of columns, not summing to 1 or
        not in class order (:func:`~labelwise.pool.class_order.check_class_order`).
    """
    from .readers import DEFAULT_COLUMNS, find_column

    path = Path(path)
    name = repr(str(path))
    wanted = {role: DEFAULT_COLUMNS[role] for role in ("id", "pred", "score", "prob")} | (columns or {})
    df = read_table(path, id_col=wanted["id"], kind="predictions file")
    found = {role: find_column(df, column) for role, column in wanted.items() if role != "prob"}
    found["prob"] = _prob_columns(df, wanted["prob"], pool)
    _drop_unasked(df, found, wanted, pool)
    for role in ("id", "pred") if pool.preds is not None else ("id",):
        if found[role] is None:
            raise PoolError(f"predictions file {name}: no column {wanted[role]!r} (--{role}-col); give columns "
                            f"{wanted['id']},{wanted['pred']} and optionally {wanted['score']} or {wanted['prob']} "
                            f"(found {', '.join(map(str, df.columns))})")
    _require_kinds(df, found, wanted, pool)
    empty = df[found["id"]].isna().to_numpy()
    if empty.any():
        raise PoolError(f"predictions file {name}, {ROW} {df.index[empty][0]}: empty {wanted['id']}; give every row "
                        "an id")
    ids = match_pool_ids(ids_from_text(df[found["id"]]), pool.item_ids)
    pos = pool.index.get_indexer(ids)
    if (pos < 0).any():
        raise PoolError(f"predictions file {name}: {int((pos < 0).sum())} id(s) not in the session's pool, "
                        f"e.g. {show_id(ids[pos < 0][0])}; use the pool's item ids")
    seen = np.bincount(pos, minlength=pool.n_items)
    if (seen > 1).any():
        raise PoolError(f"predictions file {name}: item {show_id(pool.item_ids[np.argmax(seen > 1)])} is given "
                        "more than once; keep one row per item")
    if (seen == 0).any():
        raise PoolError(f"predictions file {name}: {int((seen == 0).sum())} pool item(s) missing, e.g. "
                        f"{show_id(pool.item_ids[np.argmax(seen == 0)])}; give a row for every item of the pool")
    outputs = {}
    for field, role in _KINDS:
        if found[role] is not None:
            values = df[found[role]].to_numpy()
            empty = pd.isna(values).reshape(len(df), -1).any(axis=1)
            if empty.any():
                raise PoolError(f"predictions file {name}, {ROW} {df.index[empty][0]}: empty {wanted[role]}; give "
                                "every item one")
            columns = found[role] if isinstance(found[role], list) else [found[role]]
            check_cells(df, {role: columns}, pool.n_classes, _why(pool))
            if isinstance(found[role], list):  # one column per class (_prob_columns)
                check_class_sums(df, found[role], len(found[role]))
            aligned = np.empty_like(values)
            aligned[pos] = values
            outputs[field] = aligned
    if isinstance(found["prob"], list) and found["pred"] is not None:
        check_class_order(df, [found["pred"]], found["prob"], len(found["prob"]), _python_form)
    return SystemOutputs(**outputs)


def _python_form(columns: list[str]) -> str:
    """How :func:`~labelwise.session_systems.add_system_file` takes the class columns, for messages."""
    return f"add_system_file(session, path, columns={{'prob': {','.join(columns)!r}}})"


def _drop_unasked(df: pd.DataFrame, found: dict, wanted: dict[str, str], pool: Pool) -> None:
    """Forget a column of a kind of output the pool's systems do not give when it has its default name (a ``pred``
    column beside the class probabilities of a pool without predictions); raise for one the user named."""
    from .readers import DEFAULT_COLUMNS

    for field, role in _KINDS:
        if getattr(pool, field) is None and found[role] is not None:
            if wanted[role] == DEFAULT_COLUMNS[role]:
                found[role] = None
                continue
            given = {f: ROLES[r][1] for f, r in _KINDS if getattr(pool, f) is not None}
            raise PoolError(f"{source(df)}: column {wanted[role]!r} (--{role}-col) holds {ROLES[role][1]}, which "
                            f"the pool's systems do not give (they give {' and '.join(given.values())}); the new "
                            f"system must give the same outputs: drop --{role}-col")


def _require_kinds(df: pd.DataFrame, found: dict, wanted: dict[str, str], pool: Pool) -> None:
    """Raise, naming the file's columns, when it lacks a kind of output the pool's systems give (a binary pool
    with scores and probabilities takes either, :func:`with_system`)."""
    have = {role for role, column in found.items() if column is not None}
    missing = [role for field, role in _KINDS[1:] if getattr(pool, field) is not None and role not in have]
    either = pool.n_classes == 2 and pool.scores is not None and pool.probs is not None
    if not missing or either and {"score", "prob"} & have:
        return
    listed = f"the file has columns {', '.join(map(str, df.columns))}"
    if either and len(missing) == 2:
        raise PoolError(f"{source(df)}: no column {wanted['score']!r} or {wanted['prob']!r}; the pool's systems give "
                        "scores and probabilities, so the new system must give one of them: name its column with "
                        f"--score-col or --prob-col; {listed}")
    role = missing[0]
    what = ROLES[role][1]
    ask = (f"name its columns, one per class in class order 0..{pool.n_classes - 1}, with --prob-col (e.g. "
           f"--prob-col {','.join(class_column_names('p', None, pool.n_classes))})"
           if role == "prob" and pool.probs.ndim == 3 else f"name its column with --{role}-col")
    raise PoolError(f"{source(df)}: no column {wanted[role]!r} for the new system's {what}; the pool's systems give "
                    f"{what}, so the new system must too: {ask}; {listed}")


def _why(pool: Pool) -> str:
    """Why the new system's predictions must lie in the pool's label set, for the message."""
    return ("the session's pool is binary" if pool.n_classes == 2
            else f"the session's pool has {pool.n_classes} classes")


def _prob_columns(df: pd.DataFrame, wanted: str, pool: Pool) -> str | list[str] | None:
    """The probability column of a binary pool's new system, or the class columns (``wanted`` comma-separated) of a
    pool with class probabilities; ``None`` when the file has none.

    Raises
    ------
    PoolError
        For class columns named but missing, or not one per class of the pool.
    """
    from .readers import DEFAULT_COLUMNS, find_column

    if pool.probs is None or pool.probs.ndim != 3 or pool.label_names:
        return find_column(df, wanted)
    try:
        names = split_columns(wanted, "--prob-col")
    except PoolError as exc:
        raise PoolError(f"{source(df)}: {exc}") from None
    check_class_groups(names, len(names), source(df))
    found = [find_column(df, c) for c in names]
    missing = [n for n, c in zip(names, found) if c is None]
    if names == [DEFAULT_COLUMNS["prob"]] and missing:
        return None  # the default column absent: with_system says what the pool's systems give
    n_classes = pool.probs.shape[2]
    example = ",".join(class_column_names("p", None, n_classes))
    if missing or len(names) != n_classes:
        problem = f"no column(s) {missing}" if missing else f"{len(names)} probability column(s) {names}"
        raise PoolError(f"{source(df)}: {problem}; the pool's systems give {n_classes} class probabilities each: "
                        f"give one column per class, in class order 0..{n_classes - 1} (--prob-col {example}); the "
                        f"file has columns {', '.join(map(str, df.columns))}")
    return found


def with_system(pool: Pool, name: str, outputs: SystemOutputs) -> Pool:
    """``pool`` with one more system, ``name``, whose outputs are ``outputs`` (checked like the pool's).

    The new system must give every kind of output the pool's systems have
    (predictions, scores, probabilities) and no other, except that of a
    binary pool with both scores and probabilities it may give one: its
    probabilities serve as its scores, and scores within [0, 1] as its
    probabilities.

    Raises
    ------
    PoolError
        For a name already used, a multi-label pool, missing or extra kinds
        of output, and outputs the pool's checks reject.
    """
    if not name or name in pool.system_names:
        raise PoolError(f"system name {name!r}: the pool's systems are {', '.join(pool.system_names)}; "
                        "choose a new, non-empty name")
    if pool.label_names:
        raise PoolError("adding a system to a multi-label pool is not supported")
    if pool.scores is not None and pool.probs is not None and pool.n_classes == 2:
        outputs = _one_for_the_other(outputs)
    columns = {}
    for field, column in _KINDS:
        have, new = getattr(pool, field), getattr(outputs, field)
        if (have is None) != (new is None):
            differ = (f"gives no {field}, which the pool's systems give" if have is not None
                      else f"gives {field}, which the pool's systems do not")
            per_class = "" if have is None or have.ndim != 3 else (
                "; its probabilities are one column per class, in class order (--prob-col "
                f"{','.join(class_column_names('p', None, have.shape[2]))})")
            raise PoolError(f"the new system {differ}; it must give the same outputs as they do "
                            f"({', '.join(c for f, c in _KINDS if getattr(pool, f) is not None)}){per_class}")
        if have is not None:
            new = np.asarray(new)
            if new.shape[0] != pool.n_items:
                raise PoolError(f"{column}: {new.shape[0]} values for a pool of {pool.n_items} items; give one per "
                                "item, in the pool's order")
            columns[field] = np.concatenate([have, new.reshape(new.shape[:1] + (1,) + new.shape[1:])], axis=1)
    return Pool.from_arrays(pool.item_ids, **columns, labels=pool.labels, features=pool.features,
                            system_names=[*pool.system_names, name], n_classes=pool.n_classes, name=pool.name)


def _one_for_the_other(outputs: SystemOutputs) -> SystemOutputs:
    """Binary outputs with probabilities as scores when scores are missing, and scores within [0, 1] as
    probabilities when probabilities are missing."""
    scores, probs = outputs.scores, outputs.probs
    if scores is None and probs is not None:
        return SystemOutputs(outputs.preds, probs, probs)
    if probs is None and scores is not None:
        values = np.asarray(scores, dtype=float)
        if np.all((values >= 0) & (values <= 1)):
            return SystemOutputs(outputs.preds, scores, values)
    return outputs
