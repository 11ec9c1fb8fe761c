"""A new system's outputs for an existing pool: read from a predictions file, appended as a new column."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .core import Pool
from .errors import PoolError
from .ids import ids_from_text, match_pool_ids

__all__ = ["SystemOutputs", "read_system_outputs", "with_system"]

#: the output kinds of a system, as pool fields and as predictions-file columns
_KINDS = (("preds", "pred"), ("scores", "score"), ("probs", "prob"))


@dataclass(frozen=True)
class SystemOutputs:
    """One system's outputs aligned to a pool's items (``None`` for a kind not given)."""

    preds: np.ndarray | None = None
    scores: np.ndarray | None = None
    probs: np.ndarray | None = None


def read_system_outputs(path: str | Path, pool: Pool) -> SystemOutputs:
    """Read ``item_id,pred[,score|prob]`` from a CSV file, aligned to ``pool``'s items.

    Raises
    ------
    PoolError
        For a missing file or column, an id not in the pool, an id given
        twice, or pool items missing from the file (one error naming the
        file, how many are missing and one of them).
    """
    from ..ledger import show_id as show  # the ledger imports the pool package

    path = Path(path)
    if not path.is_file():
        raise PoolError(f"predictions file {str(path)!r} does not exist; check the path")
    try:
        df = pd.read_csv(path, dtype={"item_id": str})
    except (ValueError, pd.errors.ParserError) as exc:
        raise PoolError(f"predictions file {str(path)!r} could not be parsed: {exc}") from None
    needed = [c for c in ("item_id", "pred") if c not in df.columns]
    if needed:
        raise PoolError(f"predictions file {str(path)!r}: no column {needed[0]!r}; give columns item_id,pred and "
                        f"optionally score or prob (found {', '.join(map(str, df.columns))})")
    if df["item_id"].isna().any():
        row = int(np.argmax(df["item_id"].isna().to_numpy())) + 2  # the header is line 1
        raise PoolError(f"predictions file {str(path)!r}, line {row}: empty item_id; give every row an id")
    ids = match_pool_ids(ids_from_text(df["item_id"]), pool.item_ids)
    pos = pool.index.get_indexer(ids)
    if (pos < 0).any():
        raise PoolError(f"predictions file {str(path)!r}: {int((pos < 0).sum())} id(s) not in the session's pool, "
                        f"e.g. {show(ids[pos < 0][0])}; use the pool's item ids")
    seen = np.bincount(pos, minlength=pool.n_items)
    if (seen > 1).any():
        raise PoolError(f"predictions file {str(path)!r}: item {show(pool.item_ids[np.argmax(seen > 1)])} is given "
                        "more than once; keep one row per item")
    if (seen == 0).any():
        raise PoolError(f"predictions file {str(path)!r}: {int((seen == 0).sum())} pool item(s) missing, e.g. "
                        f"{show(pool.item_ids[np.argmax(seen == 0)])}; give a row for every item of the pool")
    columns = {}
    for field, column in _KINDS:
        if column in df.columns:
            values = df[column].to_numpy()
            if pd.isna(values).any():
                row = int(np.argmax(pd.isna(values))) + 2
                raise PoolError(f"predictions file {str(path)!r}, line {row}: empty {column}; give every item one")
            aligned = np.empty_like(values)
            aligned[pos] = values
            columns[field] = aligned
    return SystemOutputs(**columns)


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
            need = "gives" if have is not None else "does not give"
            raise PoolError(f"{column}: the pool {need} the systems' {field}; the new system must give the same "
                            f"outputs ({', '.join(c for f, c in _KINDS if getattr(pool, f) is not None)})")
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
