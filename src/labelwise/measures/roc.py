"""ROC curves as vector generalized measures over the score bins of :mod:`labelwise.measures.auc`.

With thresholds ``tau_1 < ... < tau_L`` and the one-hot loss over
``(class, bin)`` cells of :class:`~labelwise.measures.auc.ScoreBinMeasure`,
``R = (P_b, N_b)_b`` and

    FPR_i = sum_{b >= i} N_b / sum_b N_b,   TPR_i = sum_{b >= i} P_b / sum_b P_b

(``score >= tau_i`` iff the bin is ``>= i``).  The points are exact at the
thresholds, and the trapezoid area under ``(0, 0), (FPR_L, TPR_L), ...,
(FPR_1, TPR_1), (1, 1)`` is the binned AUC of the same thresholds
(:class:`~labelwise.measures.auc.AUC`): the trapezoid over bin ``b`` is
``N_b (P_{>b} + P_b / 2)``, ties in a bin counting one half.
"""

from __future__ import annotations

import numpy as np

from .auc import ScoreBinMeasure
from .registry import register_measure
from .thresholds import grid_option

__all__ = ["ROCCurve", "roc_area"]


class ROCCurve(ScoreBinMeasure):
    """False and true positive rates of one system at each threshold of a grid.

    Components ``fpr@<tau>`` for every threshold, then ``tpr@<tau>``.

    Parameters
    ----------
    thresholds : array-like, shape (L,)
        Classification thresholds on the system's score (sorted internally).
    system, positive, system_name
        As for :class:`~labelwise.measures.BinaryMeasure`.
    """

    kind = "roc_curve"

    def _components(self) -> tuple[str, ...]:
        return tuple(f"{stat}@{t:.6g}" for stat in ("fpr", "tpr") for t in self.thresholds)

    def _at_or_above(self) -> np.ndarray:
        """``M[i, b] = 1{b >= i + 1}``: bin ``b`` scores at or above threshold ``i`` (0-based), ``(L, B)``."""
        return (np.arange(self.n_bins)[None, :] > np.arange(self.L)[:, None]).astype(float)

    def g(self, R: np.ndarray) -> np.ndarray:
        P, N = self._shares(R)
        M = self._at_or_above()
        return np.concatenate([(N @ M.T) / N.sum(axis=-1, keepdims=True),
                               (P @ M.T) / P.sum(axis=-1, keepdims=True)], axis=-1)

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """``dFPR_i / dN_b = (1{b >= i} - FPR_i) / N`` and likewise for TPR over P; zero across classes."""
        P, N = self._shares(R)
        L, B = self.L, self.n_bins
        M = self._at_or_above()
        G = self.g(R)
        J = np.zeros(np.shape(R)[:-1] + (2 * L, 2 * B))
        J[..., :L, B:] = (M - G[..., :L, None]) / N.sum(axis=-1)[..., None, None]
        J[..., L:, :B] = (M - G[..., L:, None]) / P.sum(axis=-1)[..., None, None]
        return J


def roc_area(G: np.ndarray) -> np.ndarray:
    """The trapezoid area under an estimated :class:`ROCCurve`, closed by ``(0, 0)`` and ``(1, 1)``.

    Parameters
    ----------
    G : ndarray, shape (..., 2 L)
        The curve's components: ``L`` false positive rates, then ``L`` true
        positive rates, thresholds increasing.

    Returns
    -------
    ndarray, shape (...)
    """
    G = np.asarray(G, dtype=float)
    L = G.shape[-1] // 2
    edge0, edge1 = np.zeros(G.shape[:-1] + (1,)), np.ones(G.shape[:-1] + (1,))
    fpr = np.concatenate([edge1, G[..., :L], edge0], axis=-1)
    tpr = np.concatenate([edge1, G[..., L:], edge0], axis=-1)
    # points run from (1, 1) to (0, 0): FPR decreases, hence the minus sign
    return -np.sum(np.diff(fpr, axis=-1) * (tpr[..., 1:] + tpr[..., :-1]) / 2, axis=-1)


register_measure("roc_curve", ROCCurve, options=grid_option(ROCCurve, 50, quantiles=True),
                 usage=("roc_curve", "roc_curve:<n_thresholds>"))
