"""The loss totals of a measure as a measure of their own: ``g(R) = R``.

A design estimates any measure from its labels (sample reuse); asked for
:class:`Totals` of a measure it returns the estimate of that measure's mean
losses ``R`` and their covariance, before any mapping ``g``.  The interval of
a measure whose totals are all known but one is the image of that total's
interval (:mod:`~labelwise.estimators.segment`), which needs it.
"""

from __future__ import annotations

import numpy as np

from ..pool import Outputs
from .base import Measure

__all__ = ["Totals"]


class Totals(Measure):
    """The mean losses ``R`` of ``part`` (``d`` components, unbounded), with its loss and loss key.

    Parameters
    ----------
    part : Measure
        The measure whose totals are estimated.
    """

    name = "totals"

    def __init__(self, part: Measure):
        self.part = part
        self.dim = part.dim
        self.names = tuple(f"{part.name}:R{j + 1}" for j in range(part.dim))
        self.lower = np.full(part.dim, -np.inf)
        self.upper = np.full(part.dim, np.inf)

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        return self.part.loss(outputs, y)

    def loss_key(self, outputs: Outputs) -> np.ndarray | None:
        return self.part.loss_key(outputs)

    def g(self, R: np.ndarray) -> np.ndarray:
        return np.array(R, dtype=float)

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        return np.broadcast_to(np.eye(self.dim), np.shape(R)[:-1] + (self.dim, self.dim)).copy()

    def __eq__(self, other: object) -> bool:
        """Equal to the totals of an equal measure (a design's per-measure caches find them again)."""
        return isinstance(other, Totals) and other.part == self.part

    def __hash__(self) -> int:
        return hash((Totals, self.part))
