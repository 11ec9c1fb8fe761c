"""Betting confidence sequences for the mean of importance-weighted, bounded increments.

Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
betting", JRSS-B 86(1), 2024 ("WSR" below).  For every candidate value
``t`` of a linear target, increments ``X_j(t)`` have conditional mean 0
under the null ``H0(t)`` given the past, and lie in ``[W lo(t), W hi(t)]``
with ``W`` a bound on the importance weights known before the draw.  The
hedged capital process (WSR, Theorem 3, eq. 26)

    K_n(t) = 1/2 prod_j (1 + lam+_j X_j(t)) + 1/2 prod_j (1 - lam-_j X_j(t))

is a nonnegative martingale under ``H0(t)`` whenever the bets ``lam+-_j`` are
fixed before draw ``j`` and keep every factor nonnegative
(``lam+ <= c / (W |lo(t)|)``, ``lam- <= c / (W hi(t))``).  By Ville's
inequality ``P(sup_n K_n(t) >= 1/alpha) <= alpha``, so the set of ``t``
whose capital has never reached ``1/alpha`` is a confidence sequence: it
holds uniformly over every batch, whatever rule decides when to stop.

The bets are the predictable plug-in of WSR eq. (27),
``lam = sqrt(2 log(2/alpha) / (sigma2 h))``, with ``sigma2`` the running
variance of the increments of the batches before (WSR's regularized
estimate, one pseudo-observation at the bound) and ``h`` a planned number of
draws (the session's budget): the sequence is then narrowest near ``h`` and
stays valid before and after.  Bets are fixed per batch, since an adaptive
design fixes its proposal per batch.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rejected_by_batch"]

#: Share of the largest bet that keeps every factor nonnegative (WSR's truncation ``c``).
TRUNCATION = 0.5


def rejected_by_batch(values: np.ndarray, counts: np.ndarray, batches: np.ndarray, low: np.ndarray,
                      high: np.ndarray, alpha: float, horizon: float) -> np.ndarray:
    """For every batch, which candidate values the confidence sequence has excluded so far.

    Parameters
    ----------
    values : ndarray, shape (n, G)
        Increment ``X_j(t)`` of each draw ``j`` under each candidate ``t``
        (mean 0 given the past under ``H0(t)``).
    counts : ndarray of int, shape (n,)
        How many identical draws each row stands for.
    batches : ndarray of int, shape (n,)
        Batch of each row, nondecreasing; bets are fixed per batch.
    low, high : ndarray, shape (G,)
        Known bounds ``low <= X_j(t) <= high`` of every increment, ``low <= 0 <= high``
        (weight bound included).
    alpha : float
        Error level: ``1 - level``.
    horizon : float
        Planned number of draws the bets are tuned for.

    Returns
    -------
    ndarray of bool, shape (B, G)
        Row ``b``: whether ``t`` was excluded by the end of the ``b``-th batch
        (the running intersection of the sequence).
    """
    G = values.shape[1]
    cuts = np.flatnonzero(np.diff(batches)) + 1
    starts, stops = np.r_[0, cuts], np.r_[cuts, len(batches)]
    spread = np.maximum(high - low, np.finfo(float).tiny)
    # one pseudo-observation of variance (spread / 2)^2, as WSR regularize sigma2 (eq. 27)
    sum_x, sum_sq, n = np.zeros(G), np.zeros(G), 0.0
    log_plus, log_minus = np.zeros(G), np.zeros(G)
    cap_plus = TRUNCATION / np.maximum(-low, 1e-12 * spread)
    cap_minus = TRUNCATION / np.maximum(high, 1e-12 * spread)
    threshold = np.log(1.0 / alpha)
    excluded = np.zeros(G, dtype=bool)
    out = np.empty((starts.size, G), dtype=bool)
    for b, (s, e) in enumerate(zip(starts, stops)):
        mean = sum_x / max(n, 1.0)
        var = ((spread / 2) ** 2 + sum_sq - n * mean**2) / (n + 1.0)
        bet = np.sqrt(2 * np.log(2 / alpha) / (np.maximum(var, 1e-300) * max(horizon, n, 1.0)))
        x, c = values[s:e], counts[s:e, None]
        log_plus += np.sum(c * np.log1p(np.minimum(bet, cap_plus) * x), axis=0)
        log_minus += np.sum(c * np.log1p(-np.minimum(bet, cap_minus) * x), axis=0)
        excluded |= np.logaddexp(log_plus, log_minus) - np.log(2.0) >= threshold
        out[b] = excluded
        sum_x += np.sum(c * x, axis=0)
        sum_sq += np.sum(c * x**2, axis=0)
        n += float(c.sum())
    return out
