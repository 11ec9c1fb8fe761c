"""Checking the labels given to an engine session (:meth:`~labelwise.engines.session.EngineSession.add_labels`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..ledger import LabelError, show_label
from ..pool.ids import show_id

__all__ = ["new_labels"]


def new_labels(item_ids: np.ndarray, labels: np.ndarray, handed: np.ndarray, stored_ids: np.ndarray,
               stored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The labels of ``item_ids`` not stored yet, after checking them all.

    Parameters
    ----------
    item_ids, labels : ndarray, shape (n,)
        The labels given (as read from a file: ids and labels may be strings).
    handed : ndarray of int
        The items handed out so far.
    stored_ids, stored : ndarray of int
        The labels stored so far.

    Returns
    -------
    ids, labels : ndarray, shape (k,)
        The items without a stored label, in increasing id, and their labels.

    Raises
    ------
    LabelError
        Naming the first id that is not an integer or was not handed out, a
        label outside {0, 1}, or an item given two labels or one
        contradicting its stored label, with its place among the labels
        given (``index``).
    """
    ids = pd.to_numeric(pd.Series(item_ids), errors="coerce")
    fractional = (ids.isna() | (ids % 1 != 0)).to_numpy()  # "1.5" must not label item 1
    if fractional.any():
        at = int(np.argmax(fractional))
        raise LabelError(f"labels: id {show_id(item_ids[at])} is not an integer id of this pool", index=at)
    ids = ids.to_numpy(np.int64)
    values = pd.to_numeric(pd.Series(labels), errors="coerce").to_numpy()
    bad = ~np.isin(values, [0, 1])
    if bad.any():
        at = int(np.argmax(bad))
        raise LabelError(f"labels: label {show_label(labels[at])} of item {ids[at]} is not 0 or 1 (engine pools are "
                         "binary)", index=at)
    twice = pd.Series(values).groupby(ids).transform("nunique").to_numpy() > 1
    if twice.any():
        at = int(np.argmax(twice))
        raise LabelError(f"labels: item {ids[at]} has two different labels in the file; keep one", index=at)
    unknown = pd.Index(handed).get_indexer(ids) < 0
    if unknown.any():
        at = int(np.argmax(unknown))
        raise LabelError(f"labels: item {ids[at]} was not handed out by `labelwise next`; label the items of a batch",
                         index=at)
    before = pd.Series(stored, index=stored_ids).reindex(ids).to_numpy()
    clash = ~np.isnan(before) & (before != values)
    if clash.any():
        at = int(np.argmax(clash))
        raise LabelError(f"labels: item {ids[at]} already has label {int(before[at])}; a label once stored is kept",
                         index=at)
    fresh = np.isnan(before)
    fresh_ids, first = np.unique(ids[fresh], return_index=True)
    return fresh_ids, values[fresh][first]
