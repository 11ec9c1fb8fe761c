"""Importance-sampling estimator of R and G = g(R) with its delta-method covariance.

Marchant & Rubinstein (KDD 2021) eq. (1): ``R-hat = (1/n) sum_j w_j l(x_j, y_j)`` with
``w_j = p(x_j) / q_{j-1}(x_j)``, ``G-hat = g(R-hat)``.  Marchant & Rubinstein (KDD 2021) 3.3.2:

    Sigma-hat = Dg (1/n sum_j w_j^2 l_j l_j^T - R R^T) Dg^T

at the weights the draws were drawn with (the paper's reweighting
``c_j = q_{j-1}(x_j) / q_n(x_j)`` of draw ``j`` is not offered: it
understates the error when the early proposals were poor), and
``cov(G-hat) = Sigma-hat / n``.  The
covariance is formed from the projected losses ``u_j = w_j Dg l_j`` (n x m),
so the cost is O(n d m) and no d x d matrix is needed when m < d.

Every function broadcasts over leading axes: ``losses`` of shape
``(..., n, d)`` give one estimate per leading index (e.g. per simulated
repeat), which is how coverage is checked over thousands of repeats at once.
"""

from __future__ import annotations

import numpy as np

from ..measures import Measure

__all__ = ["importance_moments", "importance_risk", "importance_totals_covariance"]


def importance_risk(losses: np.ndarray, weights: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """``R-hat = mean_j w_j l_j`` over the last-but-one axis (Marchant & Rubinstein (KDD 2021) eq. 1).

    ``counts`` (default 1) says how many identical draws each row stands for.
    """
    if counts is None:
        return np.einsum("...n,...nd->...d", weights, losses) / losses.shape[-2]
    return np.einsum("...n,...nd->...d", weights * counts, losses) / np.sum(counts, axis=-1)[..., None]


def importance_moments(
    measure: Measure,
    losses: np.ndarray,
    weights: np.ndarray,
    counts: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IS estimate of R and G with the covariance of G-hat.

    Parameters
    ----------
    measure : Measure
    losses : ndarray, shape (..., n, d)
        Losses of the drawn items at their labels (one row per draw).
    weights : ndarray, shape (..., n)
        ``p(x_j) / q_{j-1}(x_j)`` at the time of each draw.
    counts : ndarray, shape (..., n), optional
        How many identical draws each row stands for (default 1).

    Returns
    -------
    R : ndarray, shape (..., d)
    G : ndarray, shape (..., m)
        NaN where g is undefined at R.
    cov_G : ndarray, shape (..., m, m)
        Estimated covariance of G-hat (NaN where the Jacobian is undefined).
    """
    losses = np.asarray(losses, dtype=float)
    weights = np.asarray(weights, dtype=float)
    c = np.ones_like(weights) if counts is None else np.asarray(counts, dtype=float)
    n = np.sum(c, axis=-1)[..., None, None]
    R = importance_risk(losses, weights, counts)
    G = measure.value(R)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        J = measure.jacobian(R)
        u = weights[..., None] * np.einsum("...nd,...md->...nm", losses, J)
        r = np.einsum("...d,...md->...m", R, J)
        second = np.einsum("...n,...nm,...nk->...mk", c, u, u) / n
        cov = (second - r[..., :, None] * r[..., None, :]) / n
    return R, G, cov


def importance_totals_covariance(losses: np.ndarray, weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The plug-in covariance of ``R-hat`` itself (static proposal), ``(mean_j w_j^2 l_j l_j^T - R R^T) / n``, (d, d).

    The covariance of :func:`importance_moments` before the Jacobian (for Fieller's interval of a ratio,
    :mod:`~labelwise.estimators.fieller`); ``counts`` says how many identical draws each row stands for.
    """
    losses = np.asarray(losses, dtype=float)
    c, w = np.asarray(counts, dtype=float), np.asarray(weights, dtype=float)
    n = c.sum()
    R = importance_risk(losses, w, c)
    return ((losses.T * (c * w**2 / n)) @ losses - np.outer(R, R)) / n
