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

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..pool import Outputs
from .binary import BinaryMeasure
from .registry import register_measure

if TYPE_CHECKING:
    from ..pool import Pool

__all__ = ["PRCurve"]


def _grid_option(pool: Pool, system: int, arg: str) -> dict:
    """``thresholds``: ``pr_curve:<n_thresholds>`` evenly spaced over the system's scores (50 by default)."""
    return {"thresholds": PRCurve.grid(pool, int(arg) if arg else 50, system=system).thresholds}


@register_measure("pr_curve", options=_grid_option, usage=("pr_curve", "pr_curve:<n_thresholds>"))
class PRCurve(BinaryMeasure):
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
    spec_fields = ("thresholds", *BinaryMeasure.spec_fields)

    def __init__(self, thresholds: Sequence[float] | np.ndarray, system: int = 0, positive: int = 1,
                 system_name: str | None = None):
        tau = np.unique(np.asarray(thresholds, dtype=float))
        if tau.size == 0 or not np.all(np.isfinite(tau)):
            raise ValueError("thresholds: give at least one finite threshold")
        self.thresholds = tau
        self.L = tau.size
        super().__init__(system, positive, system_name)

    def _dim(self) -> int:
        return 2 * self.L + 1

    def _components(self) -> tuple[str, ...]:
        return tuple(f"{stat}@{t:.6g}" for stat in ("precision", "recall") for t in self.thresholds)

    @classmethod
    def grid(cls, pool: Pool, n_thresholds: int = 50, system: int = 0, positive: int = 1,
             system_name: str | None = None) -> PRCurve:
        """A curve with ``n_thresholds`` evenly spaced between the smallest and largest score of ``system``.

        Parameters
        ----------
        pool : Pool
            Supplies the system's scores (or probabilities of ``positive``).
        n_thresholds : int
            Number of thresholds (one when every score is the same).
        system, positive, system_name
            As for :class:`PRCurve`.

        Returns
        -------
        PRCurve
        """
        curve = cls([0.0], system=system, positive=positive, system_name=system_name)
        scores = curve._scores(pool.outputs())
        lo, hi = float(np.min(scores)), float(np.max(scores))
        return cls(np.linspace(lo, hi, n_thresholds) if hi > lo else [lo], system=system, positive=positive,
                   system_name=system_name)

    # -- helpers -----------------------------------------------------------
    def _scores(self, outputs: Outputs) -> np.ndarray:
        if outputs.scores is not None:
            return outputs.scores[:, self.system]
        p = outputs.require("probs", self.kind)[:, self.system]
        return p if p.ndim == 1 else p[:, self.positive]

    def _k(self, outputs: Outputs) -> np.ndarray:
        """Number of thresholds ``<= score`` per item: ``1{f >= tau_i}`` iff ``i < k``."""
        return np.searchsorted(self.thresholds, self._scores(outputs), side="right")

    def loss_key(self, outputs: Outputs) -> np.ndarray:
        """The loss depends on x only through the number of thresholds below its score."""
        return self._k(outputs).astype(np.int64)

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
