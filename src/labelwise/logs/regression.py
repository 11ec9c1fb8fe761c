"""Importance-weighted logistic regression on a log whose zero rewards were subsampled.

Mineiro, "On the Unimportance of Zeroes", Machined Learnings (blog, 2010),
section "Regression": the loss under the original distribution is
proportional to the ``w(l, r)``-weighted loss on the kept rows,
``E_D[loss] = E_D~[w(l, r) loss] / E_D~[w(l, r)]``, so an importance-weighted
fit on the kept rows targets the original distribution (at a variance that
grows as ``l`` shrinks).  The fit is Newton's method (iteratively reweighted
least squares) on the weighted log loss with a small ridge penalty.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["fit_weighted_logistic"]


def fit_weighted_logistic(features, reward, weight=None, *, ridge: float = 1e-4,
                          max_iter: int = 50, tol: float = 1e-8) -> np.ndarray:
    """Coefficients (intercept first) of a logistic regression minimizing the weighted log loss.

    Parameters
    ----------
    features : array_like, shape (n, m)
    reward : array_like, shape (n,)
        Rewards in ``[0, 1]``.
    weight : array_like, shape (n,), optional
        ``w(l, r)`` (:func:`~labelwise.logs.weights.keep_weights`) or 1.
    ridge : float
        Penalty ``ridge * W * |beta|^2 / 2`` (``W`` the total weight; the intercept unpenalized).

    Returns
    -------
    ndarray, shape (m + 1,)
        Predict with ``expit(beta[0] + features @ beta[1:])``.
    """
    X = np.column_stack([np.ones(len(reward)), np.asarray(features, dtype=float)])
    y = np.asarray(reward, dtype=float)
    w = np.ones_like(y) if weight is None else np.asarray(weight, dtype=float)
    penalty = ridge * w.sum() * np.r_[0.0, np.ones(X.shape[1] - 1)]
    beta = np.zeros(X.shape[1])
    for _ in range(max_iter):
        p = expit(X @ beta)
        grad = X.T @ (w * (p - y)) + penalty * beta
        hess = (X.T * (w * p * (1 - p))) @ X + np.diag(penalty + 1e-12)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.max(np.abs(step)) < tol:
            break
    return beta
