"""Checking the labels given to an engine session (:meth:`~labelwise.engines.session.EngineSession.add_labels`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

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
    ValueError
        Naming the first id that is not an integer or was not handed out, a
        label outside {0, 1}, or an item given two labels or one
        contradicting its stored label.
    """
    ids = pd.to_numeric(pd.Series(item_ids), errors="coerce")
    fractional = ids.isna() | (ids % 1 != 0)  # "1.5" must not label item 1
    if fractional.any():
        raise ValueError(f"labels: id {item_ids[int(np.flatnonzero(fractional)[0])]!r} is not an integer id "
                         "of this pool")
    ids = ids.to_numpy(np.int64)
    values = pd.to_numeric(pd.Series(labels), errors="coerce").to_numpy()
    bad = ~np.isin(values, [0, 1])
    if bad.any():
        raise ValueError(f"labels: label {labels[int(np.flatnonzero(bad)[0])]!r} of item {ids[bad][0]} is not "
                         "0 or 1")
    twice = pd.Series(values).groupby(ids).nunique() > 1
    if twice.any():
        raise ValueError(f"labels: item {twice.index[twice.to_numpy()][0]} has two different labels in the file; "
                         "keep one")
    unknown = ids[pd.Index(handed).get_indexer(ids) < 0]
    if unknown.size:
        raise ValueError(f"labels: item {unknown[0]} was not handed out by `labelwise next`; label the items "
                         "of a batch")
    before = pd.Series(stored, index=stored_ids).reindex(ids).to_numpy()
    clash = ~np.isnan(before) & (before != values)
    if clash.any():
        raise ValueError(f"labels: item {ids[clash][0]} already has label {int(before[clash][0])}; "
                         "a label once stored is kept")
    fresh = np.isnan(before)
    fresh_ids, first = np.unique(ids[fresh], return_index=True)
    return fresh_ids, values[fresh][first]
