"""Optimal inclusion probabilities for Poisson (Bernoulli) sampling (seed 002, section 3.1).

With independent inclusion indicators ``s_n ~ Bernoulli(b_n)`` the error of
the Horvitz-Thompson-type estimator (seed 002 eq. 18) depends on ``b``
through ``sum_n h_n^2 / b_n`` (eq. 25).  Minimising it subject to
``sum_n b_n = M`` and ``0 <= b_n <= 1`` is a water-filling problem
(appendix B.1, Algorithm 3): the items with the largest deviations ``h`` are
taken with certainty (``b = 1``) and the others get ``b_n = h_n (M - k) /
(H - S_k)``, with ``k`` the number of certain items and ``S_k`` their total
deviation (eqs. 74-77).

This module holds the water-filling step, which the ``poisson`` and
``online-poisson`` designs of issue 4 build on.
"""

from __future__ import annotations

import numpy as np

__all__ = ["inclusion_probabilities"]


def inclusion_probabilities(h: np.ndarray, budget: float) -> np.ndarray:
    """Inclusion probabilities minimising ``sum h^2 / b`` with ``sum b = budget`` (seed 002 Algorithm 3).

    Parameters
    ----------
    h : ndarray, shape (N,)
        Non-negative deviations ``|h_n|`` (seed 002 eq. 12).
    budget : float
        Expected number of items to label, ``M``.

    Returns
    -------
    ndarray, shape (N,)
        ``b`` in [0, 1].  ``b`` sums to ``min(budget, N)`` unless fewer than
        ``budget`` items have ``h > 0``: items with ``h = 0`` carry no error
        and get ``b = 0``, so then every item with ``h > 0`` is taken with
        certainty and the sum falls short.

    Notes
    -----
    With ``h`` sorted in decreasing order and ``S_k`` the sum of the ``k``
    largest, the optimum takes the smallest ``k`` with
    ``h_(k+1) (M - k) <= H - S_k`` (eq. 77 with the largest uncertain
    ``b <= 1``), found for every ``k`` at once from cumulative sums.  Only
    the ``ceil(M)`` largest deviations can be certain, so they are found by
    partitioning and only they are sorted: O(N + M log M), vectorised.
    """
    h = np.asarray(h, dtype=float)
    if h.ndim != 1:
        raise ValueError(f"h: expected a 1-d array, got shape {h.shape}")
    if not np.all(np.isfinite(h)) or np.any(h < 0):
        raise ValueError("h: deviations must be finite and non-negative")
    if not budget > 0:
        raise ValueError(f"budget: must be positive, got {budget}")
    N = h.size
    positive = int(np.count_nonzero(h))
    if budget >= positive:
        return (h > 0).astype(float)
    # only the ceil(M) largest deviations can saturate (k < M): partition, then sort just those
    K = min(N, int(np.ceil(budget)))
    top = np.argpartition(-h, K - 1)[:K] if K < N else np.arange(N)
    top = top[np.argsort(-h[top], kind="stable")]
    hs = h[top]
    total = h.sum()
    taken = np.concatenate([[0.0], np.cumsum(hs)[:-1]])  # S_k for k = 0..K-1
    k = np.arange(K)
    ok = hs * (budget - k) <= total - taken
    # ok holds at k = ceil(M) - 1 at the latest: there M - k <= 1 and h_(k+1) <= H - S_k
    first = int(np.argmax(ok))
    b = np.minimum(h * (budget - first) / (total - taken[first]), 1.0)
    b[top[:first]] = 1.0
    return b
