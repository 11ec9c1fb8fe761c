"""Temperature scaling: the multi-class recalibration of the systems' probabilities from weighted labels.

A binary pool's scores are recalibrated by Platt scaling
(:mod:`labelwise.oracle.calibration`).  Its multi-class counterpart with one
parameter is temperature scaling (Guo, Pleiss, Sun and Weinberger, "On
Calibration of Modern Neural Networks", ICML 2017, sec. 4.2): every item's
probabilities ``p`` become

    p'_c = p_c^(1/T) / sum_k p_k^(1/T),

the softmax of ``log p / T``.  ``T > 1`` tempers over-confident
probabilities, ``T < 1`` sharpens under-confident ones, and the ranking of the
classes within an item never changes.  ``T`` maximises the labels'
log-likelihood, each label weighted by the pool items it stands for (a
design that favours some items would otherwise fit ``T`` to them).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

__all__ = ["LOG_T_RANGE", "fit_temperature", "tempered"]

#: ``log T`` is searched in this range: a hundredfold tempering or sharpening at most.
LOG_T_RANGE = (-np.log(100.0), np.log(100.0))

#: Probabilities are floored here before their logarithm (a probability of exactly 0 is not certain).
_FLOOR = 1e-12


def _log_probs(probs: np.ndarray) -> np.ndarray:
    return np.log(np.clip(np.asarray(probs, dtype=float), _FLOOR, None))


def tempered(probs: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(log p / T)`` row by row, shape ``(n, C)`` (in place on one array: it runs over the pool)."""
    out = _log_probs(np.ascontiguousarray(np.asarray(probs, dtype=float).T))  # (C, n): reductions across rows
    out /= temperature
    out -= out.max(axis=0)
    np.exp(out, out=out)
    out /= out.sum(axis=0)
    return out.T


def fit_temperature(probs: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The temperature maximising the weighted log-likelihood of ``labels`` under :func:`tempered` ``probs``.

    Parameters
    ----------
    probs : ndarray, shape (n, C)
        The labeled items' probabilities.
    labels : ndarray of int, shape (n,)
    weights : ndarray, shape (n,), optional
        The pool items each label stands for (default one each).

    Returns
    -------
    float
        ``T`` in ``exp(LOG_T_RANGE)``; 1 without labels.
    """
    labels = np.asarray(labels, dtype=np.int64)
    if labels.size == 0:
        return 1.0
    log_p = _log_probs(probs)
    w = np.ones(labels.size) if weights is None else np.asarray(weights, dtype=float)
    rows = np.arange(labels.size)

    def loss(log_t: float) -> float:
        return -float(w @ log_softmax(log_p * np.exp(-log_t), axis=1)[rows, labels])

    return float(np.exp(minimize_scalar(loss, bounds=LOG_T_RANGE, method="bounded").x))

