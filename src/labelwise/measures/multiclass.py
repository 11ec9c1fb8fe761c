"""Multi-class measures as generalized measures (seed 001, Definition 1).

Seed 001, Table 1 writes the binary measures as ``G = g(R)`` with
``R = E[l(x, y)]``; the measures here are their multi-class counterparts for
one system with predicted label ``f(x)`` and true label ``y`` in
``{0, ..., C-1}``.  Every loss is laid out in two blocks of ``C`` entries,
like :class:`~labelwise.measures.curves.PRCurve`::

    l(x, y) = [a_0, ..., a_{C-1}, b_0, ..., b_{C-1}]

where ``a_c = 1{y = c, f(x) = c}`` (the true positives of class ``c``) and
``b_c`` is the class-``c`` denominator of the measure, so ``R[..., :C]`` are
per-class true-positive rates and ``R[..., C:]`` the denominators.
(:class:`MicroF1` is the exception: it pools the classes into ``d = 2``.)

All ``g`` and ``jacobian`` broadcast over leading axes of ``R``; all losses are
vectorised over items.  Because each item's loss touches at most the classes
``y`` and ``f(x)``, the per-item pool-wide quantities used by the samplers
(:meth:`influence_norm_sq`, :meth:`expected_loss_sum`) are computed in
``O(n + C)`` instead of materialising ``(n, 2C)`` losses.
"""

from __future__ import annotations

import numpy as np

from ..pool import Outputs
from .base import Measure, RatioOfTotals

__all__ = ["MacroF1", "MicroF1", "PerClassPrecision", "PerClassRecall"]


def label_codes(arr, n_classes: int, what: str, fix: str) -> np.ndarray:
    """``arr`` as int64 codes, or a ValueError ``"{what}, found [...]; {fix}"`` if any lies outside ``0..n_classes-1``."""
    arr = np.asarray(arr)
    if arr.size and (arr.dtype.kind not in "iub" or arr.min() < 0 or arr.max() >= n_classes):
        arr_f = np.asarray(arr, dtype=float)
        bad = (arr_f < 0) | (arr_f >= n_classes) | (arr_f != np.round(arr_f))
        if bad.any():
            raise ValueError(f"{what}, found {np.unique(arr_f[bad])[:5].tolist()}; {fix}")
    return arr.astype(np.int64, copy=False)


class _MultiClassMeasure(Measure):
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

    kind = ""

    def __init__(self, n_classes: int, system: int = 0, system_name: str | None = None):
        if isinstance(n_classes, bool) or int(n_classes) != n_classes or int(n_classes) < 2:
            raise ValueError(f"n_classes: must be an integer >= 2, got {n_classes!r}")
        if int(system) != system or int(system) < 0:
            raise ValueError(f"system: must be a non-negative integer, got {system!r}")
        self.n_classes = int(n_classes)
        self.system = int(system)
        self.system_name = system_name
        self.name = self.kind
        self.dim = self._dim()
        suffix = f"[{system_name}]" if system_name else ""
        self.names = tuple(f"{c}{suffix}" for c in self._components())
        self.lower = np.zeros(len(self.names))
        self.upper = np.ones(len(self.names))

    # -- description ------------------------------------------------------
    def _dim(self) -> int:
        return 2 * self.n_classes

    def _components(self) -> tuple[str, ...]:
        return (self.kind,)

    def spec(self) -> dict:
        return {"measure": self.kind, "n_classes": self.n_classes, "system": self.system,
                "system_name": self.system_name}

    # -- helpers ----------------------------------------------------------
    def _check_labels(self, what: str, arr: np.ndarray) -> np.ndarray:
        return label_codes(arr, self.n_classes,
                           f"measure {self.kind!r}: {what} must be integers 0..{self.n_classes - 1}",
                           "build the measure with the pool's n_classes")

    def _pred(self, outputs: Outputs) -> np.ndarray:
        return self._check_labels("predictions", outputs.require("preds", self.kind)[:, self.system])

    def loss_key(self, outputs: Outputs) -> np.ndarray:
        """The loss depends on x only through the predicted class."""
        return self._pred(outputs).astype(np.int64)

    def _onehots(self, outputs: Outputs, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One-hot truth ``1{y = c}`` and prediction ``1{f(x) = c}``, each ``(n, C)`` float."""
        classes = np.arange(self.n_classes)
        y = self._check_labels("labels", y)
        f = self._pred(outputs)
        return (y[:, None] == classes).astype(float), (f[:, None] == classes).astype(float)

    def _label_probs(self, label_probs: np.ndarray) -> np.ndarray:
        """``label_probs`` as ``(n, C)``: missing trailing classes have probability 0."""
        P = np.asarray(label_probs, dtype=float)
        if P.ndim != 2 or P.shape[1] > self.n_classes:
            raise ValueError(
                f"label_probs: expected shape (n_items, <= {self.n_classes}), got {P.shape}"
            )
        if P.shape[1] < self.n_classes:
            P = np.concatenate([P, np.zeros((P.shape[0], self.n_classes - P.shape[1]))], axis=1)
        return P

    def loss_is_nonzero(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """Always ``True``: every item has a nonzero denominator entry (its ``f(x)`` or ``y``)."""
        self._check_labels("labels", y)
        self._pred(outputs)
        return np.ones(len(y), dtype=bool)


class _PerClassRatio(_MultiClassMeasure):
    """Per-class ratios ``g_c(R) = R_c / R_{C+c}`` (one component per class)."""

    stem = ""

    def _components(self) -> tuple[str, ...]:
        return tuple(f"{self.stem}[class={c}]" for c in range(self.n_classes))

    def g(self, R: np.ndarray) -> np.ndarray:
        """``g_c(R) = R_c / R_{C+c}``; NaN (0/0) or inf where a denominator is 0.

        Parameters
        ----------
        R : ndarray, shape (..., 2C)

        Returns
        -------
        ndarray, shape (..., C)
        """
        R = np.asarray(R, dtype=float)
        C = self.n_classes
        return R[..., :C] / R[..., C:]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """``d g_c / d R_c = 1 / R_{C+c}``, ``d g_c / d R_{C+c} = -R_c / R_{C+c}^2``, else 0.

        Returns
        -------
        ndarray, shape (..., C, 2C)
        """
        R = np.asarray(R, dtype=float)
        C = self.n_classes
        tp, den = R[..., :C], R[..., C:]
        J = np.zeros(R.shape[:-1] + (C, 2 * C))
        i = np.arange(C)
        J[..., i, i] = 1 / den
        J[..., i, C + i] = -tp / den**2
        return J

    def _den_class(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        """The one class whose denominator entry of ``l(x, y)`` is 1."""
        raise NotImplementedError

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
        y = self._check_labels("labels", y)
        f = self._pred(outputs)
        k = self._den_class(y, f)
        u = a[k] * (y == f) + b[k]
        return u * u

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """``sum_i sum_c pi(c | x_i) l(x_i, c)`` in ``O(n C)`` without building losses."""
        P = self._label_probs(label_probs)
        f = self._pred(outputs)
        C = self.n_classes
        if len(f) != P.shape[0]:
            raise ValueError(f"label_probs: has {P.shape[0]} rows for {len(f)} items")
        tp = np.bincount(f, weights=P[np.arange(len(f)), f], minlength=C)
        return np.concatenate([tp, self._expected_den(f, P)])

    def _expected_den(self, f: np.ndarray, P: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class PerClassPrecision(_PerClassRatio):
    """Precision of every class (one-vs-rest), a vector generalized measure.

    Following seed 001, Definition 1 and the precision row of Table 1, applied
    to each class ``c`` in turn:

    * loss ``l(x, y) = [1{y=c, f(x)=c}]_{c<C} ++ [1{f(x)=c}]_{c<C}`` (``d = 2C``),
    * ``g_c(R) = R_c / R_{C+c} = TP_c / PP_c`` (``m = C``), component names
      ``precision[class=c]`` (plus ``[<system_name>]`` when given).

    ``g_c`` is undefined (NaN) when class ``c`` is never predicted.

    Parameters
    ----------
    n_classes : int
        Size ``C`` of the label set.
    system : int
        Index of the system to evaluate.
    system_name : str, optional
        Appended to component names.
    """

    kind = "class_precision"
    stem = "precision"

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """``(n, 2C)`` loss ``[1{y=c, f=c}]_c ++ [1{f=c}]_c``."""
        Y, F = self._onehots(outputs, y)
        return np.concatenate([Y * F, F], axis=1)

    def _den_class(self, y, f):
        return f

    def _expected_den(self, f, P):
        return np.bincount(f, weights=P.sum(axis=1), minlength=self.n_classes)


class PerClassRecall(_PerClassRatio):
    """Recall of every class (one-vs-rest), a vector generalized measure.

    Following seed 001, Definition 1 and the recall row of Table 1, applied to
    each class ``c`` in turn:

    * loss ``l(x, y) = [1{y=c, f(x)=c}]_{c<C} ++ [1{y=c}]_{c<C}`` (``d = 2C``),
    * ``g_c(R) = R_c / R_{C+c} = TP_c / P_c`` (``m = C``), component names
      ``recall[class=c]`` (plus ``[<system_name>]`` when given).

    ``g_c`` is undefined (NaN) when class ``c`` never occurs.

    Parameters
    ----------
    n_classes : int
        Size ``C`` of the label set.
    system : int
        Index of the system to evaluate.
    system_name : str, optional
        Appended to component names.
    """

    kind = "class_recall"
    stem = "recall"

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """``(n, 2C)`` loss ``[1{y=c, f=c}]_c ++ [1{y=c}]_c``."""
        Y, F = self._onehots(outputs, y)
        return np.concatenate([Y * F, Y], axis=1)

    def _den_class(self, y, f):
        return y

    def _expected_den(self, f, P):
        return P.sum(axis=0)


class MacroF1(_MultiClassMeasure):
    """Macro-averaged F1 score, a scalar generalized measure.

    Per seed 001, Definition 1 with the F1 row of Table 1 applied to each
    class ``c`` (``F1_c = TP_c / ((P_c + PP_c) / 2) = 2TP_c / (2TP_c + FP_c + FN_c)``):

    * loss ``l(x, y) = [1{y=c, f(x)=c}]_{c<C} ++ [(1{y=c} + 1{f(x)=c}) / 2]_{c<C}``
      (``d = 2C``),
    * ``g(R) = (1 / |A|) sum_{c in A} R_c / R_{C+c}`` with
      ``A = {c : R_{C+c} > 0}``; one component named ``macro_f1``.

    Parameters
    ----------
    n_classes : int
        Size ``C`` of the label set.
    system : int
        Index of the system to evaluate.
    system_name : str, optional
        Appended to the component name.

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
    delta-method intervals of seed 001 hold only when every class of ``A``
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

    def _parts(self, R: np.ndarray):
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
        """Mean of ``R_c / R_{C+c}`` over classes with ``R_{C+c} > 0`` (NaN if none).

        Parameters
        ----------
        R : ndarray, shape (..., 2C)

        Returns
        -------
        ndarray, shape (..., 1)
        """
        R, tp, safe, active, inv_k = self._parts(R)
        total = np.where(active, tp / safe, 0.0).sum(axis=-1)
        return (total * inv_k)[..., None]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """Gradient of :meth:`g`; zero columns for excluded classes, NaN where ``g`` is NaN.

        Returns
        -------
        ndarray, shape (..., 1, 2C)
        """
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
        y = self._check_labels("labels", y)
        f = self._pred(outputs)
        u = a[y] * (y == f) + (b[y] + b[f]) / 2
        return u * u

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """``sum_i sum_c pi(c | x_i) l(x_i, c)`` in ``O(n C)`` without building losses."""
        P = self._label_probs(label_probs)
        f = self._pred(outputs)
        C = self.n_classes
        if len(f) != P.shape[0]:
            raise ValueError(f"label_probs: has {P.shape[0]} rows for {len(f)} items")
        tp = np.bincount(f, weights=P[np.arange(len(f)), f], minlength=C)
        pred = np.bincount(f, weights=P.sum(axis=1), minlength=C)
        return np.concatenate([tp, (P.sum(axis=0) + pred) / 2])


class MicroF1(RatioOfTotals, _MultiClassMeasure):
    """Micro-averaged F1 score, a scalar generalized measure.

    Per seed 001, Definition 1, pooling the per-class F1 counts of Table 1
    over classes:

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
    n_classes : int
        Size ``C`` of the label set.
    system : int
        Index of the system to evaluate.
    system_name : str, optional
        Appended to the component name.
    """

    kind = "micro_f1"

    def _dim(self) -> int:
        return 2

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """``(n, 2)`` loss ``[1{y = f(x)}, 1]``."""
        y = self._check_labels("labels", y)
        f = self._pred(outputs)
        return np.stack([(y == f).astype(float), np.ones(len(y))], axis=1)

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        """``(1{y = f(x)} J_1 + J_2)^2`` in ``O(n)``."""
        J = self.finite_jacobian(R)[0]
        y = self._check_labels("labels", y)
        f = self._pred(outputs)
        u = J[0] * (y == f) + J[1]
        return u * u

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """``[sum_i pi(f(x_i) | x_i), sum_i sum_c pi(c | x_i)]``."""
        P = self._label_probs(label_probs)
        f = self._pred(outputs)
        if len(f) != P.shape[0]:
            raise ValueError(f"label_probs: has {P.shape[0]} rows for {len(f)} items")
        return np.array([P[np.arange(len(f)), f].sum(), P.sum()])
