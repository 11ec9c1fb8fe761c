"""Binary classification measures as generalized measures (seed 001, Table 1).

Each measure evaluates one system (``system``, an index into the pool's
systems) and treats class ``positive`` as the positive class, so the same
measures also work one-vs-rest on multi-class pools.
"""

from __future__ import annotations

import numpy as np

from ..pool import Outputs
from .base import RatioOfTotals
from .system import SystemMeasure

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

    def __init__(self, system: int = 0, positive: int = 1, system_name: str | None = None):
        self.positive = int(positive)
        super().__init__(system, system_name)

    def _yf(self, outputs: Outputs, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Binary truth y and prediction f(x) as floats."""
        f = self._preds(outputs) == self.positive
        return (np.asarray(y) == self.positive).astype(float), f.astype(float)


class Accuracy(BinaryMeasure):
    """Accuracy: ``l = 1{y != f(x)}``, ``g(R) = 1 - R`` (Table 1, row 1). Multi-class as is."""

    kind = "accuracy"
    dim = 1

    def loss(self, outputs, y):
        return (np.asarray(y) != self._preds(outputs)).astype(float)[:, None]

    def g(self, R):
        return 1.0 - R

    def jacobian(self, R):
        return np.broadcast_to(-np.ones((1, 1)), np.shape(R)[:-1] + (1, 1)).copy()


class _TruthPredMeasure(BinaryMeasure):
    """Measures with loss ``[y f(x), y, f(x)]`` (Table 1 rows 2, 6, 7)."""

    dim = 3

    def loss(self, outputs, y):
        yb, f = self._yf(outputs, y)
        return np.stack([yb * f, yb, f], axis=1)


class BalancedAccuracy(_TruthPredMeasure):
    """Balanced accuracy: ``g = (R1 + R2 (1 - R2 - R3)) / (2 R2 (1 - R2))`` (Table 1, row 2)."""

    kind = "balanced_accuracy"

    def g(self, R):
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        return ((R1 + R2 * (1 - R2 - R3)) / (2 * R2 * (1 - R2)))[..., None]

    def jacobian(self, R):
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        den = 2 * R2 * (1 - R2)
        num = R1 + R2 * (1 - R2 - R3)
        d1 = 1 / den
        d2 = (1 - 2 * R2 - R3) / den - num * 2 * (1 - 2 * R2) / den**2
        d3 = -R2 / den
        return np.stack([d1, d2, d3], axis=-1)[..., None, :]


class MCC(_TruthPredMeasure):
    """Matthews correlation: ``(R1 - R2 R3) / sqrt(R2 R3 (1-R2) (1-R3))`` (Table 1, row 6)."""

    kind = "mcc"
    bounds = (-1.0, 1.0)

    def g(self, R):
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        return ((R1 - R2 * R3) / np.sqrt(R2 * R3 * (1 - R2) * (1 - R3)))[..., None]

    def jacobian(self, R):
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        D = np.sqrt(R2 * R3 * (1 - R2) * (1 - R3))
        num = R1 - R2 * R3
        # d/dR2 log D = (1 - 2 R2) / (2 R2 (1 - R2)); likewise for R3.
        d1 = 1 / D
        d2 = -R3 / D - num / D * (1 - 2 * R2) / (2 * R2 * (1 - R2))
        d3 = -R2 / D - num / D * (1 - 2 * R3) / (2 * R3 * (1 - R3))
        return np.stack([d1, d2, d3], axis=-1)[..., None, :]


class FowlkesMallows(_TruthPredMeasure):
    """Fowlkes-Mallows index: ``R1 / sqrt(R2 R3)`` (Table 1, row 7)."""

    kind = "fowlkes_mallows"

    def g(self, R):
        return (R[..., 0] / np.sqrt(R[..., 1] * R[..., 2]))[..., None]

    def jacobian(self, R):
        R1, R2, R3 = R[..., 0], R[..., 1], R[..., 2]
        G = R1 / np.sqrt(R2 * R3)
        return np.stack([1 / np.sqrt(R2 * R3), -G / (2 * R2), -G / (2 * R3)], axis=-1)[..., None, :]


class _Ratio(RatioOfTotals, BinaryMeasure):
    """Ratio measures ``g(R) = R1 / R2`` (seed 002 eq. 1: sum f / sum g)."""

    dim = 2


class Precision(_Ratio):
    """Precision: ``l = [y f(x), f(x)]``, ``g = R1 / R2`` (Table 1, row 3)."""

    kind = "precision"

    def loss(self, outputs, y):
        yb, f = self._yf(outputs, y)
        return np.stack([yb * f, f], axis=1)


class Recall(_Ratio):
    """Recall: ``l = [y f(x), y]``, ``g = R1 / R2`` (Table 1, row 4)."""

    kind = "recall"

    def loss(self, outputs, y):
        yb, f = self._yf(outputs, y)
        return np.stack([yb * f, yb], axis=1)


class FBeta(_Ratio):
    """F-beta: ``l = [y f(x), (beta^2 y + f(x)) / (1 + beta^2)]``, ``g = R1 / R2`` (Table 1, row 5)."""

    spec_fields = (*BinaryMeasure.spec_fields, "beta")

    def __init__(self, beta: float = 1.0, system: int = 0, positive: int = 1, system_name: str | None = None):
        if not beta > 0:
            raise ValueError(f"beta: must be positive, got {beta}")
        self.beta = float(beta)
        self.kind = "f1" if self.beta == 1.0 else f"f{self.beta:g}"
        super().__init__(system, positive, system_name)

    def spec(self) -> dict:
        return {**super().spec(), "measure": "fbeta"}

    def loss(self, outputs, y):
        yb, f = self._yf(outputs, y)
        b2 = self.beta**2
        return np.stack([yb * f, (b2 * yb + f) / (1 + b2)], axis=1)


class Brier(BinaryMeasure):
    """Brier score: ``l = 2 (p1(x) - y)^2``, ``g = R`` (Table 1, row 8).

    This is the two-class form ``sum_c (p_c - 1{y=c})^2``, in [0, 2].
    """

    kind = "brier"
    dim = 1
    bounds = (0.0, 2.0)

    def loss(self, outputs, y):
        p = outputs.require("probs", self.kind)[:, self.system]
        if p.ndim == 2:
            p = p[:, self.positive]
        yb = (np.asarray(y) == self.positive).astype(float)
        return (2 * (p - yb) ** 2)[:, None]

    def loss_key(self, outputs: Outputs) -> np.ndarray | None:
        """The loss depends on x through the probability: one key per distinct value."""
        p = outputs.require("probs", self.kind)[:, self.system]
        return np.unique(p if p.ndim == 1 else p[:, self.positive], return_inverse=True)[1].astype(np.int64)

    def g(self, R):
        return np.asarray(R, dtype=float).copy()

    def jacobian(self, R):
        return np.broadcast_to(np.ones((1, 1)), np.shape(R)[:-1] + (1, 1)).copy()
