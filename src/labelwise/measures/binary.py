"""Binary classification measures as generalized measures.

The losses and mappings are those of Table 1 of N. G. Marchant and
B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation under
Extreme Class Imbalance", KDD 2021 ("Table 1" below); precision, recall and
F-beta are also the ratio metrics ``sum f / sum g`` (eq. 1) of E. Yilmaz,
P. Hayes, R. Habib, J. Burgess and D. Barber, "Sample Efficient Model
Evaluation", arXiv:2109.12043, 2021.  Each measure evaluates one system
(``system``, an index into the pool's systems) and treats class ``positive``
as the positive class, so the same measures also work one-vs-rest on
multi-class pools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..pool import Outputs
from .base import RatioOfTotals
from .registry import register_measure
from .system import SystemMeasure

if TYPE_CHECKING:
    from ..pool import Pool

__all__ = [
    "MCC",
    "Accuracy",
    "BalancedAccuracy",
    "BinaryMeasure",
    "Brier",
    "FBeta",
    "FowlkesMallows",
    "Precision",
    "Recall",
]


class BinaryMeasure(SystemMeasure):
    """A measure of one system that treats class ``positive`` as the positive class.

    Parameters
    ----------
    system : int
        Index of the system to evaluate.
    positive : int
        The positive class (the rest are negative, one-vs-rest).
    system_name : str, optional
        Appended to component names as ``[<system_name>]``.
    """

    spec_fields = ("system", "positive", "system_name")
    classes = "binary"

    def __init__(self, system: int = 0, positive: int = 1, system_name: str | None = None):
        self.positive = int(positive)
        super().__init__(system, system_name)

    def _yf(self, outputs: Outputs, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Binary truth y and prediction f(x) as floats."""
        f = self._preds(outputs) == self.positive
        return (np.asarray(y) == self.positive).astype(float), f.astype(float)


@register_measure("accuracy")
class Accuracy(BinaryMeasure):
    """Accuracy: ``l = 1{y != f(x)}``, ``g(R) = 1 - R`` (Table 1, row 1). Multi-class as is."""

    kind = "accuracy"
    classes = "any"
    dim = 1

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        return (np.asarray(y) != self._preds(outputs)).astype(float)[:, None]

    def g(self, R: np.ndarray) -> np.ndarray:
        return 1.0 - R

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        return np.broadcast_to(-np.ones((1, 1)), np.shape(R)[:-1] + (1, 1)).copy()


class _TruthPredMeasure(BinaryMeasure):
    """Measures with loss ``[y f(x), y, f(x)]`` (Table 1 rows 2, 6, 7)."""

    dim = 3

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        yb, f = self._yf(outputs, y)
        return np.stack([yb * f, yb, f], axis=1)


@register_measure("balanced_accuracy")
class BalancedAccuracy(_TruthPredMeasure):
    """Balanced accuracy: ``g = (R1 + R2 (1 - R2 - R3)) / (2 R2 (1 - R2))`` (Table 1, row 2)."""

    kind = "balanced_accuracy"

    def g(self, R: np.ndarray) -> np.ndarray:
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        return ((R1 + R2 * (1 - R2 - R3)) / (2 * R2 * (1 - R2)))[..., None]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        den = 2 * R2 * (1 - R2)
        num = R1 + R2 * (1 - R2 - R3)
        d1 = 1 / den
        d2 = (1 - 2 * R2 - R3) / den - num * 2 * (1 - 2 * R2) / den**2
        d3 = -R2 / den
        return np.stack([d1, d2, d3], axis=-1)[..., None, :]


class _Ratio(RatioOfTotals, BinaryMeasure):
    """Ratio measures ``g(R) = R1 / R2`` with loss ``[y f(x), den(y, f(x))]`` (Yilmaz et al. 2021, eq. 1)."""

    dim = 2

    def _den(self, yb: np.ndarray, f: np.ndarray) -> np.ndarray:
        """The denominator's loss from the binary truth and prediction."""
        raise NotImplementedError

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        yb, f = self._yf(outputs, y)
        return np.stack([yb * f, self._den(yb, f)], axis=1)


@register_measure("precision")
class Precision(_Ratio):
    """Precision: ``l = [y f(x), f(x)]``, ``g = R1 / R2`` (Table 1, row 3)."""

    kind = "precision"

    def _den(self, yb: np.ndarray, f: np.ndarray) -> np.ndarray:
        return f


@register_measure("recall")
class Recall(_Ratio):
    """Recall: ``l = [y f(x), y]``, ``g = R1 / R2`` (Table 1, row 4)."""

    kind = "recall"

    def _den(self, yb: np.ndarray, f: np.ndarray) -> np.ndarray:
        return yb


@register_measure("mcc")
class MCC(_TruthPredMeasure):
    """Matthews correlation: ``(R1 - R2 R3) / sqrt(R2 R3 (1-R2) (1-R3))`` (Table 1, row 6)."""

    kind = "mcc"
    bounds = (-1.0, 1.0)

    def g(self, R: np.ndarray) -> np.ndarray:
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        return ((R1 - R2 * R3) / np.sqrt(R2 * R3 * (1 - R2) * (1 - R3)))[..., None]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        D = np.sqrt(R2 * R3 * (1 - R2) * (1 - R3))
        num = R1 - R2 * R3
        # d/dR2 log D = (1 - 2 R2) / (2 R2 (1 - R2)); likewise for R3.
        d1 = 1 / D
        d2 = -R3 / D - num / D * (1 - 2 * R2) / (2 * R2 * (1 - R2))
        d3 = -R2 / D - num / D * (1 - 2 * R3) / (2 * R3 * (1 - R3))
        return np.stack([d1, d2, d3], axis=-1)[..., None, :]


@register_measure("fowlkes_mallows")
class FowlkesMallows(_TruthPredMeasure):
    """Fowlkes-Mallows index: ``R1 / sqrt(R2 R3)`` (Table 1, row 7)."""

    kind = "fowlkes_mallows"

    def g(self, R: np.ndarray) -> np.ndarray:
        return (R[..., 0] / np.sqrt(R[..., 1] * R[..., 2]))[..., None]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        G = R1 / np.sqrt(R2 * R3)
        return np.stack([1 / np.sqrt(R2 * R3), -G / (2 * R2), -G / (2 * R3)], axis=-1)[..., None, :]


@register_measure("brier")
class Brier(BinaryMeasure):
    """Brier score: ``l = 2 (p1(x) - y)^2``, ``g = R`` (Table 1, row 8).

    This is the two-class form of ``sum_c (p_c - 1{y=c})^2``, in [0, 2]; on
    a pool of class probabilities (multi-class) the loss is that sum over
    every class, so no class is taken against the rest.
    """

    kind = "brier"
    classes = "any"
    dim = 1
    bounds = (0.0, 2.0)

    def _prob(self, outputs: Outputs) -> np.ndarray:
        """The system's probability of the positive class per item ``(n,)``, or of every class ``(n, C)``."""
        return outputs.require("probs", self.kind)[:, self.system]

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        p, y = self._prob(outputs), np.asarray(y)
        if p.ndim == 1:
            return (2 * (p - (y == self.positive)) ** 2)[:, None]
        return ((p - (y[:, None] == np.arange(p.shape[1]))) ** 2).sum(axis=1)[:, None]

    def loss_key(self, outputs: Outputs) -> np.ndarray | None:
        """The loss depends on x through the probabilities: one key per distinct value (row of them)."""
        p = self._prob(outputs)
        return np.unique(p, axis=0, return_inverse=True)[1].astype(np.int64).ravel()

    def g(self, R: np.ndarray) -> np.ndarray:
        return np.asarray(R, dtype=float).copy()

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        return np.broadcast_to(np.ones((1, 1)), np.shape(R)[:-1] + (1, 1)).copy()


class FBeta(_Ratio):
    """F-beta: ``l = [y f(x), (beta^2 y + f(x)) / (1 + beta^2)]``, ``g = R1 / R2`` (Table 1, row 5).

    Parameters
    ----------
    beta : float
        Weight of recall relative to precision (positive); ``beta = 1`` is F1.
    system, positive, system_name
        As for :class:`BinaryMeasure`.
    """

    spec_fields = (*BinaryMeasure.spec_fields, "beta")

    def __init__(self, beta: float = 1.0, system: int = 0, positive: int = 1, system_name: str | None = None):
        if not beta > 0:
            raise ValueError(f"beta: must be positive, got {beta}")
        self.beta = float(beta)
        self.kind = "f1" if self.beta == 1.0 else f"f{self.beta:g}"
        super().__init__(system, positive, system_name)

    def spec(self) -> dict:
        """The spec of :class:`BinaryMeasure` plus ``beta``, under the registered name ``fbeta``."""
        return {**super().spec(), "measure": "fbeta"}

    def _den(self, yb: np.ndarray, f: np.ndarray) -> np.ndarray:
        b2 = self.beta**2
        return (b2 * yb + f) / (1 + b2)


def _beta_option(pool: Pool, system: int, arg: str) -> dict:
    """``beta`` from ``fbeta:<beta>``."""
    try:
        return {"beta": float(arg)}
    except ValueError:
        raise ValueError(f"measure 'fbeta:{arg}': write fbeta:<beta>, e.g. fbeta:0.5") from None


register_measure("f1", FBeta, options=lambda pool, system, arg: {"beta": 1.0})
register_measure("fbeta", FBeta, options=_beta_option, usage=("fbeta:<beta>",))
register_measure("f", FBeta, options=_beta_option, usage=())
