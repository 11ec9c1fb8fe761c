"""A floor on a stratum's label variance: strata whose labels all agree still vary.

On a rare pool most score strata hold a handful of positives among
thousands of items; a sample of ``n_h`` items from such a stratum usually
holds none, so the plug-in variance of the stratum's mean loss is 0 and the
interval ignores every positive the sample missed (the false negatives of
F1).  With binary labels an item's loss is affine in its label,
``l_j = l(x_j, 0) + y_j b_j`` with ``b_j = l(x_j, 1) - l(x_j, 0)``, so
within a stratum the projected loss ``u_j = Dg(R) l_j`` varies through the
labels by about ``(Dg b_j)^2 p_h (1 - p_h)`` per item.  The floor raises
each stratum's plug-in per-item variance of ``u`` to at least the stratum's
mean of ``(Dg b_j)^2`` over all its items (labeled or not: the slopes are
known from the systems' outputs) times the Agresti-Coull variance of its
positive rate at its sample size (Agresti and Coull, "Approximate is better
than 'exact' for interval estimation of binomial proportions", The American
Statistician, 1998), ``n_h p~ (1 - p~) / (n_h + z^2)`` per item with
``p~ = (k_h + z^2/2) / (n_h + z^2)`` (``k_h`` positives of ``n_h``).  With
no positive among ``n_h`` labels this is about ``z^2 / (2 n_h)``: the
stratum's positive rate could still be that large; the floor fades as the
stratum is sampled and is below the plug-in variance wherever the labels vary.
"""

from __future__ import annotations

import numpy as np

from ..measures import Measure
from ..pool import Outputs
from .intervals import agresti_coull_floor

__all__ = ["floor_stratum_covariance", "label_variance_floor", "stratum_slope_moments"]


def stratum_slope_moments(measure: Measure, outputs: Outputs, strata: np.ndarray, n_strata: int,
                          counts: np.ndarray | None = None) -> np.ndarray:
    """Each stratum's mean of ``b_j b_j^T`` over all its items, ``b_j = l(x_j, 1) - l(x_j, 0)`` (how an
    item's loss moves with its binary label), shape ``(K, d, d)``.

    Parameters
    ----------
    measure : Measure
    outputs : Outputs
        The systems' outputs on every item of the pool (or on one item per block of alike items).
    strata : ndarray of int, shape (n,)
        Every item's (block's) stratum.
    n_strata : int
    counts : ndarray, shape (n,), optional
        Items each row stands for (default 1).
    """
    n = len(outputs)
    w = np.ones(n) if counts is None else np.asarray(counts, dtype=float)
    b = measure.loss(outputs, np.ones(n, dtype=np.int64)) - measure.loss(outputs, np.zeros(n, dtype=np.int64))
    d = b.shape[1]
    outer = (b[:, :, None] * b[:, None, :]).reshape(n, d * d)
    sums = np.stack([np.bincount(strata, weights=w * col, minlength=n_strata) for col in outer.T], axis=1)
    sizes = np.bincount(strata, weights=w, minlength=n_strata)
    return (sums / np.maximum(sizes, 1e-300)[:, None]).reshape(n_strata, d, d)


def label_variance_floor(positive: np.ndarray, strata: np.ndarray, n_strata: int,
                         level: float = 0.95) -> np.ndarray:
    """Per stratum, the Agresti-Coull per-item variance of the binary label, ``n_h p~ (1 - p~) / (n_h + z^2)``.

    Parameters
    ----------
    positive : ndarray, shape (n,)
        The labeled draws' labels as 0/1.
    strata : ndarray of int, shape (n,)
        Their strata.
    n_strata : int
    level : float
        Sets ``z`` of the Agresti-Coull centre ``p~ = (k_h + z^2/2) / (n_h + z^2)``.

    Returns
    -------
    ndarray, shape (K,)
        0 for strata without a label.
    """
    n = np.bincount(strata, minlength=n_strata).astype(float)
    k = np.bincount(strata, weights=np.asarray(positive, dtype=float), minlength=n_strata)
    rate = np.divide(k, n, out=np.zeros_like(k), where=n > 0)
    return n * agresti_coull_floor(rate, n, level)


def floor_stratum_covariance(S: np.ndarray, slope_moments: np.ndarray, jacobian: np.ndarray, positive: np.ndarray,
                             strata: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Each stratum's per-item covariance of the projected losses with every variance at least the floor.

    Parameters
    ----------
    S : ndarray, shape (K, m, m)
        Plug-in per-item covariance of ``u_j = Dg(R-hat) l_j`` in each stratum.
    slope_moments : ndarray, shape (K, d, d)
        :func:`stratum_slope_moments`.
    jacobian : ndarray, shape (m, d)
        ``Dg(R-hat)``.
    positive : ndarray, shape (n,)
        The labeled draws' labels as 0/1.
    strata : ndarray of int, shape (n,)
        Their strata.
    level : float
        Sets ``z`` of the Agresti-Coull centre.

    Returns
    -------
    ndarray, shape (K, m, m)
        ``S`` whose diagonal is raised, where it falls short, to the stratum's label variance floor
        (:func:`label_variance_floor`) times its mean of ``(Dg b_j)^2`` over all its items.
    """
    K = slope_moments.shape[0]
    slope_sq = np.einsum("id,hde,ie->hi", jacobian, slope_moments, jacobian)  # (K, m)
    floor = label_variance_floor(positive, strata, K, level)[:, None] * slope_sq
    diag = np.einsum("hii->hi", S)
    out = S.copy()
    idx = np.arange(S.shape[1])
    out[:, idx, idx] = np.fmax(diag, floor)
    return out
