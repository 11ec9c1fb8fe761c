"""Binary classification measures as generalized measures (seed 001, Table 1).

Each measure evaluates one system (``system``, an index into the pool's
systems) and treats class ``positive`` as the positive class, so the same
measures also work one-vs-rest on multi-class pools.
"""

from __future__ import annotations

import numpy as np

from ..pool import Outputs
from .base import Measure, RatioOfTotals

__all__ = [
    "MCC",
    "Accuracy",
    "BalancedAccuracy",
    "Brier",
    "FBeta",
    "FowlkesMallows",
    "Precision",
    "Recall",
]


class _SystemMeasure(Measure):
    """A measure of one system; ``kind`` names it in the registry."""

    kind = ""
    _lo, _hi = 0.0, 1.0

    def __init__(self, system: int = 0, positive: int = 1, system_name: str | None = None):
        self.system = int(system)
        self.positive = int(positive)
        self.system_name = system_name
        self.name = self.kind
        suffix = f"[{system_name}]" if system_name else ""
        self.names = tuple(f"{c}{suffix}" for c in self._components())
        self.lower = np.full(len(self.names), self._lo)
        self.upper = np.full(len(self.names), self._hi)

    def _components(self) -> tuple[str, ...]:
        return (self.kind,)

    def spec(self) -> dict:
        return {"measure": self.kind, "system": self.system, "positive": self.positive,
                "system_name": self.system_name, **self._extra_spec()}

    def _extra_spec(self) -> dict:
        return {}

    def loss_key(self, outputs: Outputs) -> np.ndarray | None:
        """The loss depends on x only through the predicted label."""
        return outputs.require("preds", self.kind)[:, self.system].astype(np.int64)

    def _yf(self, outputs: Outputs, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Binary truth y and prediction f(x) as floats."""
        f = outputs.require("preds", self.kind)[:, self.system] == self.positive
        return (np.asarray(y) == self.positive).astype(float), f.astype(float)


class Accuracy(_SystemMeasure):
    """Accuracy: ``l = 1{y != f(x)}``, ``g(R) = 1 - R`` (Table 1, row 1). Multi-class as is."""

    kind = "accuracy"
    dim = 1

    def loss(self, outputs, y):
        f = outputs.require("preds", self.kind)[:, self.system]
        return (np.asarray(y) != f).astype(float)[:, None]

    def g(self, R):
        return 1.0 - R

    def jacobian(self, R):
        return np.broadcast_to(-np.ones((1, 1)), np.shape(R)[:-1] + (1, 1)).copy()


class _TruthPredMeasure(_SystemMeasure):
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
    _lo, _hi = -1.0, 1.0

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


class _Ratio(RatioOfTotals, _SystemMeasure):
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

    def __init__(self, beta: float = 1.0, system: int = 0, positive: int = 1, system_name: str | None = None):
        if not beta > 0:
            raise ValueError(f"beta: must be positive, got {beta}")
        self.beta = float(beta)
        self.kind = "f1" if self.beta == 1.0 else f"f{self.beta:g}"
        super().__init__(system, positive, system_name)

    def _extra_spec(self) -> dict:
        return {"beta": self.beta}

    def spec(self) -> dict:
        return {**super().spec(), "measure": "fbeta"}

    def loss(self, outputs, y):
        yb, f = self._yf(outputs, y)
        b2 = self.beta**2
        return np.stack([yb * f, (b2 * yb + f) / (1 + b2)], axis=1)


class Brier(_SystemMeasure):
    """Brier score: ``l = 2 (p1(x) - y)^2``, ``g = R`` (Table 1, row 8).

    This is the two-class form ``sum_c (p_c - 1{y=c})^2``, in [0, 2].
    """

    kind = "brier"
    dim = 1
    _lo, _hi = 0.0, 2.0

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
