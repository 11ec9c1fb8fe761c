"""The unlabeled pool: item ids and the outputs of one or more systems per item.

A :class:`Pool` is a handful of NumPy arrays of length ``N`` (one entry per
item) plus, per system, a predicted label, a real-valued score and/or a
probability.  Ground-truth labels are optional and only used by simulations.
Every constructor validates its input and raises :class:`PoolError` naming the
offending field and how to fix it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["Pool", "PoolError", "Outputs"]

DEFAULT_COLUMNS = {"id": "item_id", "pred": "pred", "score": "score", "prob": "prob", "label": "label"}


class PoolError(ValueError):
    """Raised for invalid pool input; the message names the field and the fix."""


@dataclass(frozen=True)
class Outputs:
    """System outputs for a subset of items (rows) and all systems (columns).

    Attributes
    ----------
    preds, scores, probs
        Arrays of shape ``(n, S)`` (``probs`` is ``(n, S, C)`` for multi-class
        pools), or ``None`` when the pool has no such output.
    n_classes
        Size of the label set ``{0, ..., C-1}``.
    """

    preds: np.ndarray | None
    scores: np.ndarray | None
    probs: np.ndarray | None
    n_classes: int

    def __len__(self) -> int:
        for arr in (self.preds, self.scores, self.probs):
            if arr is not None:
                return arr.shape[0]
        return 0

    def require(self, kind: str, measure: str) -> np.ndarray:
        """Return the output array ``kind`` or raise a clear error for ``measure``."""
        arr = getattr(self, kind)
        if arr is None:
            raise PoolError(
                f"measure {measure!r} needs system output {kind!r}, but the pool has none: "
                f"give a {kind} column (or array) when building the pool"
            )
        return arr


def _as_2d(name: str, values, n: int | None) -> np.ndarray | None:
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


@dataclass(frozen=True, eq=False)
class Pool:
    """Items to evaluate and the outputs of the systems under evaluation.

    Build one with :meth:`from_arrays`, :meth:`from_dataframe` or :meth:`from_file`.

    Attributes
    ----------
    item_ids : ndarray, shape (N,)
        Unique item identifiers (integers or strings).
    preds : ndarray of int, shape (N, S), optional
        Predicted label of each system, in ``{0, ..., n_classes-1}``.
    scores : ndarray of float, shape (N, S), optional
        Real-valued scores (larger means more confident in the positive class).
    probs : ndarray of float, shape (N, S) or (N, S, C), optional
        Probabilities: ``p(y=1|x)`` for binary pools, one per class otherwise.
    labels : ndarray of int, shape (N,), optional
        Ground truth (simulation only).
    features : ndarray, shape (N, m), optional
        Feature vectors (used by feature-based partitions).
    system_names : tuple of str
        One name per system.
    n_classes : int
        Size of the label set ``{0, ..., C-1}`` (2 for binary pools).
    """

    item_ids: np.ndarray
    preds: np.ndarray | None = None
    scores: np.ndarray | None = None
    probs: np.ndarray | None = None
    labels: np.ndarray | None = None
    features: np.ndarray | None = None
    system_names: tuple[str, ...] = ()
    n_classes: int = 2
    name: str = "pool"
    _index: pd.Index | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ build
    @classmethod
    def from_arrays(
        cls,
        item_ids=None,
        *,
        preds=None,
        scores=None,
        probs=None,
        labels=None,
        features=None,
        system_names: Sequence[str] | None = None,
        n_classes: int | None = None,
        name: str = "pool",
    ) -> "Pool":
        """Build and validate a pool from arrays.

        Parameters
        ----------
        item_ids : array-like, optional
            Unique ids; defaults to ``0..N-1``.
        preds, scores : array-like, shape (N,) or (N, S), optional
            Predicted labels / real-valued scores, one column per system.
        probs : array-like, shape (N,), (N, S) or (N, S, C), optional
            Binary pools: ``p(y=1|x)``; multi-class pools: per-class probabilities.
        labels : array-like, shape (N,), optional
            Ground truth for simulation.
        features : array-like, shape (N, m), optional
            Item features.
        system_names : sequence of str, optional
            Defaults to ``system0, system1, ...`` (or ``system`` for one system).
        n_classes : int, optional
            Label-set size; inferred from labels, predictions and probabilities
            (at least 2).
        name : str
            A short name used in reports.

        Raises
        ------
        PoolError
            On empty pools, length mismatches, duplicate ids, NaN/inf scores,
            probabilities outside [0, 1] and labels outside the label set.
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

        ids = np.arange(n) if item_ids is None else np.asarray(item_ids)
        if ids.ndim != 1:
            raise PoolError(f"item_ids: expected a 1-d array, got shape {ids.shape}")
        if ids.dtype.kind == "f":
            if not np.all(np.isfinite(ids)) or np.any(ids != np.round(ids)):
                raise PoolError("item_ids: floating-point ids must be whole numbers; give integer or string ids")
            ids = ids.astype(np.int64)
        elif ids.dtype.kind == "O":
            ids = ids.astype(str)
        index = pd.Index(ids)
        if not index.is_unique:
            dup = index[index.duplicated()][:5].tolist()
            raise PoolError(f"item_ids: duplicate ids {dup}; every item needs a unique id")

        preds_a = _as_2d("preds", preds, n)
        scores_a = _as_2d("scores", scores, n)
        probs_a = None if probs is None else np.asarray(probs, dtype=float)
        if probs_a is not None and probs_a.ndim == 1:
            probs_a = probs_a[:, None]

        if scores_a is not None:
            scores_a = scores_a.astype(float)
            bad_rows = ~np.isfinite(scores_a).all(axis=1)
            if bad_rows.any():
                raise PoolError(
                    f"scores: {int(bad_rows.sum())} item(s) have NaN or infinite scores "
                    f"(first: {ids[np.argmax(bad_rows)]!r}); fill or drop them before building the pool"
                )
        if probs_a is not None:
            bad_p = ~(np.isfinite(probs_a) & (probs_a >= 0) & (probs_a <= 1))
            bad_rows = bad_p.reshape(n, -1).any(axis=1)
            if bad_rows.any():
                raise PoolError(
                    f"probs: {int(bad_rows.sum())} item(s) have probabilities outside [0, 1] or NaN "
                    f"(first: {ids[np.argmax(bad_rows)]!r}); probabilities must lie in [0, 1]"
                )

        inferred = 2
        if probs_a is not None and probs_a.ndim == 3:
            inferred = max(inferred, probs_a.shape[2])
        for fname, arr in (("preds", preds_a), ("labels", None if labels is None else np.asarray(labels))):
            if arr is None:
                continue
            arr_f = np.asarray(arr, dtype=float)
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
        if probs_a is not None:
            if C == 2 and probs_a.ndim == 3:
                probs_a = probs_a[:, :, 1] if probs_a.shape[2] == 2 else probs_a
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
            feats = np.asarray(features, dtype=float)
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
        if system_names is None:
            system_names = ("system",) if n_sys == 1 else tuple(f"system{s}" for s in range(n_sys))
        system_names = tuple(str(s) for s in system_names)
        if len(system_names) != n_sys:
            raise PoolError(f"system_names: {len(system_names)} names for {n_sys} systems; give one per system")
        if len(set(system_names)) != n_sys:
            raise PoolError(f"system_names: duplicate names in {system_names}")

        return cls(
            item_ids=ids,
            preds=preds_a,
            scores=scores_a,
            probs=probs_a,
            labels=labels_a,
            features=feats,
            system_names=system_names,
            n_classes=C,
            name=name,
            _index=index,
        )

    @classmethod
    def from_dataframe(
        cls,
        df: pd.DataFrame,
        *,
        id_col: str | None = DEFAULT_COLUMNS["id"],
        pred_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["pred"],
        score_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["score"],
        prob_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["prob"],
        label_col: str | None = DEFAULT_COLUMNS["label"],
        feature_cols: Sequence[str] | None = None,
        system_names: Sequence[str] | None = None,
        n_classes: int | None = None,
        name: str = "pool",
    ) -> "Pool":
        """Build a pool from a DataFrame with user-chosen column names.

        Column arguments accept one name or a list (one column per system).
        A default column name that is absent from ``df`` is skipped; an
        explicitly listed column that is absent raises :class:`PoolError`.
        Defaults follow the format of the benchmark pools: ``item_id``,
        ``pred``, ``score``, ``prob``, ``label``.
        """
        cols = set(df.columns)

        def pick(arg, default):
            if arg is None:
                return None
            names = [arg] if isinstance(arg, str) else list(arg)
            missing = [c for c in names if c not in cols]
            if missing:
                if isinstance(arg, str) and arg == default:
                    return None
                raise PoolError(
                    f"column(s) {missing} not found; available columns: {sorted(map(str, cols))}. "
                    "Pass the right name with the matching *_col option"
                )
            return df[names].to_numpy()

        ids = None
        if id_col is not None:
            if id_col in cols:
                ids = df[id_col].to_numpy()
            elif id_col != DEFAULT_COLUMNS["id"]:
                raise PoolError(f"id column {id_col!r} not found; available columns: {sorted(map(str, cols))}")
        labels = pick(label_col, DEFAULT_COLUMNS["label"])
        if labels is not None:
            labels = labels[:, 0]
            if pd.isna(labels).any():
                raise PoolError(f"label column {label_col!r}: has missing values; ground truth must be complete")
        feats = pick(list(feature_cols), None) if feature_cols else None
        preds = pick(pred_cols, DEFAULT_COLUMNS["pred"])
        scores = pick(score_cols, DEFAULT_COLUMNS["score"])
        probs = pick(prob_cols, DEFAULT_COLUMNS["prob"])
        if system_names is None:
            for arg in (pred_cols, score_cols, prob_cols):
                if arg is not None and not isinstance(arg, str) and len(arg) > 1:
                    system_names = list(arg)
                    break
        return cls.from_arrays(
            ids, preds=preds, scores=scores, probs=probs, labels=labels, features=feats,
            system_names=system_names, n_classes=n_classes, name=name,
        )

    @classmethod
    def from_file(cls, path: str | Path, **columns) -> "Pool":
        """Read a pool from CSV (optionally gzipped) or Parquet.

        Keyword arguments are the column options of :meth:`from_dataframe`.
        """
        path = Path(path)
        if not path.exists():
            raise PoolError(f"pool file {str(path)!r} does not exist; check the path")
        suffixes = "".join(path.suffixes).lower()
        if ".parquet" in suffixes or ".pq" in suffixes:
            df = pd.read_parquet(path)
        elif ".csv" in suffixes or ".tsv" in suffixes or ".txt" in suffixes:
            df = pd.read_csv(path, sep="\t" if ".tsv" in suffixes else ",")
        else:
            raise PoolError(f"pool file {str(path)!r}: unknown format; use .csv, .csv.gz, .tsv or .parquet")
        columns.setdefault("name", path.name.split(".")[0])
        return cls.from_dataframe(df, **columns)

    # ------------------------------------------------------------------ use
    @property
    def n_items(self) -> int:
        return int(self.item_ids.shape[0])

    def __len__(self) -> int:
        return self.n_items

    @property
    def n_systems(self) -> int:
        return len(self.system_names)

    @property
    def index(self) -> pd.Index:
        if self._index is None:  # pragma: no cover - constructors always set it
            object.__setattr__(self, "_index", pd.Index(self.item_ids))
        return self._index

    def outputs(self, idx: np.ndarray | slice | None = None) -> Outputs:
        """System outputs of the items at positions ``idx`` (all items when ``None``)."""
        if idx is None:
            idx = slice(None)
        take = lambda a: None if a is None else a[idx]  # noqa: E731
        return Outputs(take(self.preds), take(self.scores), take(self.probs), self.n_classes)

    def positions(self, ids, *, field_name: str = "item_id") -> np.ndarray:
        """Positions of ``ids`` in the pool; raises :class:`PoolError` for unknown ids."""
        ids = np.asarray(ids)
        if ids.dtype.kind in "iu" and self.item_ids.dtype.kind in "OUS":
            ids = ids.astype(str)
        elif ids.dtype.kind in "OUS" and self.item_ids.dtype.kind in "iu":
            try:
                ids = ids.astype(np.int64)
            except ValueError:
                pass
        pos = self.index.get_indexer(ids)
        if (pos < 0).any():
            unknown = ids[pos < 0][:5].tolist()
            raise PoolError(
                f"{field_name}: {int((pos < 0).sum())} id(s) not in the pool, e.g. {unknown}; "
                "use ids exactly as in the pool's id column"
            )
        return pos

    def primary_scores(self, system: int = 0) -> np.ndarray:
        """A real-valued ranking score for ``system``: score, else prob, else pred."""
        if self.scores is not None:
            return self.scores[:, system]
        if self.probs is not None:
            p = self.probs[:, system]
            return p if p.ndim == 1 else 1.0 - p[:, 0]
        return self.preds[:, system].astype(float)

    def with_labels(self, labels) -> "Pool":
        """A copy of this pool with ground-truth ``labels`` attached (validated)."""
        return Pool.from_arrays(
            self.item_ids, preds=self.preds, scores=self.scores, probs=self.probs, labels=labels,
            features=self.features, system_names=self.system_names, n_classes=self.n_classes, name=self.name,
        )
