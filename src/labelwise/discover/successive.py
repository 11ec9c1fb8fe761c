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
weights ``w_j``, each eligible with chance ``s`` (one minus the share an
exclude list drawn uniformly from them takes out: the list is replaced by
its mean effect), and classes of unfound ones, ``g`` of weight ``w`` each.
The expected number of new positives returned is ``sum g (1 - exp(-w xi))``
over the unfound classes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RaceRows", "expected_new", "race_time"]

TOLERANCE = 1e-9  # relative change of xi at which Newton's method stops
MAX_STEPS = 100


class RaceRows:
    """Rows of successive-sampling problems: per group (node), its found and its unfound positives.

    Parameters
    ----------
    n_groups : int
    found_group, found_weight : numpy.ndarray
        The found positives: the group each belongs to, and its weight.
    share : numpy.ndarray
        ``(n_groups, n_rows_per_group)`` chance each found positive of the group is eligible.
    unfound_group, unfound_weight, unfound_count : numpy.ndarray
        Classes of unfound positives: the group, the weight, and how many of that weight (any real >= 0).
    k : numpy.ndarray
        ``(n_rows_per_group,)`` or ``(n_groups, n_rows_per_group)`` answers asked for.
    """

    def __init__(self, n_groups: int, found_group: np.ndarray, found_weight: np.ndarray, share: np.ndarray,
                 unfound_group: np.ndarray, unfound_weight: np.ndarray, unfound_count: np.ndarray,
                 k: np.ndarray) -> None:
        self.n_groups = n_groups
        self.found_group, self.found_weight = found_group, found_weight
        self.unfound_group, self.unfound_weight, self.unfound_count = unfound_group, unfound_weight, unfound_count
        self.share = np.asarray(share, dtype=float)
        self.k = np.broadcast_to(np.asarray(k, dtype=float), self.share.shape)

        def per_group(group: np.ndarray, values: np.ndarray) -> np.ndarray:
            return np.bincount(group, weights=values, minlength=n_groups)[:, None]

        self.unfound = per_group(unfound_group, unfound_count)  # unfound positives of each group
        self.capacity = self.share * per_group(found_group, np.ones(found_group.size)) + self.unfound
        self.mass = self.share * per_group(found_group, found_weight) + per_group(unfound_group,
                                                                                 unfound_weight * unfound_count)

    def _sums(self, group: np.ndarray, weight: np.ndarray, count: np.ndarray, xi: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """Per group and row: ``sum count (1 - exp(-w xi))`` and its derivative ``sum count w exp(-w xi)``."""
        decay = np.exp(-weight[:, None] * xi[group])  # (pairs, rows per group)
        arrived, slope = np.zeros(xi.shape), np.zeros(xi.shape)
        for c in range(xi.shape[1]):  # a handful of configurations: bincount per column
            arrived[:, c] = np.bincount(group, weights=count * (1.0 - decay[:, c]), minlength=self.n_groups)
            slope[:, c] = np.bincount(group, weights=count * weight * decay[:, c], minlength=self.n_groups)
        return arrived, slope

    def arrivals(self, xi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Expected arrivals by ``xi`` of the found and of the unfound positives, and their slopes in ``xi``."""
        found, found_slope = self._sums(self.found_group, self.found_weight, np.ones(self.found_group.size), xi)
        unfound, unfound_slope = self._sums(self.unfound_group, self.unfound_weight, self.unfound_count, xi)
        return self.share * found, self.share * found_slope, unfound, unfound_slope


def race_time(rows: RaceRows) -> np.ndarray:
    """``xi`` of every row: ``inf`` where ``k`` reaches the expected eligible count (every one is returned)."""
    saturated = rows.k >= rows.capacity - 1e-12
    xi = np.where(saturated | (rows.mass <= 0), 0.0, rows.k / np.where(rows.mass > 0, rows.mass, 1.0))
    for _ in range(MAX_STEPS):
        found, found_slope, unfound, unfound_slope = rows.arrivals(xi)
        slope = found_slope + unfound_slope
        step = np.divide(rows.k - found - unfound, slope, out=np.zeros_like(xi), where=(slope > 0) & ~saturated)
        xi = xi + step
        if np.all(np.abs(step) <= TOLERANCE * xi):
            break
    return np.where(saturated, np.inf, xi)


def expected_new(rows: RaceRows, xi: np.ndarray) -> np.ndarray:
    """Expected unfound positives among the answers, ``sum g (1 - exp(-w xi))`` over the unfound classes."""
    finite = np.where(np.isfinite(xi), xi, 0.0)
    _, _, unfound, _ = rows.arrivals(finite)
    return np.where(np.isfinite(xi), unfound, rows.unfound)
