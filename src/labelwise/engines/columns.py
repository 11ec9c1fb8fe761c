"""Which columns of an engine pool's files hold the ids and the systems' outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..pool import PoolError
from ..pool.readers import DEFAULT_COLUMNS

__all__ = ["EngineColumns", "resolve_columns"]


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
    others = len(preds) or len(scores)
    if others and len(probs) > others and len(probs) % others == 0:
        raise PoolError(f"{where}: {len(probs)} prob columns for {others} system(s), one per class; engine pools are "
                        "binary (one probability p(y=1|x) per system): read a multi-class pool in memory, without "
                        "--engine")
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
