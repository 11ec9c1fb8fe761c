"""Inclusion in a successive (popularity-weighted, without replacement) sample: the order-sampling approximation.

A crowd that answers ``k`` distinct positives of a node, each next one drawn
by popularity ``w`` among those not yet drawn, is successive sampling; it is
exactly order sampling with exponential ranking variables (Rosén, "Asymptotic
theory for order sampling", J. Statist. Plann. Inference 62, 1997): every
eligible positive ``i`` gets ``Q_i = X_i / w_i`` with ``X_i ~ Exp(1)``
independent, and the ``k`` smallest ``Q`` are the answer.  Think of ``Q_i``
as the time positive ``i`` arrives in a race with rate ``w_i``; the answer
stops at the ``k``-th arrival.  Replacing that random stopping time by the
deterministic ``xi`` at which ``k`` arrivals are expected,

    sum_j (1 - exp(-w_j xi)) = k            (sum over the eligible positives),

gives the inclusion probability ``pi_i = P(Q_i <= xi) = 1 - exp(-w_i xi)``
(Rosén 1997, Sec. 3: asymptotically exact as the sample grows; exact when
the weights are equal, ``pi = k / N``, and when ``k`` reaches the eligible
count, ``pi = 1``).  The left side is increasing and concave in ``xi``; at
``xi_0 = k / sum_j w_j`` it is at most ``k`` (``1 - e^{-x} <= x``), so Newton's
method from ``xi_0`` climbs to the root monotonically.

Here the eligible positives of a query come in two kinds: found ones with
weights ``w_j`` (each eligible with chance ``s``: one minus the share an
exclude list drawn uniformly from them takes out, in the mean), and ``g``
unfound ones of a common weight ``w_0``.  The expected number of new
positives returned is ``g (1 - exp(-w_0 xi))``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RaceRows", "expected_new", "race_time"]

TOLERANCE = 1e-9  # relative change of xi at which Newton's method stops
MAX_STEPS = 100


class RaceRows:
    """Rows of successive-sampling problems that share their found positives per group.

    Parameters
    ----------
    pair_group, pair_weight : numpy.ndarray
        The found positives: the group (node) each belongs to, and its weight.
    n_groups : int
    share : numpy.ndarray
        ``(n_groups, n_rows_per_group)`` chance each found positive of the group is eligible.
    unfound : numpy.ndarray
        ``(n_groups,)`` unfound positives of each group (any real number >= 0).
    unfound_weight : float or numpy.ndarray
        Weight of each unfound positive (per group, or one for all).
    k : numpy.ndarray
        ``(n_rows_per_group,)`` or ``(n_groups, n_rows_per_group)`` answers asked for.
    """

    def __init__(self, pair_group: np.ndarray, pair_weight: np.ndarray, n_groups: int, share: np.ndarray,
                 unfound: np.ndarray, unfound_weight: float | np.ndarray, k: np.ndarray) -> None:
        self.pair_group, self.pair_weight, self.n_groups = pair_group, pair_weight, n_groups
        self.share = np.asarray(share, dtype=float)
        shape = self.share.shape
        self.unfound = np.broadcast_to(np.asarray(unfound, dtype=float).reshape(-1, 1), shape)
        self.unfound_weight = np.broadcast_to(np.asarray(unfound_weight, dtype=float).reshape(-1, 1), shape)
        self.k = np.broadcast_to(np.asarray(k, dtype=float), shape)
        found_count = np.bincount(pair_group, minlength=n_groups).astype(float)[:, None]
        self.capacity = self.share * found_count + self.unfound  # eligible positives, expected
        self.found_mass = np.bincount(pair_group, weights=pair_weight, minlength=n_groups)[:, None]

    def arrivals(self, xi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Expected arrivals by ``xi`` and their derivative in ``xi`` (arrays like ``share``)."""
        decay = np.exp(-self.pair_weight[:, None] * xi[self.pair_group])  # (pairs, rows per group)
        found = np.zeros(self.share.shape)
        slope = np.zeros(self.share.shape)
        for c in range(self.share.shape[1]):  # a handful of configurations: bincount per column
            found[:, c] = np.bincount(self.pair_group, weights=1.0 - decay[:, c], minlength=self.n_groups)
            slope[:, c] = np.bincount(self.pair_group, weights=self.pair_weight * decay[:, c],
                                      minlength=self.n_groups)
        unfound_decay = np.exp(-self.unfound_weight * xi)
        return (self.share * found + self.unfound * (1.0 - unfound_decay),
                self.share * slope + self.unfound * self.unfound_weight * unfound_decay)


def race_time(rows: RaceRows) -> np.ndarray:
    """``xi`` of every row: ``inf`` where ``k`` reaches the expected eligible count (every one is returned)."""
    saturated = rows.k >= rows.capacity - 1e-12
    mass = rows.share * rows.found_mass + rows.unfound * rows.unfound_weight
    xi = np.where(saturated | (mass <= 0), 0.0, rows.k / np.where(mass > 0, mass, 1.0))
    for _ in range(MAX_STEPS):
        value, slope = rows.arrivals(xi)
        step = np.divide(rows.k - value, slope, out=np.zeros_like(xi), where=(slope > 0) & ~saturated)
        xi = xi + step
        if np.all(np.abs(step) <= TOLERANCE * xi):
            break
    return np.where(saturated, np.inf, xi)


def expected_new(rows: RaceRows, xi: np.ndarray) -> np.ndarray:
    """Expected unfound positives among the answers, ``g (1 - exp(-w_0 xi))`` (``g`` where saturated)."""
    return rows.unfound * -np.expm1(-rows.unfound_weight * xi)
