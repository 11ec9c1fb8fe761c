"""Validation of the arrays of a pool: one message per problem, naming the field and the fix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .cells import SUM_TOLERANCE, first_sum_off
from .errors import DuplicateIdsError, PoolError
from .ids import as_item_ids, show_id

__all__ = ["check_fields"]


def _as_2d(name: str, values, n: int | None) -> np.ndarray | None:
    """``values`` as ``(n, S)`` (a 1-d array is one system), or ``None``."""
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise PoolError(f"{name}: expected shape (n_items,) or (n_items, n_systems), got {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise PoolError(f"{name}: has {arr.shape[0]} rows but the pool has {n} items; give one row per item")
    return arr


def _floats(name: str, values) -> np.ndarray:
    """``values`` as a float array; text that is not a number raises, naming the first such value."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        if "inhomogeneous" in str(exc):
            raise PoolError(f"{name}: rows of different lengths; give one value per item and system") from None
        flat = pd.Series(np.asarray(values, dtype=object).ravel())
        bad = (pd.to_numeric(flat, errors="coerce").isna() & flat.notna()).to_numpy()
        raise PoolError(f"{name}: {int(bad.sum())} value(s) are not numbers (first: {flat[np.argmax(bad)]!r}); "
                        "convert them to numbers first (e.g. pandas.to_numeric)") from None


def _check_ids(item_ids, n: int) -> tuple[np.ndarray, pd.Index]:
    """Unique item ids (``0..n-1`` by default; :func:`~labelwise.pool.ids.as_item_ids`) and their index."""
    ids = np.arange(n) if item_ids is None else np.asarray(item_ids)
    if ids.ndim != 1:
        raise PoolError(f"item_ids: expected a 1-d array, got shape {ids.shape}")
    ids = as_item_ids(ids)
    index = pd.Index(ids)
    if not index.is_unique:
        repeated = index.duplicated()
        dup = index[repeated].unique()
        positions = np.flatnonzero(index == dup[0])
        raise DuplicateIdsError(f"item_ids: duplicate ids {dup[:5].tolist()}; every item needs a unique id",
                                positions, len(dup))
    return ids, index


def _check_system_names(system_names: Sequence[str] | None, n_sys: int) -> tuple[str, ...]:
    """One unique name per system (``system`` or ``system0, system1, ...`` by default)."""
    if system_names is None:
        system_names = ("system",) if n_sys == 1 else tuple(f"system{s}" for s in range(n_sys))
    system_names = tuple(str(s) for s in system_names)
    if len(system_names) != n_sys:
        raise PoolError(f"system_names: {len(system_names)} names for {n_sys} systems; give one per system")
    if len(set(system_names)) != n_sys:
        raise PoolError(f"system_names: duplicate names in {system_names}")
    return system_names


def _check_class_sums(probs: np.ndarray, ids: np.ndarray, system_names: tuple[str, ...]) -> None:
    """Each system's class probabilities ``(N, S, C)`` sum to 1 for every item, within
    :data:`~labelwise.pool.cells.SUM_TOLERANCE` (as a pool file's must)."""
    off = first_sum_off(probs, "item")
    if off is None:
        return
    item, system, total, more = off
    raise PoolError(
        f"probs: item {show_id(ids[item])}, system {system_names[system]!r}: the {probs.shape[2]} class "
        f"probabilities sum to {total:.6g}, not 1{more}; each system's probabilities over the classes "
        f"must sum to 1 (within {SUM_TOLERANCE:g}): give every class its probability, in class order, or normalise "
        "them (probs / probs.sum(axis=-1, keepdims=True))"
    )


def check_fields(
    item_ids,
    preds,
    scores,
    probs,
    labels,
    features,
    system_names: Sequence[str] | None,
    n_classes: int | None,
) -> dict[str, Any]:
    """Validate and normalise the arrays of a pool.

    Parameters
    ----------
    item_ids, preds, scores, probs, labels, features, system_names, n_classes
        As in :meth:`labelwise.pool.Pool.from_arrays`.

    Returns
    -------
    dict
        The fields of a :class:`~labelwise.pool.Pool` but its name:
        ``item_ids``, ``preds``, ``scores`` and ``probs`` as ``(N, S)``
        arrays (``probs`` ``(N, S, C)`` for multi-class pools), ``labels``,
        ``features`` ``(N, m)``, ``system_names``, ``n_classes`` and the id
        index ``_index``.

    Raises
    ------
    PoolError
        On empty pools, length mismatches, duplicate ids, NaN/inf scores,
        probabilities outside [0, 1], class probabilities that do not sum
        to 1 and labels outside the label set.
    """
    lengths = {
        k: len(v)
        for k, v in dict(item_ids=item_ids, preds=preds, scores=scores, probs=probs, labels=labels,
                         features=features).items()
        if v is not None
    }
    if not lengths:
        raise PoolError("pool: no data given; pass at least one of preds, scores or probs")
    n = next(iter(lengths.values()))
    bad = {k: m for k, m in lengths.items() if m != n}
    if bad:
        raise PoolError(
            f"length mismatch: {lengths}; every field must have one entry per item"
        )
    if n == 0:
        raise PoolError("pool: empty (0 items); give at least one item")
    if preds is None and scores is None and probs is None:
        raise PoolError("pool: no system output; give preds, scores or probs for at least one system")

    ids, index = _check_ids(item_ids, n)

    preds_a = _as_2d("preds", preds, n)
    scores_a = _as_2d("scores", scores, n)
    probs_a = None if probs is None else _floats("probs", probs)
    if probs_a is not None and probs_a.ndim == 1:
        probs_a = probs_a[:, None]
    if probs_a is not None and probs_a.ndim > 3:
        raise PoolError(f"probs: expected shape (n_items,), (n_items, n_systems) or (n_items, n_systems, n_classes), "
                        f"got {probs_a.shape}")

    if scores_a is not None:
        scores_a = _floats("scores", scores_a)
        bad_rows = ~np.isfinite(scores_a).all(axis=1)
        if bad_rows.any():
            raise PoolError(
                f"scores: {int(bad_rows.sum())} item(s) have NaN or infinite scores "
                f"(first: {show_id(ids[np.argmax(bad_rows)])}); fill or drop them before building the pool"
            )
    if probs_a is not None:
        bad_p = ~(np.isfinite(probs_a) & (probs_a >= 0) & (probs_a <= 1))
        bad_rows = bad_p.reshape(n, -1).any(axis=1)
        if bad_rows.any():
            raise PoolError(
                f"probs: {int(bad_rows.sum())} item(s) have probabilities outside [0, 1] or NaN "
                f"(first: {show_id(ids[np.argmax(bad_rows)])}); probabilities must lie in [0, 1]"
            )

    inferred = 2
    if probs_a is not None and probs_a.ndim == 3:
        inferred = max(inferred, probs_a.shape[2])
    for fname, arr in (("preds", preds_a), ("labels", None if labels is None else np.asarray(labels))):
        if arr is None:
            continue
        arr_f = _floats(fname, arr)
        if not np.all(np.isfinite(arr_f)) or np.any(arr_f != np.round(arr_f)) or np.any(arr_f < 0):
            raise PoolError(
                f"{fname}: labels must be whole numbers 0..C-1 (0/1 for binary); found "
                f"{np.unique(arr_f[~np.isfinite(arr_f) | (arr_f != np.round(arr_f)) | (arr_f < 0)])[:5]}"
            )
        if n_classes is None and arr_f.size:
            inferred = max(inferred, int(arr_f.max()) + 1)
    C = int(n_classes) if n_classes is not None else inferred
    if C < 2:
        raise PoolError(f"n_classes: must be at least 2, got {C}")
    per_class = probs_a if probs_a is not None and probs_a.ndim == 3 else None
    if probs_a is not None:
        if C == 2 and probs_a.ndim == 3:
            if probs_a.shape[2] != 2:
                raise PoolError(f"probs: {probs_a.shape[2]} class probabilities per item and system for a binary pool "
                                f"(n_classes is 2); give p(y=1|x) per system, or pass n_classes={probs_a.shape[2]}")
            probs_a = probs_a[:, :, 1]
        if C > 2 and (probs_a.ndim != 3 or probs_a.shape[2] != C):
            raise PoolError(
                f"probs: a {C}-class pool needs probabilities of shape (n_items, n_systems, {C}), "
                f"got {probs_a.shape}"
            )

    def _labels_in_set(fname: str, arr: np.ndarray) -> np.ndarray:
        arr = np.asarray(arr).astype(np.int64)
        out = (arr < 0) | (arr >= C)
        if out.any():
            raise PoolError(
                f"{fname}: values {np.unique(arr[out])[:5].tolist()} are outside the label set "
                f"0..{C - 1}; recode labels as 0..{C - 1} or pass n_classes"
            )
        return arr

    if preds_a is not None:
        preds_a = _labels_in_set("preds", preds_a)
    labels_a = None if labels is None else _labels_in_set("labels", labels)
    feats = None
    if features is not None:
        feats = _floats("features", features)
        if feats.ndim == 1:
            feats = feats[:, None]
        if not np.isfinite(feats).all():
            raise PoolError("features: contain NaN or infinite values; impute or drop them")

    n_sys = max(a.shape[1] for a in (preds_a, scores_a, probs_a) if a is not None)
    for fname, arr in (("preds", preds_a), ("scores", scores_a), ("probs", probs_a)):
        if arr is not None and arr.shape[1] != n_sys:
            raise PoolError(
                f"{fname}: has {arr.shape[1]} system column(s) but another output has {n_sys}; "
                "give every output for every system"
            )
    names = _check_system_names(system_names, n_sys)
    if per_class is not None:
        _check_class_sums(per_class, ids, names)
    return {
        "item_ids": ids,
        "preds": preds_a,
        "scores": scores_a,
        "probs": probs_a,
        "labels": labels_a,
        "features": feats,
        "system_names": names,
        "n_classes": C,
        "_index": index,
    }
