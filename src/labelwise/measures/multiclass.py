"""Multi-class measures as generalized measures.

N. G. Marchant and B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient
Evaluation under Extreme Class Imbalance", KDD 2021 (Definition 1 and
Table 1) write the binary measures as ``G = g(R)`` with ``R = E[l(x, y)]``;
the measures here and in :mod:`labelwise.measures.multiclass_f1` are their
multi-class counterparts for one system with predicted label ``f(x)`` and true label ``y`` in
``{0, ..., C-1}``.  Every loss is laid out in two blocks of ``C`` entries,
like :class:`~labelwise.measures.curves.PRCurve`::

    l(x, y) = [a_0, ..., a_{C-1}, b_0, ..., b_{C-1}]

where ``a_c = 1{y = c, f(x) = c}`` (the true positives of class ``c``) and
``b_c`` is the class-``c`` denominator of the measure, so ``R[..., :C]`` are
per-class true-positive rates and ``R[..., C:]`` the denominators.
(:class:`~labelwise.measures.multiclass_f1.MicroF1` is the exception: it
pools the classes into ``d = 2``.)

All ``g`` and ``jacobian`` broadcast over leading axes of ``R``; all losses are
vectorised over items.  Because each item's loss touches at most the classes
``y`` and ``f(x)``, the per-item pool-wide quantities used by the samplers
(:meth:`influence_norm_sq`, :meth:`expected_loss_sum`) are computed in
``O(n + C)`` instead of materialising ``(n, 2C)`` losses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..pool import Outputs
from .registry import register_measure
from .system import SystemMeasure, label_codes

if TYPE_CHECKING:
    from ..pool import Pool

__all__ = ["MultiClassMeasure", "PerClassPrecision", "PerClassRecall"]


def n_classes_option(pool: Pool, system: int, arg: str) -> dict:
    """``n_classes`` of a measure built by name: the pool's."""
    return {"n_classes": pool.n_classes}


class MultiClassMeasure(SystemMeasure):
    """A measure of one system over the label set ``{0, ..., C-1}``.

    Parameters
    ----------
    n_classes : int
        Size ``C`` of the label set (at least 2).
    system : int
        Index of the system (column of the pool's predictions) to evaluate.
    system_name : str, optional
        Appended to component names as ``[<system_name>]``.
    """

    spec_fields = ("n_classes", *SystemMeasure.spec_fields)

    def __init__(self, n_classes: int, system: int = 0, system_name: str | None = None):
        if isinstance(n_classes, bool) or int(n_classes) != n_classes or int(n_classes) < 2:
            raise ValueError(f"n_classes: must be an integer >= 2, got {n_classes!r}")
        self.n_classes = int(n_classes)
        super().__init__(system, system_name)

    def _dim(self) -> int:
        return 2 * self.n_classes

    # -- helpers ----------------------------------------------------------
    def _check_labels(self, what: str, arr: np.ndarray) -> np.ndarray:
        return label_codes(arr, self.n_classes,
                           f"measure {self.kind!r}: {what} must be integers 0..{self.n_classes - 1}",
                           "build the measure with the pool's n_classes")

    def _preds(self, outputs: Outputs) -> np.ndarray:
        """The system's predicted classes, checked to lie in the label set."""
        return self._check_labels("predictions", super()._preds(outputs))

    def _labels_and_preds(self, outputs: Outputs, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """True classes ``y`` and predicted classes ``f(x)``, both checked to lie in the label set."""
        return self._check_labels("labels", y), self._preds(outputs)

    def _onehots(self, outputs: Outputs, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One-hot truth ``1{y = c}`` and prediction ``1{f(x) = c}``, each ``(n, C)`` float."""
        classes = np.arange(self.n_classes)
        y, f = self._labels_and_preds(outputs, y)
        return (y[:, None] == classes).astype(float), (f[:, None] == classes).astype(float)

    def _preds_and_probs(self, outputs: Outputs, label_probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Predicted classes ``(n,)`` and ``label_probs`` as ``(n, C)``, missing trailing classes at probability 0."""
        P = np.asarray(label_probs, dtype=float)
        if P.ndim != 2 or P.shape[1] > self.n_classes:
            raise ValueError(
                f"label_probs: expected shape (n_items, <= {self.n_classes}), got {P.shape}"
            )
        if P.shape[1] < self.n_classes:
            P = np.concatenate([P, np.zeros((P.shape[0], self.n_classes - P.shape[1]))], axis=1)
        f = self._preds(outputs)
        if len(f) != P.shape[0]:
            raise ValueError(f"label_probs: has {P.shape[0]} rows for {len(f)} items")
        return f, P

    def _expected_tp(self, f: np.ndarray, P: np.ndarray) -> np.ndarray:
        """``sum_i pi(c | x_i) 1{f(x_i) = c}`` per class ``c``: the expected true positives."""
        return np.bincount(f, weights=P[np.arange(len(f)), f], minlength=self.n_classes)

    def loss_is_nonzero(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """Always ``True``: every item has a nonzero denominator entry (its ``f(x)`` or ``y``)."""
        self._labels_and_preds(outputs, y)
        return np.ones(len(y), dtype=bool)


class _PerClassRatio(MultiClassMeasure):
    """Per-class ratios ``g_c(R) = R_c / R_{C+c}`` (one component per class)."""

    stem = ""

    def _components(self) -> tuple[str, ...]:
        return tuple(f"{self.stem}[class={c}]" for c in range(self.n_classes))

    def g(self, R: np.ndarray) -> np.ndarray:
        """``g_c(R) = R_c / R_{C+c}``, ``(..., 2C) -> (..., C)``; NaN (0/0) or inf where a denominator is 0."""
        R = np.asarray(R, dtype=float)
        C = self.n_classes
        return R[..., :C] / R[..., C:]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """``d g_c / d R_c = 1 / R_{C+c}``, ``d g_c / d R_{C+c} = -R_c / R_{C+c}^2``, else 0: shape ``(..., C, 2C)``."""
        R = np.asarray(R, dtype=float)
        C = self.n_classes
        tp, den = R[..., :C], R[..., C:]
        J = np.zeros(R.shape[:-1] + (C, 2 * C))
        i = np.arange(C)
        J[..., i, i] = 1 / den
        J[..., i, C + i] = -tp / den**2
        return J

    def _den_class(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        """Which of the truth ``y`` and the prediction ``f`` class ``c``'s denominator counts.

        Given class codes it returns the one class whose denominator entry of
        ``l(x, y)`` is 1; given one-hot rows, the denominator block of the loss.
        """
        raise NotImplementedError

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """``(n, 2C)`` loss ``[1{y=c, f(x)=c}]_c ++ [1{den(x, y) = c}]_c``."""
        Y, F = self._onehots(outputs, y)
        return np.concatenate([Y * F, self._den_class(Y, F)], axis=1)

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        """``||Dg(R) l(x, y)||^2`` in ``O(n + C)``.

        Only component ``c = k(x, y)`` of ``Dg l`` is nonzero, where ``k`` is the
        class of the denominator entry (``f(x)`` for precision, ``y`` for
        recall): it equals ``1{y = f(x)} / R_{C+k} - R_k / R_{C+k}^2``.
        Undefined Jacobian entries count as 0, as in the base class.
        """
        J = self.finite_jacobian(R)
        C = self.n_classes
        i = np.arange(C)
        a, b = J[i, i], J[i, C + i]
        y, f = self._labels_and_preds(outputs, y)
        k = self._den_class(y, f)
        u = a[k] * (y == f) + b[k]
        return u * u

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """``sum_i sum_c pi(c | x_i) l(x_i, c)`` in ``O(n C)`` without building losses."""
        f, P = self._preds_and_probs(outputs, label_probs)
        return np.concatenate([self._expected_tp(f, P), self._expected_den(f, P)])

    def _expected_den(self, f: np.ndarray, P: np.ndarray) -> np.ndarray:
        """The denominator block of :meth:`expected_loss_sum` from predictions ``f`` and probabilities ``P``."""
        raise NotImplementedError


@register_measure("class_precision", options=n_classes_option)
class PerClassPrecision(_PerClassRatio):
    """Precision of every class (one-vs-rest), a vector generalized measure.

    The precision row of Table 1 of Marchant and Rubinstein (KDD 2021),
    applied to each class ``c`` in turn:

    * loss ``l(x, y) = [1{y=c, f(x)=c}]_{c<C} ++ [1{f(x)=c}]_{c<C}`` (``d = 2C``),
    * ``g_c(R) = R_c / R_{C+c} = TP_c / PP_c`` (``m = C``), component names
      ``precision[class=c]`` (plus ``[<system_name>]`` when given).

    ``g_c`` is undefined (NaN) when class ``c`` is never predicted.

    Parameters
    ----------
    n_classes, system, system_name
        As for :class:`MultiClassMeasure`.
    """

    kind = "class_precision"
    stem = "precision"

    def _den_class(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        return f

    def _expected_den(self, f: np.ndarray, P: np.ndarray) -> np.ndarray:
        return np.bincount(f, weights=P.sum(axis=1), minlength=self.n_classes)


@register_measure("class_recall", options=n_classes_option)
class PerClassRecall(_PerClassRatio):
    """Recall of every class (one-vs-rest), a vector generalized measure.

    The recall row of Table 1 of Marchant and Rubinstein (KDD 2021), applied
    to each class ``c`` in turn:

    * loss ``l(x, y) = [1{y=c, f(x)=c}]_{c<C} ++ [1{y=c}]_{c<C}`` (``d = 2C``),
    * ``g_c(R) = R_c / R_{C+c} = TP_c / P_c`` (``m = C``), component names
      ``recall[class=c]`` (plus ``[<system_name>]`` when given).

    ``g_c`` is undefined (NaN) when class ``c`` never occurs.

    Parameters
    ----------
    n_classes, system, system_name
        As for :class:`MultiClassMeasure`.
    """

    kind = "class_recall"
    stem = "recall"

    def _den_class(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        return y

    def _expected_den(self, f: np.ndarray, P: np.ndarray) -> np.ndarray:
        return P.sum(axis=0)
