"""A batch file is not overwritten while it holds labels the session has not stored.

The annotation loop writes every batch to the same file (``labelwise next eval.lws --out batch.csv``, the
annotators fill in its label column, ``labelwise label eval.lws batch.csv``).  Running ``next`` again before
``label`` would replace the filled-in file with empty label cells: the annotators' work, lost without a word.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..pool import read_labels_file
from ..pool.ids import match_pool_ids, show_id
from .options import UserError

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["refuse_unstored_engine_labels", "refuse_unstored_labels"]


def refuse_unstored_labels(session: Session, session_path: Path, out: Path | None) -> None:
    """Raise :class:`UserError` if ``out`` is a batch file whose label column holds labels of items the session
    still waits for (they would be lost); anything else there (a file of other columns, labels already stored)
    may be overwritten."""
    def waiting(filled: pd.DataFrame) -> np.ndarray:
        if "draw" in filled.columns and filled["draw"].notna().all():  # a stochastic session's batch: by draw
            return np.isin(filled["draw"].to_numpy(), session.pending_draws)
        return np.isin(match_pool_ids(filled["item_id"].to_numpy(), session.pool.item_ids), session.pending)

    _refuse_waiting(out, session_path, waiting)


def refuse_unstored_engine_labels(pending: np.ndarray, session_path: Path, out: Path | None) -> None:
    """:func:`refuse_unstored_labels` for an engine session, whose items waiting for a label are the ids
    ``pending`` (integers)."""
    _refuse_waiting(out, session_path,
                    lambda filled: np.isin(pd.to_numeric(filled["item_id"], errors="coerce").to_numpy(), pending))


def _refuse_waiting(out: Path | None, session_path: Path, waiting_of) -> None:
    """Raise :class:`UserError` if the batch file ``out`` holds labels whose rows ``waiting_of`` marks."""
    if out is None or str(out) == "-" or not out.is_file():
        return
    try:
        filled = read_labels_file(out, skip_empty=True)
    except ValueError:  # not a batch file (no id or label column, ...): none of the session's labels to lose
        return
    waiting = waiting_of(filled)
    if waiting.any():
        row, item = int(filled.index[waiting][0]), filled["item_id"].to_numpy()[waiting][0]
        raise UserError(f"--out {str(out)!r} holds {int(waiting.sum())} label(s) not stored yet (data row {row}: "
                        f"item {show_id(item)}); store them first with `labelwise label {session_path} {out}`, "
                        "or write the batch to another --out")
