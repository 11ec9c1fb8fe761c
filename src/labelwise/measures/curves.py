"""Precision-recall curves as vector generalized measures.

Example 1 of N. G. Marchant and B. I. P. Rubinstein, "Needle in a Haystack:
Label-Efficient Evaluation under Extreme Class Imbalance", KDD 2021.  With
thresholds ``tau_1 < ... < tau_L`` the loss is
``[1{f >= tau_i}]_i, [y 1{f >= tau_i}]_i, y`` (d = 2L + 1) and
``G = [R_{L+i} / R_i]_i (precision), [R_{L+i} / R_{2L+1}]_i (recall)``.
Everything that runs over the whole pool works on ``k(x)``, the number of
thresholds at or below the item's score, with sorting and cumulative sums:
no (N x L) array is ever built.
"""

from __future__ import annotations

import numpy as np

from ..pool import Outputs
from .registry import register_measure
from .thresholds import ThresholdMeasure, grid_option

__all__ = ["PRCurve"]


class PRCurve(ThresholdMeasure):
    """Precision and recall of one system at each threshold of a grid.

    Parameters
    ----------
    thresholds : array-like, shape (L,)
        Classification thresholds on the system's score (sorted internally).
    system : int
        Which system's scores to threshold.
    positive : int
        The positive class.
    system_name : str, optional
        Used in component names.
    """

    kind = "pr_curve"

    def _dim(self) -> int:
        return 2 * self.L + 1

    def _components(self) -> tuple[str, ...]:
        return tuple(f"{stat}@{t:.6g}" for stat in ("precision", "recall") for t in self.thresholds)

    # -- the measure -----------------------------------------------------
    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        k = self._k(outputs)
        yb = (np.asarray(y) == self.positive).astype(float)
        above = (np.arange(self.L)[None, :] < k[:, None]).astype(float)
        return np.concatenate([above, above * yb[:, None], yb[:, None]], axis=1)

    def g(self, R: np.ndarray) -> np.ndarray:
        L = self.L
        num = R[..., L : 2 * L]
        return np.concatenate([num / R[..., :L], num / R[..., 2 * L : 2 * L + 1]], axis=-1)

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        R = np.asarray(R, dtype=float)
        L = self.L
        J = np.zeros(R.shape[:-1] + (2 * L, 2 * L + 1))
        i = np.arange(L)
        pp, tp, pos = R[..., :L], R[..., L : 2 * L], R[..., 2 * L]
        J[..., i, i] = -tp / pp**2
        J[..., i, L + i] = 1 / pp
        J[..., L + i, L + i] = 1 / pos[..., None]
        J[..., L + i, 2 * L] = -tp / pos[..., None] ** 2
        return J

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        """``||Dg(R) l(x, y)||^2`` in O(n + L) from prefix sums over thresholds.

        With ``P_i`` precision and ``Q_i`` recall at ``R``:
        ``sum_{i<k} (y - P_i)^2 / R_i^2 + y sum_i (1{i<k} - Q_i)^2 / R_{2L+1}^2``.
        """
        L = self.L
        R = np.asarray(R, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            # undefined Jacobian entries count as zero, as in Measure.influence_norm_sq
            P = np.where(R[:L] > 0, R[L : 2 * L] / R[:L], 0.0)
            Q = np.where(R[2 * L] > 0, R[L : 2 * L] / R[2 * L], 0.0)
            inv_pp2 = np.where(R[:L] > 0, 1 / R[:L] ** 2, 0.0)
            inv_pos2 = 1 / R[2 * L] ** 2 if R[2 * L] > 0 else 0.0
        zero = np.zeros(1)
        prec_y0 = np.concatenate([zero, np.cumsum(P**2 * inv_pp2)])
        prec_y1 = np.concatenate([zero, np.cumsum((1 - P) ** 2 * inv_pp2)])
        rec_above = np.concatenate([zero, np.cumsum((1 - Q) ** 2)])
        rec_below = np.concatenate([zero, np.cumsum(Q**2)])
        k = self._k(outputs)
        yb = np.asarray(y) == self.positive
        rec = rec_above[k] + (rec_below[-1] - rec_below[k])
        return np.where(yb, prec_y1[k] + rec * inv_pos2, prec_y0[k])

    def loss_is_nonzero(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        return (self._k(outputs) > 0) | (np.asarray(y) == self.positive)

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        k = self._k(outputs)
        p1 = label_probs[:, self.positive]
        L = self.L
        # number (or expected positives) with k > i, for each i: reverse cumulative counts.
        count_k = np.bincount(k, weights=label_probs.sum(axis=1), minlength=L + 1)
        pos_k = np.bincount(k, weights=p1, minlength=L + 1)
        above = np.cumsum(count_k[::-1])[::-1][1:]
        tp = np.cumsum(pos_k[::-1])[::-1][1:]
        return np.concatenate([above, tp, [p1.sum()]]).astype(float)


register_measure("pr_curve", PRCurve, options=grid_option(PRCurve, 50, quantiles=False),
                 usage=("pr_curve", "pr_curve:<n_thresholds>"))
