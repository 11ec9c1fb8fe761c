"""The unlabeled pool: item ids and the outputs of one or more systems per item.

A :class:`Pool` is a handful of NumPy arrays of length ``N`` (one entry per
item) plus, per system, a predicted label, a real-valued score and/or a
probability.  Ground-truth labels are optional and only used by simulations.
Every constructor validates its input and raises :class:`PoolError` naming the
offending field and how to fix it.

Multi-label pools (``C`` binary labels per item, seed 002 appendix D) reuse
the integer label machinery: a label vector ``v`` in ``{0,1}^C`` is the
integer bitmask ``sum_k v_k 2^k`` (:func:`encode_multilabel`), so such a pool
has ``n_classes = 2^C`` and its probabilities are the product distribution of
seed 002 eq. (89) over the ``2^C`` label sets (:func:`multilabel_joint`).
Build one with :meth:`Pool.from_multilabel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "MAX_LABELS",
    "Outputs",
    "Pool",
    "PoolError",
    "decode_multilabel",
    "encode_multilabel",
    "multilabel_joint",
]

DEFAULT_COLUMNS = {"id": "item_id", "pred": "pred", "score": "score", "prob": "prob", "label": "label"}

#: Most labels of a multi-label pool: its label set has ``2^C`` elements (4096 at C = 12).
MAX_LABELS = 12
#: Most entries of the joint probability array ``(N, S, 2^C)`` of a multi-label pool (2 GiB of float64).
MAX_JOINT_ENTRIES = 2**28


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


def encode_multilabel(indicators) -> np.ndarray:
    """Bitmask codes ``sum_k v_k 2^k`` of 0/1 label vectors along the last axis.

    Parameters
    ----------
    indicators : array-like of 0/1, shape (..., C)

    Returns
    -------
    ndarray of int64, shape (...)
    """
    v = np.asarray(indicators).astype(np.int64)
    return v @ (np.int64(1) << np.arange(v.shape[-1], dtype=np.int64))


def decode_multilabel(codes, n_labels: int) -> np.ndarray:
    """0/1 label vectors of bitmask codes: the inverse of :func:`encode_multilabel`.

    Parameters
    ----------
    codes : array-like of int, shape (...)
    n_labels : int
        ``C``; codes must lie in ``0..2^C-1``.

    Returns
    -------
    ndarray of int64, shape (..., C)
    """
    codes = np.asarray(codes, dtype=np.int64)
    return (codes[..., None] >> np.arange(n_labels, dtype=np.int64)) & 1


def multilabel_joint(marginals) -> np.ndarray:
    """Product distribution over the ``2^C`` label sets from per-label marginals (seed 002 eq. 89).

    ``p(v | x) = prod_k p(v_k = 1 | x)^{v_k} (1 - p(v_k = 1 | x))^{1 - v_k}``,
    indexed by the bitmask code of ``v``.

    Parameters
    ----------
    marginals : array-like, shape (..., C)
        ``p(v_k = 1 | x)`` per label.

    Returns
    -------
    ndarray, shape (..., 2^C)
        Sums to one over the last axis.
    """
    m = np.asarray(marginals, dtype=float)
    joint = np.ones(m.shape[:-1] + (1,))
    for k in range(m.shape[-1]):  # codes < 2^k have bit k clear, the next 2^k have it set
        mk = m[..., k:k + 1]
        joint = np.concatenate([joint * (1.0 - mk), joint * mk], axis=-1)
    return joint


def _per_label(name: str, values) -> np.ndarray | None:
    """Per-label system outputs as ``(n, S, C)`` (``(n, C)`` means one system)."""
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.ndim == 2:
        arr = arr[:, None, :]
    if arr.ndim != 3:
        raise PoolError(f"{name}: expected shape (n_items, n_labels) or (n_items, n_systems, n_labels), "
                        f"got {arr.shape}")
    return arr


def _check_zero_one(name: str, arr: np.ndarray) -> np.ndarray:
    """``arr`` as int64 after checking that it holds only 0 and 1."""
    arr_f = np.asarray(arr, dtype=float)
    bad = (arr_f != 0) & (arr_f != 1)
    if bad.any():
        raise PoolError(
            f"{name}: multi-label indicators must be 0 or 1, found {np.unique(arr_f[bad])[:5].tolist()}; "
            "give one 0/1 column per label (threshold per-label scores first, e.g. prob > 0.5)"
        )
    return arr_f.astype(np.int64)


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
        Size of the label set ``{0, ..., C-1}`` (2 for binary pools, ``2^C``
        for multi-label pools).
    label_names : tuple of str
        Names of the ``C`` labels of a multi-label pool (empty otherwise);
        bit ``k`` of a label code is label ``label_names[k]``.
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
    label_names: tuple[str, ...] = ()
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
    ) -> Pool:
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
    def from_multilabel(
        cls,
        item_ids=None,
        *,
        preds=None,
        probs=None,
        scores=None,
        labels=None,
        features=None,
        label_names: Sequence[str] | None = None,
        system_names: Sequence[str] | None = None,
        name: str = "pool",
    ) -> Pool:
        """Build a multi-label pool: ``C`` binary labels per item (seed 002 appendix D).

        Label vectors become bitmask codes (:func:`encode_multilabel`), so the
        pool has ``n_classes = 2^C``; per-label probabilities become the
        product distribution of seed 002 eq. (89) over the ``2^C`` label sets
        (:func:`multilabel_joint`), which is what the designs and oracle
        models see.

        Parameters
        ----------
        item_ids : array-like, optional
            Unique ids; defaults to ``0..N-1``.
        preds : array-like of 0/1, shape (N, C) or (N, S, C), optional
            Predicted presence of every label, per system.
        probs : array-like, shape (N, C) or (N, S, C), optional
            Per-label marginals ``p(v_k = 1 | x)`` in [0, 1], per system.
        scores : array-like, shape (N,) or (N, S), optional
            One real-valued ranking score per item and system (score
            partitions of adaptive designs); without it, adaptive designs
            rank by the probability of at least one label.
        labels : array-like of 0/1, shape (N, C), optional
            Ground truth (simulation only).
        features : array-like, shape (N, m), optional
        label_names : sequence of str, optional
            One name per label (default ``label0, label1, ...``); bit ``k`` is
            ``label_names[k]``.
        system_names : sequence of str, optional
        name : str

        Raises
        ------
        PoolError
            When ``preds``/``labels`` hold values other than 0/1, ``probs``
            lie outside [0, 1], the outputs disagree on ``C`` or on the number
            of systems, ``C`` exceeds :data:`MAX_LABELS`, the joint
            probabilities would not fit in memory, or for any error of
            :meth:`from_arrays`.
        """
        P = _per_label("preds", preds)
        Q = _per_label("probs", probs)
        Y = None if labels is None else np.asarray(labels)
        if P is None and Q is None:
            raise PoolError("multi-label pool: no system output; give preds and/or probs with one column per label")
        if Y is not None and Y.ndim != 2:
            raise PoolError(f"labels: expected shape (n_items, n_labels) of 0/1, got {Y.shape}")
        widths = {k: a.shape[-1] for k, a in (("preds", P), ("probs", Q), ("labels", Y)) if a is not None}
        if label_names is not None:
            widths["label_names"] = len(label_names)
        if len(set(widths.values())) != 1:
            raise PoolError(f"multi-label pool: the number of labels C differs between fields {widths}; "
                            "give one column per label, in the same order, everywhere")
        C = next(iter(widths.values()))
        if not 1 <= C <= MAX_LABELS:
            raise PoolError(f"multi-label pool: {C} labels; between 1 and {MAX_LABELS} are supported (the label set "
                            f"has 2^C elements); evaluate subsets of at most {MAX_LABELS} labels separately")
        names = tuple(f"label{k}" for k in range(C)) if label_names is None else tuple(map(str, label_names))
        if len(set(names)) != C:
            raise PoolError(f"label_names: duplicate names in {names}; give one unique name per label")
        if Q is not None:
            if not np.all(np.isfinite(Q) & (Q >= 0) & (Q <= 1)):
                raise PoolError("probs: per-label probabilities p(v_k=1|x) must lie in [0, 1] (no NaN)")
            if Q.shape[0] * Q.shape[1] * 2**C > MAX_JOINT_ENTRIES:
                raise PoolError(f"probs: the joint distribution over 2^{C} label sets needs "
                                f"{Q.shape[0] * Q.shape[1] * 2**C:,} numbers, more than {MAX_JOINT_ENTRIES:,}; "
                                "use fewer labels, fewer items or systems, or give preds without probs")
        pool = cls.from_arrays(
            item_ids,
            preds=None if P is None else encode_multilabel(_check_zero_one("preds", P)),
            scores=scores,
            probs=None if Q is None else multilabel_joint(Q),
            labels=None if Y is None else encode_multilabel(_check_zero_one("labels", Y)),
            features=features, system_names=system_names, n_classes=2**C, name=name,
        )
        return replace(pool, label_names=names)

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
        multilabel: Sequence[str] | None = None,
    ) -> Pool:
        """Build a pool from a DataFrame with user-chosen column names.

        Column arguments accept one name or a list (one column per system).
        A default column name that is absent from ``df`` is skipped; an
        explicitly listed column that is absent raises :class:`PoolError`.
        Defaults follow the format of the benchmark pools: ``item_id``,
        ``pred``, ``score``, ``prob``, ``label``.

        Multi-label pools
            With ``multilabel=[name_1, ..., name_C]`` the pool is built by
            :meth:`from_multilabel` and ``pred_cols``, ``prob_cols`` and
            ``label_col`` are *prefixes*: label ``name`` is read from the
            columns ``<prefix>_<name>``, e.g. ``pred_toxic``, ``prob_toxic``
            and ``label_toxic`` with the defaults (0/1 predictions,
            probabilities ``p(toxic=1|x)``, 0/1 truth).  Several systems take a
            list of prefixes (``pred_cols=["a", "b"]`` reads ``a_toxic``,
            ``b_toxic``, ...).  ``score_cols`` keeps its meaning (one ranking
            score per system) and ``n_classes`` must be left unset.
        """
        cols = set(df.columns)
        if multilabel is not None:
            multilabel = [multilabel] if isinstance(multilabel, str) else list(multilabel)
            if n_classes is not None:
                raise PoolError("n_classes: leave it unset for a multi-label pool (it is 2^C for C labels)")

        def pick(arg, default, per_label=False):
            if arg is None:
                return None
            heads = [arg] if isinstance(arg, str) else list(arg)
            names = [f"{h}_{lab}" for h in heads for lab in multilabel] if per_label else heads
            missing = [c for c in names if c not in cols]
            if missing:
                if isinstance(arg, str) and arg == default and len(missing) == len(names):
                    return None
                raise PoolError(
                    f"column(s) {missing} not found; available columns: {sorted(map(str, cols))}. "
                    + ("Multi-label pools read one column <prefix>_<label> per label; pass the right prefix "
                       "with the matching *_col option" if per_label
                       else "Pass the right name with the matching *_col option")
                )
            values = df[names].to_numpy()
            return values.reshape(len(df), len(heads), len(multilabel)) if per_label else values

        ids = None
        if id_col is not None:
            if id_col in cols:
                ids = df[id_col].to_numpy()
            elif id_col != DEFAULT_COLUMNS["id"]:
                raise PoolError(f"id column {id_col!r} not found; available columns: {sorted(map(str, cols))}")
        per_label = multilabel is not None
        labels = pick(label_col, DEFAULT_COLUMNS["label"], per_label)
        if labels is not None:
            labels = labels[:, 0]
            if pd.isna(labels).any():
                raise PoolError(f"label column {label_col!r}: has missing values; ground truth must be complete")
        feats = pick(list(feature_cols), None) if feature_cols else None
        preds = pick(pred_cols, DEFAULT_COLUMNS["pred"], per_label)
        scores = pick(score_cols, DEFAULT_COLUMNS["score"])
        probs = pick(prob_cols, DEFAULT_COLUMNS["prob"], per_label)
        if system_names is None:
            for arg in (pred_cols, score_cols, prob_cols):
                if arg is not None and not isinstance(arg, str) and len(arg) > 1:
                    system_names = list(arg)
                    break
        if per_label:
            return cls.from_multilabel(
                ids, preds=preds, probs=probs, scores=scores, labels=labels, features=feats,
                label_names=multilabel, system_names=system_names, name=name,
            )
        return cls.from_arrays(
            ids, preds=preds, scores=scores, probs=probs, labels=labels, features=feats,
            system_names=system_names, n_classes=n_classes, name=name,
        )

    @classmethod
    def from_file(cls, path: str | Path, **columns) -> Pool:
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
        take = lambda a: None if a is None else a[idx]
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

    def with_labels(self, labels) -> Pool:
        """A copy of this pool with ground-truth ``labels`` attached (validated).

        Multi-label pools take label codes (:func:`encode_multilabel`).
        """
        pool = Pool.from_arrays(
            self.item_ids, preds=self.preds, scores=self.scores, probs=self.probs, labels=labels,
            features=self.features, system_names=self.system_names, n_classes=self.n_classes, name=self.name,
        )
        return replace(pool, label_names=self.label_names)
