"""Macro- and micro-averaged F1 of a multi-class system as generalized measures.

The F1 row of Table 1 of N. G. Marchant and B. I. P. Rubinstein, "Needle in a
Haystack: Label-Efficient Evaluation under Extreme Class Imbalance", KDD 2021,
averaged over classes; the loss layout and the fast paths follow
:mod:`labelwise.measures.multiclass`.
"""

from __future__ import annotations

import numpy as np

from ..pool import Outputs
from .base import RatioOfTotals
from .multiclass import MultiClassMeasure, n_classes_option
from .registry import register_measure

__all__ = ["MacroF1", "MicroF1"]


@register_measure("macro_f1", options=n_classes_option)
class MacroF1(MultiClassMeasure):
    """Macro-averaged F1 score, a scalar generalized measure.

    The F1 row of Table 1 (Marchant and Rubinstein, KDD 2021) applied to each
    class ``c`` (``F1_c = TP_c / ((P_c + PP_c) / 2) = 2TP_c / (2TP_c + FP_c + FN_c)``):

    * loss ``l(x, y) = [1{y=c, f(x)=c}]_{c<C} ++ [(1{y=c} + 1{f(x)=c}) / 2]_{c<C}``
      (``d = 2C``),
    * ``g(R) = (1 / |A|) sum_{c in A} R_c / R_{C+c}`` with
      ``A = {c : R_{C+c} > 0}``; one component named ``macro_f1``.

    Parameters
    ----------
    n_classes, system, system_name
        As for :class:`~labelwise.measures.multiclass.MultiClassMeasure`.

    Notes
    -----
    **Classes with a zero denominator.**  ``R_{C+c} = 0`` means class ``c``
    neither occurs nor is predicted, so its F1 is 0/0.  Such classes are *left
    out of the average* (the convention of
    ``sklearn.metrics.f1_score(average="macro")`` without explicit ``labels``,
    which averages over the classes present in the truth or the predictions),
    and ``g`` is NaN only when every class is left out.  The Jacobian follows
    the same rule: away from the boundaries ``R_{C+c} = 0`` the set ``A`` is
    locally constant, so the columns of excluded classes are 0 and, for
    ``c in A``, ``dg/dR_c = 1 / (|A| R_{C+c})`` and
    ``dg/dR_{C+c} = -R_c / (|A| R_{C+c}^2)`` (NaN everywhere when ``A`` is
    empty, like ``g``).

    **Caveat (bias of the plug-in estimate).**  For the population ``R`` a
    class counts whenever it occurs or is predicted anywhere.  An estimate
    ``R_hat`` (a weighted mean of losses over the labelled sample) has
    ``R_hat_{C+c} = 0`` whenever no sampled item has ``y = c`` or
    ``f(x) = c``; that class is then dropped from the average although it
    counts in the population, so ``g(R_hat)`` averages over fewer classes.
    This bias vanishes once every such class has been sampled and matters
    most for classes that are rare in both the truth and the predictions.
    Since ``g`` is discontinuous at these boundaries, the
    delta-method intervals of Marchant and Rubinstein hold only when every class of ``A``
    has a denominator bounded away from 0.  Treating excluded classes as
    ``F1_c = 0`` instead would make ``g`` depend on classes that do not exist
    in the data, and returning NaN for any excluded class would make every
    estimate on a label set with an unused class undefined.
    """

    kind = "macro_f1"

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """``(n, 2C)`` loss ``[1{y=c, f=c}]_c ++ [(1{y=c} + 1{f=c}) / 2]_c``."""
        Y, F = self._onehots(outputs, y)
        return np.concatenate([Y * F, (Y + F) / 2], axis=1)

    def _parts(self, R: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``R``, true-positive rates, denominators (1 where 0), active classes and ``1 / |A|`` (NaN if none)."""
        R = np.asarray(R, dtype=float)
        C = self.n_classes
        tp, den = R[..., :C], R[..., C:]
        active = den > 0
        safe = np.where(active, den, 1.0)
        n_active = active.sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_k = np.where(n_active > 0, 1.0 / n_active, np.nan)
        return R, tp, safe, active, inv_k

    def g(self, R: np.ndarray) -> np.ndarray:
        """Mean of ``R_c / R_{C+c}`` over classes with ``R_{C+c} > 0`` (NaN if none), ``(..., 2C) -> (..., 1)``."""
        R, tp, safe, active, inv_k = self._parts(R)
        total = np.where(active, tp / safe, 0.0).sum(axis=-1)
        return (total * inv_k)[..., None]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """Gradient of :meth:`g`, shape ``(..., 1, 2C)``; zero columns for excluded classes, NaN where ``g`` is NaN."""
        R, tp, safe, active, inv_k = self._parts(R)
        inv_k = inv_k[..., None]
        d_tp = np.where(active, inv_k / safe, 0.0)
        d_den = np.where(active, -inv_k * tp / safe**2, 0.0)
        # Keep "undefined" visible when no class is active.
        undefined = ~active.any(axis=-1, keepdims=True)
        d_tp = np.where(undefined, np.nan, d_tp)
        d_den = np.where(undefined, np.nan, d_den)
        return np.concatenate([d_tp, d_den], axis=-1)[..., None, :]

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        """``(Dg(R) l(x, y))^2`` in ``O(n + C)``.

        With ``a_c = dg/dR_c`` and ``b_c = dg/dR_{C+c}``,
        ``Dg l = a_y 1{y = f(x)} + (b_y + b_{f(x)}) / 2``.
        """
        J = self.finite_jacobian(R)[0]
        C = self.n_classes
        a, b = J[:C], J[C:]
        y, f = self._labels_and_preds(outputs, y)
        u = a[y] * (y == f) + (b[y] + b[f]) / 2
        return u * u

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """``sum_i sum_c pi(c | x_i) l(x_i, c)`` in ``O(n C)`` without building losses."""
        f, P = self._preds_and_probs(outputs, label_probs)
        pred = np.bincount(f, weights=P.sum(axis=1), minlength=self.n_classes)
        return np.concatenate([self._expected_tp(f, P), (P.sum(axis=0) + pred) / 2])


@register_measure("micro_f1", options=n_classes_option)
class MicroF1(RatioOfTotals, MultiClassMeasure):
    """Micro-averaged F1 score, a scalar generalized measure.

    The per-class F1 counts of Table 1 (Marchant and Rubinstein, KDD 2021)
    pooled over classes:

    * loss ``l(x, y) = [sum_c 1{y=c, f(x)=c}, sum_c (1{y=c} + 1{f(x)=c}) / 2]
      = [1{y = f(x)}, 1]`` (``d = 2``),
    * ``g(R) = R_1 / R_2``; one component named ``micro_f1``.

    For single-label multi-class classification every item contributes one
    true and one predicted label, so micro precision = micro recall =
    micro F1 = **accuracy**.  The population value of ``R_2`` is exactly 1;
    keeping it in the loss makes the estimate self-normalised (a ratio
    estimator) when sampling weights do not average to exactly 1.

    Parameters
    ----------
    n_classes, system, system_name
        As for :class:`~labelwise.measures.multiclass.MultiClassMeasure`.
    """

    kind = "micro_f1"

    def _dim(self) -> int:
        return 2

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """``(n, 2)`` loss ``[1{y = f(x)}, 1]``."""
        y, f = self._labels_and_preds(outputs, y)
        return np.stack([(y == f).astype(float), np.ones(len(y))], axis=1)

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        """``(1{y = f(x)} J_1 + J_2)^2`` in ``O(n)``."""
        J = self.finite_jacobian(R)[0]
        y, f = self._labels_and_preds(outputs, y)
        u = J[0] * (y == f) + J[1]
        return u * u

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """``[sum_i pi(f(x_i) | x_i), sum_i sum_c pi(c | x_i)]``."""
        f, P = self._preds_and_probs(outputs, label_probs)
        return np.array([P[np.arange(len(f)), f].sum(), P.sum()])
