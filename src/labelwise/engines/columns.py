"""Which columns of an engine pool's files hold the ids and the systems' outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..pool import PoolError
from ..pool.cells import show_value
from ..pool.ids import show_id
from ..pool.readers import DEFAULT_COLUMNS

__all__ = ["BINARY", "EngineColumns", "invalid_cells", "resolve_columns"]

#: Why an engine pool refuses a multi-class pool, and what to do instead.
BINARY = ("engine pools are binary (predictions 0 or 1, one probability p(y=1|x) per system): read a multi-class "
           "pool in memory, without --engine")

#: What an invalid cell of each kind of column is, and the fix.
_INVALID = {"id": ("empty", "give every item an id or drop those rows"),
            "pred": ("empty or not 0 or 1", "predictions must be 0 or 1: fix or drop those rows"),
            "prob": ("empty or outside [0, 1]", "probabilities must lie in [0, 1]: fix or drop those rows"),
            "score": ("empty, NaN or infinite", "scores must be finite numbers: fix or drop those rows"),
            "label": ("empty or not 0 or 1", "simulations read binary ground truth: fix or drop those rows")}


@dataclass(frozen=True)
class EngineColumns:
    """Column names of an engine pool (one per system for the outputs).

    Attributes
    ----------
    id : str
        Integer item ids (the shared hash draws by them).
    preds, probs, scores : tuple of str
        Binary predicted labels, probabilities ``p(y=1|x)`` and real-valued
        scores, one column per system (empty when absent).
    label : str or None
        Ground truth, used by simulations only.
    system_names : tuple of str
    """

    id: str
    preds: tuple[str, ...]
    probs: tuple[str, ...]
    scores: tuple[str, ...]
    label: str | None
    system_names: tuple[str, ...]

    @property
    def outputs(self) -> tuple[str, ...]:
        """Every output column."""
        return self.preds + self.probs + self.scores

    def options(self) -> dict:
        """The column options of :meth:`labelwise.Pool.from_dataframe` for rows read from the engine."""
        listed = lambda cols: list(cols) or None
        return {"id_col": self.id, "pred_cols": listed(self.preds), "prob_cols": listed(self.probs),
                "score_cols": listed(self.scores), "system_names": list(self.system_names)}

    def to_json(self) -> dict:
        """JSON-able form (stored in an engine session)."""
        return {"id": self.id, "preds": list(self.preds), "probs": list(self.probs), "scores": list(self.scores),
                "label": self.label, "system_names": list(self.system_names)}

    @classmethod
    def from_json(cls, data: dict) -> EngineColumns:
        """Inverse of :meth:`to_json`."""
        return cls(data["id"], tuple(data["preds"]), tuple(data["probs"]), tuple(data["scores"]), data["label"],
                   tuple(data["system_names"]))


#: the type names (DuckDB's and Spark's, lower case) of integer columns: the shared hash needs integer ids
INTEGER_TYPES = frozenset({"tinyint", "smallint", "integer", "int", "bigint", "hugeint", "utinyint", "usmallint",
                           "uinteger", "ubigint", "byte", "short", "long"})

#: the type names (DuckDB's and Spark's, lower case, without their precision) of the other numeric columns
_REAL_TYPES = frozenset({"float", "double", "real", "float4", "float8", "decimal", "numeric"})


def resolve_columns(available: Mapping[str, str], where: str, *, id_col: str = DEFAULT_COLUMNS["id"],
                    pred_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["pred"],
                    prob_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["prob"],
                    score_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["score"],
                    label_col: str | None = DEFAULT_COLUMNS["label"],
                    system_names: Sequence[str] | None = None) -> EngineColumns:
    """The :class:`EngineColumns` of a table whose columns are ``available`` (name to the engine's type name).

    A default column name (:data:`~labelwise.pool.readers.DEFAULT_COLUMNS`)
    that is absent is skipped; an explicitly named column that is absent is
    an error naming ``where`` (the files) and the available columns.

    Raises
    ------
    PoolError
    """
    have = set(available)

    def pick(arg, role: str) -> tuple[str, ...]:
        if arg is None:
            return ()
        names = (arg,) if isinstance(arg, str) else tuple(arg)
        missing = [n for n in names if n not in have]
        if missing and names == (DEFAULT_COLUMNS[role],):
            return ()
        if missing:
            raise PoolError(f"{where}: column(s) {missing} not found; available columns: {sorted(have)}. "
                            f"Pass the right name with --{role}-col")
        return names

    if id_col not in have:
        raise PoolError(f"{where}: no id column {id_col!r}; engine pools need integer item ids (the sample is "
                        f"drawn by them). Name it with --id-col; available columns: {sorted(have)}")
    if available[id_col].lower() not in INTEGER_TYPES:
        raise PoolError(f"{where}: id column {id_col!r} holds {available[id_col]} values; engine pools draw the "
                        "sample by integer item ids. Store the ids as integers (e.g. a row number, keeping the text "
                        "id in another column), or read a pool that fits in memory without --engine")
    preds, probs, scores = pick(pred_cols, "pred"), pick(prob_cols, "prob"), pick(score_cols, "score")
    for column in preds + probs + scores:
        kind = available[column].lower().split("(")[0]
        if kind not in INTEGER_TYPES | _REAL_TYPES and not (kind == "boolean" and column in preds):
            raise PoolError(f"{where}: column {column!r} holds {available[column]} values; engine pools read the "
                            "systems' outputs as numbers: store it as numbers (predictions 0 or 1, probabilities, "
                            "scores), or read a pool that fits in memory without --engine")
    others = len(preds) or len(scores)
    if others and len(probs) > others and len(probs) % others == 0:
        raise PoolError(f"{where}: {len(probs)} prob columns for {others} system(s), one per class; {BINARY}")
    n_systems = max(len(preds), len(probs), len(scores))
    if n_systems == 0:
        raise PoolError(f"{where}: no column of system outputs; expected pred, prob or score, found {sorted(have)}. "
                        "Name yours with --pred-col, --prob-col, --score-col")
    for kind, cols in (("pred", preds), ("prob", probs), ("score", scores)):
        if cols and len(cols) != n_systems:
            raise PoolError(f"{where}: {len(cols)} {kind} column(s) for {n_systems} systems; give one per system")
    if system_names is None:
        system_names = ("system",) if n_systems == 1 else tuple(f"system{s}" for s in range(n_systems))
    label = label_col if label_col in have else None
    return EngineColumns(id_col, preds, probs, scores, label, tuple(system_names))


def invalid_cells(where: str, column: str, kind: str, count: int, item_id, value, n_rows: int) -> str:
    """The message for ``count`` invalid cells of ``column`` (a kind of :func:`~labelwise.engines.sql.checked_columns`)
    among ``n_rows``, naming one of them, the item ``item_id`` whose cell holds ``value``; a class above 1 in a pred
    or label column says that engine pools are binary, and probabilities above 1 on most rows, up to 100 in the
    example, may be percentages (as pool files read in memory say, :func:`~labelwise.pool.cells.check_cells`)."""
    what, fix = _INVALID[kind]
    example = ""
    if kind != "id":
        example = f", e.g. item {show_id(item_id)} ({'empty' if pd.isna(value) else show_value(value)})"
        number = pd.to_numeric(value, errors="coerce")
        if kind in ("pred", "label") and np.isfinite(number) and float(number).is_integer() and number > 1:
            fix = BINARY
        if kind == "prob" and 1 < number <= 100 and count > n_rows / 2:
            fix = fix.replace("[0, 1]", "[0, 1] (percentages? divide them by 100)")
    return f"{where}: column {column!r} has {count} row(s) {what}{example}; {fix}"
