"""Multi-label pools: ``C`` binary labels per item as one label out of ``2^C``.

Multi-label pools (Yilmaz et al., appendix D) reuse the integer label
machinery: a label vector ``v`` in ``{0,1}^C`` is the integer bitmask
``sum_k v_k 2^k`` (:func:`encode_multilabel`), so such a pool has
``n_classes = 2^C`` and its probabilities are the product distribution of
Yilmaz et al. eq. (89) over the ``2^C`` label sets (:func:`multilabel_joint`).
:func:`encode_outputs` validates per-label system outputs and encodes them;
:meth:`labelwise.pool.Pool.from_multilabel` builds a pool from them.

References
----------
E. Yilmaz, P. Hayes, R. Habib, J. Burgess and D. Barber, "Sample Efficient
Model Evaluation", arXiv preprint (2021).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import PoolError

__all__ = [
    "MAX_JOINT_ENTRIES",
    "MAX_LABELS",
    "decode_multilabel",
    "encode_multilabel",
    "encode_outputs",
    "multilabel_joint",
]

#: Most labels of a multi-label pool: its label set has ``2^C`` elements (4096 at C = 12).
MAX_LABELS = 12
#: Most entries of the joint probability array ``(N, S, 2^C)`` of a multi-label pool (2 GiB of float64).
MAX_JOINT_ENTRIES = 2**28


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
    """Product distribution over the ``2^C`` label sets from per-label marginals (Yilmaz et al. eq. 89).

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


def encode_outputs(
    preds=None,
    probs=None,
    labels=None,
    label_names: Sequence[str] | None = None,
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None, tuple[str, ...]]:
    """Validate per-label outputs and encode them over the ``2^C`` label sets.

    Parameters
    ----------
    preds : array-like of 0/1, shape (N, C) or (N, S, C), optional
        Predicted presence of every label, per system.
    probs : array-like, shape (N, C) or (N, S, C), optional
        Per-label marginals ``p(v_k = 1 | x)`` in [0, 1], per system.
    labels : array-like of 0/1, shape (N, C), optional
        Ground truth.
    label_names : sequence of str, optional
        One name per label (default ``label0, label1, ...``).

    Returns
    -------
    pred_codes : ndarray of int64, shape (N, S), or None
        :func:`encode_multilabel` of ``preds``.
    joint_probs : ndarray, shape (N, S, 2^C), or None
        :func:`multilabel_joint` of ``probs``.
    label_codes : ndarray of int64, shape (N,), or None
        :func:`encode_multilabel` of ``labels``.
    names : tuple of str
        The ``C`` label names; bit ``k`` of a code is label ``names[k]``.

    Raises
    ------
    PoolError
        When there is neither ``preds`` nor ``probs``, ``preds``/``labels``
        hold values other than 0/1, ``probs`` lie outside [0, 1], the fields
        disagree on ``C``, ``C`` exceeds :data:`MAX_LABELS`, label names
        repeat, or the joint probabilities would have more than
        :data:`MAX_JOINT_ENTRIES` entries.
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
    return (
        None if P is None else encode_multilabel(_check_zero_one("preds", P)),
        None if Q is None else multilabel_joint(Q),
        None if Y is None else encode_multilabel(_check_zero_one("labels", Y)),
        names,
    )
