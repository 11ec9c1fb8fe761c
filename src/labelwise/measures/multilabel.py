"""Micro- and macro-F1 of multi-label systems as generalized measures.

Appendix D of E. Yilmaz, P. Hayes, R. Habib, J. Burgess and D. Barber,
"Sample Efficient Model Evaluation", arXiv:2109.12043, 2021 ("Yilmaz et al."
below; equation numbers are theirs).  A multi-label pool has ``C`` binary labels per item, stored as bitmask codes
``sum_k v_k 2^k`` (:func:`labelwise.pool.encode_multilabel`), so predictions
and labels are integers in ``{0, ..., 2^C - 1}`` and the pool's probabilities
are the product distribution of eq. (89).  With ``p_k = v^p_k`` the
predicted and ``t_k = v^t_k`` the true indicator of label ``k``:

* micro F-alpha (eqs. 90-91) is a ratio ``sum_n f_n / sum_n g_n``, loss
  ``[sum_k p_k t_k, sum_k (alpha p_k + (1 - alpha) t_k)]`` (``d = 2``);
* macro F1 (eqs. 98-107) is ``2 P R / (P + R)`` of the label-averaged
  precision ``P`` and recall ``R``, a smooth function of the per-label rates
  ``TP_i, FP_i, FN_i``: loss ``[p t]_k ++ [p (1 - t)]_k ++ [(1 - p) t]_k``
  (``d = 3C``).

Both losses are sums (or concatenations) of per-label terms that are affine
in ``t_k``, so the per-item quantities the designs need are computed from the
``(n, C)`` indicators with a loop over labels at most:

* ``expected_loss_sum`` replaces ``t_k`` by the marginal
  ``pi(v_k = 1 | x)`` of the label distribution (eq. 14);
* ``Dg(R) l(x, y) = sum_k u_k(p_k, t_k)`` with per-label terms ``u_k``, which
  gives ``influence_norm_sq`` in ``O(n C)``.

The optimal designs (eqs. 12, 25) and the delta-method intervals
(eqs. 108-117) of Yilmaz et al. then follow from the generic machinery, as
for every generalized measure (Definition 1 of N. G. Marchant and
B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation under
Extreme Class Imbalance", KDD 2021).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..pool import MAX_LABELS, Outputs, decode_multilabel
from .base import RatioOfTotals
from .registry import register_measure
from .system import SystemMeasure, label_codes

if TYPE_CHECKING:
    from ..pool import Pool

__all__ = ["MultiLabelMacroF1", "MultiLabelMeasure", "MultiLabelMicroF1"]


def _n_labels_option(pool: Pool, system: int, arg: str) -> dict:
    """``n_labels`` of a measure built by name: the number of the pool's label names.

    Only a multi-label pool has label names; a multi-class pool of ``2^C`` classes is not one (its classes are not
    label sets).  A session file written before the names were stored keeps its own measure (its spec carries
    ``n_labels``) but cannot name a new multi-label one.
    """
    if not pool.label_names:
        older = ("; a multi-label session file from an older labelwise, which stored no label names, still "
                 "estimates the measure it was created with: leave out --measure (or measure= in Python)"
                 if pool.n_classes >= 4 and pool.n_classes & (pool.n_classes - 1) == 0 else "")
        raise ValueError(f"a multi-label measure needs a multi-label pool, but the pool has {pool.n_classes} classes "
                         f"and no label names; build it with Pool.from_multilabel (or the CLI's --multilabel "
                         f"NAME,NAME,...){older}")
    return {"n_labels": len(pool.label_names)}


class MultiLabelMeasure(SystemMeasure):
    """A measure of one system on a multi-label pool with ``C`` labels (``2^C`` label codes).

    Subclasses set ``dim`` (or override ``_dim``) and implement
    :meth:`_loss_bits` (the loss from 0/1 indicators, affine in the truth) and
    :meth:`_label_terms` (the per-label terms of ``Dg(R) l``), plus ``g`` and
    ``jacobian``.

    Parameters
    ----------
    n_labels : int
        ``C``, between 1 and :data:`labelwise.pool.MAX_LABELS`.
    system : int
        Index of the system to evaluate.
    system_name : str, optional
        Appended to the component name as ``[<system_name>]``.
    """

    spec_fields = ("n_labels", *SystemMeasure.spec_fields)
    classes = "multilabel"

    def __init__(self, n_labels: int, system: int = 0, system_name: str | None = None):
        if isinstance(n_labels, bool) or int(n_labels) != n_labels or not 1 <= int(n_labels) <= MAX_LABELS:
            raise ValueError(f"n_labels: must be an integer in 1..{MAX_LABELS}, got {n_labels!r}")
        self.n_labels = int(n_labels)
        self.n_classes = 2**self.n_labels
        super().__init__(system, system_name)

    # -- to implement -----------------------------------------------------
    def _loss_bits(self, P: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Loss ``(n, d)`` from predicted ``P`` and true ``T`` indicators ``(n, C)``, affine in ``T``."""
        raise NotImplementedError

    def _label_terms(self, P: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-label terms ``u_k(p_k, t_k)`` of ``Dg l = sum_k u_k`` at ``t_k = 0`` and ``t_k = 1``.

        Parameters
        ----------
        P : ndarray, shape (n, C)
            Predicted indicators.
        J : ndarray, shape (d,)
            The (scalar measure's) Jacobian row, NaN/inf cleaned to 0.

        Returns
        -------
        (u0, u1) : tuple of ndarray, shape (n, C)
        """
        raise NotImplementedError

    # -- helpers ----------------------------------------------------------
    def _bits(self, what: str, codes: np.ndarray) -> np.ndarray:
        """0/1 indicators ``(n, C)`` (float) of label codes, checked to lie in ``0..2^C-1``."""
        codes = label_codes(codes, self.n_classes,
                            f"measure {self.kind!r}: {what} must be label codes 0..{self.n_classes - 1} of "
                            f"{self.n_labels} labels",
                            "build the pool with Pool.from_multilabel and the measure with the pool's number of labels")
        return decode_multilabel(codes, self.n_labels).astype(float)

    def _pred_bits(self, outputs: Outputs) -> np.ndarray:
        return self._bits("predictions", self._preds(outputs))

    def _marginals(self, label_probs: np.ndarray, n: int) -> np.ndarray:
        """Per-label marginals ``pi(v_k = 1 | x)`` ``(n, C)`` of label distributions ``(n, <= 2^C)``."""
        P = np.asarray(label_probs, dtype=float)
        if P.ndim != 2 or P.shape[1] > self.n_classes or P.shape[0] != n:
            raise ValueError(f"label_probs: expected shape ({n}, <= {self.n_classes}), got {P.shape}")
        return P @ decode_multilabel(np.arange(P.shape[1]), self.n_labels).astype(float)

    # -- the Measure interface --------------------------------------------
    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """Loss ``(n, d)`` of items ``outputs`` with true label codes ``y``."""
        return self._loss_bits(self._pred_bits(outputs), self._bits("labels", y))

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """``sum_i sum_c pi(c | x_i) l(x_i, c)``: the loss at the marginals, since it is affine in ``t``."""
        P = self._pred_bits(outputs)
        return self._loss_bits(P, self._marginals(label_probs, P.shape[0])).sum(axis=0)

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        """``(Dg(R) l(x, y))^2 = (sum_k u_k(p_k, t_k))^2`` per item, in ``O(n C)``."""
        T = self._bits("labels", y)
        u0, u1 = self._label_terms(self._pred_bits(outputs), self.finite_jacobian(R)[0])
        u = np.sum(u0 + T * (u1 - u0), axis=1)
        return u * u


@register_measure("multilabel_micro_f1", options=_n_labels_option)
class MultiLabelMicroF1(RatioOfTotals, MultiLabelMeasure):
    """Micro-averaged F-alpha of a multi-label system (Yilmaz et al., eqs. 90-91).

    Pooling the counts of all labels,

        F_alpha = sum_n sum_k p_nk t_nk / sum_n sum_k (alpha p_nk + (1 - alpha) t_nk)

    a ratio ``sum_n f_n / sum_n g_n``: loss ``[f_n, g_n]`` (``d = 2``) and
    ``g(R) = R_1 / R_2``.  ``alpha = 1/2`` is micro
    F1 (``2 TP / (2 TP + FP + FN)``), ``alpha = 1`` micro precision and
    ``alpha = 0`` micro recall.  Undefined (NaN) when ``R_2 = 0``.

    Parameters
    ----------
    n_labels : int
        Number of labels ``C``.
    alpha : float in [0, 1]
        Weight of the predicted counts in the denominator.
    system, system_name
        As for :class:`MultiLabelMeasure`.
    """

    kind = "multilabel_micro_f1"
    dim = 2
    spec_fields = (*MultiLabelMeasure.spec_fields, "alpha")

    def __init__(self, n_labels: int, alpha: float = 0.5, system: int = 0, system_name: str | None = None):
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha: must lie in [0, 1], got {alpha}")
        self.alpha = float(alpha)
        super().__init__(n_labels, system, system_name)

    def _components(self) -> tuple[str, ...]:
        return (self.kind if self.alpha == 0.5 else f"multilabel_micro_f[alpha={self.alpha:g}]",)

    def _loss_bits(self, P: np.ndarray, T: np.ndarray) -> np.ndarray:
        """``[sum_k p_k t_k, sum_k (alpha p_k + (1 - alpha) t_k)]`` (Yilmaz et al., eq. 91)."""
        return np.stack([np.sum(P * T, axis=1), np.sum(self.alpha * P + (1 - self.alpha) * T, axis=1)], axis=1)

    def _label_terms(self, P: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``u_k = J_1 p_k t_k + J_2 (alpha p_k + (1 - alpha) t_k)``.

        The ``h(v_nk)`` of Yilmaz et al., eq. (95), over ``R_2``.
        """
        u0 = J[1] * self.alpha * P
        return u0, u0 + J[0] * P + J[1] * (1 - self.alpha)


@register_measure("multilabel_macro_f1", options=_n_labels_option)
class MultiLabelMacroF1(MultiLabelMeasure):
    """Macro F1 of a multi-label system: ``2 P R / (P + R)`` of label-averaged precision and recall.

    Per Yilmaz et al., eqs. (98)-(107), with ``a_i, b_i, c_i`` the rates of true
    positives, false positives and false negatives of label ``i``
    (eqs. 98-100), ``P = (1/C) sum_i a_i / (a_i + b_i)`` and
    ``R = (1/C) sum_i a_i / (a_i + c_i)`` (eq. 101) and

        F = 2 P R / (P + R),   i.e.   (C/2) F = S_P S_R / (S_P + S_R)   (eqs. 102, 107)

    with ``S_P = sum_i a_i / (a_i + b_i)`` and ``S_R = sum_i a_i / (a_i + c_i)``.
    Loss ``l = [p t]_i ++ [p (1 - t)]_i ++ [(1 - p) t]_i`` (``d = 3C``), so
    ``R = [a, b, c]``.  This is the F1 of the macro-averaged precision and
    recall, not the mean of per-label F1 scores.

    Parameters
    ----------
    n_labels, system, system_name
        As for :class:`MultiLabelMeasure`.

    Notes
    -----
    **Zero denominators.**  A label that is never predicted (``a_i + b_i = 0``)
    has precision 0, and a label that never occurs (``a_i + c_i = 0``) has
    recall 0: the ``zero_division=0`` convention of
    ``sklearn.metrics.precision_score(average="macro")`` on indicator
    matrices, keeping the average over all ``C`` labels of eq. (101).  Their
    Jacobian columns are 0.  ``g`` is undefined (NaN) only when
    ``S_P + S_R = 0``, i.e. no label has a true positive: the harmonic mean
    of two zeros.  An estimate with no sampled true positive is therefore
    undefined (the estimators then report the whole range), and a label not
    yet seen in the sample counts with precision or recall 0, which biases
    small samples downward until every label's predictions and positives
    have been sampled (designs that target the measure sample them first).
    The Jacobian is NaN where ``g`` is NaN.
    """

    kind = "multilabel_macro_f1"

    def _dim(self) -> int:
        return 3 * self.n_labels

    def _loss_bits(self, P: np.ndarray, T: np.ndarray) -> np.ndarray:
        """``[p t]_i ++ [p (1 - t)]_i ++ [(1 - p) t]_i``: the summands of Yilmaz et al., eqs. (98)-(100)."""
        return np.concatenate([P * T, P * (1 - T), (1 - P) * T], axis=1)

    def label_columns(self) -> np.ndarray:
        """Label ``i``'s columns ``[a_i, b_i, c_i]``: its true positives, false positives and false negatives."""
        return np.arange(3 * self.n_labels).reshape(3, self.n_labels).T

    def _rates(self, R: np.ndarray):
        """Per-label precision and recall (0 on zero denominators) and the parts of their derivatives."""
        R = np.asarray(R, dtype=float)
        C = self.n_labels
        a, b, c = R[..., :C], R[..., C:2 * C], R[..., 2 * C:]
        out = []
        for den, other in ((a + b, b), (a + c, c)):
            ok = den > 0
            safe = np.where(ok, den, 1.0)
            ratio = np.where(ok, a / safe, 0.0)
            d_a = np.where(ok, other / safe**2, 0.0)  # d(a / (a + x)) / da
            d_x = np.where(ok, -a / safe**2, 0.0)  # d(a / (a + x)) / dx
            out.append((ratio, d_a, d_x))
        undefined = np.isnan(R).any(axis=-1)
        return out, undefined

    def g(self, R: np.ndarray) -> np.ndarray:
        """``F = (2 / C) S_P S_R / (S_P + S_R)`` (Yilmaz et al., eq. 107), shape ``(..., 1)``; NaN if ``S_P + S_R = 0``.

        Parameters
        ----------
        R : ndarray, shape (..., 3C)
            ``[a, b, c]``: true-positive, false-positive and false-negative rates.
        """
        ((prec, _, _), (rec, _, _)), undefined = self._rates(R)
        SP, SR = prec.sum(axis=-1), rec.sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            F = 2.0 * SP * SR / (self.n_labels * (SP + SR))
        return np.where(undefined | (SP + SR == 0), np.nan, F)[..., None]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """Gradient of :meth:`g` (the ``d_a F``, ``d_b F``, ``d_c F`` of Yilmaz et al., eqs. 111-119).

        ``dF/dS_P = 2 S_R^2 / (C (S_P + S_R)^2)``, ``dF/dS_R = 2 S_P^2 / (C (S_P + S_R)^2)``;
        ``d S_P / d a_i = b_i / (a_i + b_i)^2``, ``d S_P / d b_i = -a_i / (a_i + b_i)^2``,
        and likewise for ``S_R`` with ``c_i``.

        Returns
        -------
        ndarray, shape (..., 1, 3C)
            NaN where ``g`` is NaN.
        """
        ((prec, dp_a, dp_b), (rec, dr_a, dr_c)), undefined = self._rates(R)
        SP, SR = prec.sum(axis=-1), rec.sum(axis=-1)
        bad = undefined | (SP + SR == 0)
        S2 = np.where(bad, 1.0, SP + SR) ** 2
        fp = np.where(bad, np.nan, 2.0 * SR**2 / (self.n_labels * S2))[..., None]
        fr = np.where(bad, np.nan, 2.0 * SP**2 / (self.n_labels * S2))[..., None]
        return np.concatenate([fp * dp_a + fr * dr_a, fp * dp_b, fr * dr_c], axis=-1)[..., None, :]

    def _label_terms(self, P: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``u_i = d_a F p t + d_b F p (1 - t) + d_c F (1 - p) t`` (the terms of Yilmaz et al., eq. 119)."""
        C = self.n_labels
        Ja, Jb, Jc = J[:C], J[C:2 * C], J[2 * C:]
        return P * Jb, P * Ja + (1 - P) * Jc
