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
known from the systems' outputs) times ``n_h`` times the variance of the
Jeffreys posterior of its positive rate, ``Beta(k_h + 1/2, n_h - k_h + 1/2)``
for ``k_h`` positives of ``n_h``: ``p~ (1 - p~) / (n_h + 2)`` with
``p~ = (k_h + 1/2) / (n_h + 1)``, the rate behind the Jeffreys interval
(Brown, Cai and DasGupta, "Interval estimation for a binomial proportion",
Statistical Science 16(2), 2001, section 4.1.2), as in
:func:`~labelwise.estimators.intervals.beta_interval`.  With no positive
among ``n_h`` labels the stratum's rate is still taken to be about
``1 / (2 n_h)``; the floor fades as the stratum is sampled and is near the
plug-in variance wherever the labels vary.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from ..measures import Measure
from ..pool import Outputs

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
    # sorted by stratum, each stratum's rows are one slice: sum_j w_j b_j b_j^T is one (d, n_h) @ (n_h, d)
    # product per stratum, in O(n d) memory
    order = np.argsort(strata, kind="stable")
    bounds = np.searchsorted(strata[order], np.arange(n_strata + 1))
    b_sorted, w_sorted = b[order], w[order]
    sums = np.stack([b_sorted[lo:hi].T @ (w_sorted[lo:hi, None] * b_sorted[lo:hi]) for lo, hi in pairwise(bounds)])
    sizes = np.bincount(strata, weights=w, minlength=n_strata)
    return sums / np.maximum(sizes, 1e-300)[:, None, None]


def label_variance_floor(positive: np.ndarray, strata: np.ndarray, n_strata: int) -> np.ndarray:
    """Per stratum, ``n_h`` times the variance of the Jeffreys posterior of its positive rate,
    ``n_h p~ (1 - p~) / (n_h + 2)`` with ``p~ = (k_h + 1/2) / (n_h + 1)``.

    Parameters
    ----------
    positive : ndarray, shape (n,)
        The labeled draws' labels as 0/1.
    strata : ndarray of int, shape (n,)
        Their strata.
    n_strata : int

    Returns
    -------
    ndarray, shape (K,)
        Per item, to be divided by the stratum's sample size as a variance is; 0 for strata without a label.
    """
    n = np.bincount(strata, minlength=n_strata).astype(float)
    k = np.bincount(strata, weights=np.asarray(positive, dtype=float), minlength=n_strata)
    rate = (k + 0.5) / (n + 1)  # the Jeffreys posterior mean
    return n * rate * (1 - rate) / (n + 2)


def floor_stratum_covariance(S: np.ndarray, slope_moments: np.ndarray, jacobian: np.ndarray, positive: np.ndarray,
                             strata: np.ndarray) -> np.ndarray:
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

    Returns
    -------
    ndarray, shape (K, m, m)
        ``S`` whose diagonal is raised, where it falls short, to the stratum's label variance floor
        (:func:`label_variance_floor`) times its mean of ``(Dg b_j)^2`` over all its items; NaN where ``S`` is.
    """
    K = slope_moments.shape[0]
    slope_sq = np.einsum("id,hde,ie->hi", jacobian, slope_moments, jacobian)  # (K, m)
    floor = label_variance_floor(positive, strata, K)[:, None] * slope_sq
    diag = np.einsum("hii->hi", S)
    out = S.copy()
    idx = np.arange(S.shape[1])
    out[:, idx, idx] = np.maximum(diag, floor)  # an undefined (NaN) variance stays undefined
    return out
