"""Stratified estimator of R and G with its delta-method covariance.

With strata of sizes ``N_h`` (``W_h = N_h / N``) and ``n_h`` items drawn
without replacement in stratum h,

    R-hat = sum_h W_h mean_{j in h} l_j,
    cov(G-hat) = sum_h W_h^2 (1 - n_h / N_h) S_h / n_h,

where ``S_h`` is the sample covariance of the projected losses
``u_j = Dg(R-hat) l_j`` in stratum h (the delta method of Marchant & Rubinstein (KDD 2021) 3.3.2
applied to the classical stratified variance).  A stratum with a single
label borrows the pooled within-stratum covariance; strata with no label
yet are left out and the others re-weighted (reported by ``n_empty``).
With binary labels (``slope_moments`` and ``positive`` given) each stratum's label
variance is floored at its Jeffreys posterior variance
(:mod:`~labelwise.estimators.label_floor`): a stratum whose sample holds no
positive does not claim to hold none.
"""

from __future__ import annotations

import numpy as np

from ..measures import Measure
from .label_floor import floor_stratum_covariance

__all__ = ["stratified_moments"]


def stratified_moments(
    measure: Measure,
    losses: np.ndarray,
    strata: np.ndarray,
    stratum_sizes: np.ndarray,
    finite_population: bool = True,
    slope_moments: np.ndarray | None = None,
    positive: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Stratified estimate of R and G with the covariance of G-hat.

    Parameters
    ----------
    measure : Measure
    losses : ndarray, shape (n, d)
        Losses of the labeled items (each item once).
    strata : ndarray of int, shape (n,)
        Stratum of each labeled item.
    stratum_sizes : ndarray of int, shape (K,)
        Number of pool items in each stratum.
    finite_population : bool
        Apply the finite-population correction ``1 - n_h / N_h``.  Without it
        (noisy labels: a stratum labeled in full still varies) the variance
        is ``s_h^2 / n_h``, which holds the label noise and overstates only
        the part due to which items were chosen.
    slope_moments : ndarray, shape (K, d, d), optional
        Each stratum's mean of ``b b^T``, ``b = l(x, 1) - l(x, 0)`` (binary
        labels, :func:`~labelwise.estimators.label_floor.stratum_slope_moments`);
        with ``positive``, floors each stratum's label variance.
    positive : ndarray, shape (n,), optional
        The labeled items' labels as 0/1.

    Returns
    -------
    R : ndarray, shape (d,)
    G : ndarray, shape (m,)
    cov_G : ndarray, shape (m, m)
    n_empty : int
        Strata with no label (left out of the estimate).
    """
    losses = np.asarray(losses, dtype=float)
    strata = np.asarray(strata, dtype=np.int64)
    sizes = np.asarray(stratum_sizes, dtype=float)
    K = sizes.size
    n_h = np.bincount(strata, minlength=K).astype(float)
    sampled = n_h > 0
    W = np.where(sampled, sizes, 0.0)
    if W.sum() == 0:
        d, m = measure.dim, measure.size
        return np.full(d, np.nan), np.full(m, np.nan), np.full((m, m), np.nan), K
    W = W / W.sum()
    means = np.zeros((K, losses.shape[1]))
    np.add.at(means, strata, losses)
    means[sampled] /= n_h[sampled, None]
    R = W @ means
    G = measure.value(R)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        J = measure.jacobian(R)
        u = losses @ J.T
        u_mean = means @ J.T
        centred = u - u_mean[strata]
        m = u.shape[1]
        S = np.zeros((K, m, m))
        np.add.at(S, strata, centred[:, :, None] * centred[:, None, :])
        multi = n_h >= 2
        S[multi] /= (n_h[multi] - 1)[:, None, None]
        if multi.any():
            pooled = np.einsum("h,hij->ij", n_h[multi] - 1, S[multi]) / (n_h[multi] - 1).sum()
        else:
            pooled = np.full((m, m), np.nan)
        single = n_h == 1
        S[single] = pooled
        if slope_moments is not None:
            S = floor_stratum_covariance(S, slope_moments, J, positive, strata)
        fpc = np.where(sampled, 1 - n_h / np.maximum(sizes, 1) if finite_population else 1.0, 0.0)
        coef = np.where(sampled, W**2 * fpc / np.maximum(n_h, 1), 0.0)
        # strata fully enumerated have fpc = 0 and contribute nothing (even if S is NaN)
        contrib = np.where((coef > 0)[:, None, None], S, 0.0)
        cov = np.einsum("h,hij->ij", coef, contrib)
    return R, G, cov, int((~sampled).sum())
