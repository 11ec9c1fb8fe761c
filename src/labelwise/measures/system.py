"""The base of every built-in measure of one system of a pool, and the label-code check they share."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..pool import Outputs
from .base import Measure

__all__ = ["SystemMeasure", "label_codes"]


def label_codes(arr: np.ndarray, n_classes: int, what: str, fix: str) -> np.ndarray:
    """``arr`` as int64 label codes, checked to lie in ``0..n_classes-1``.

    Parameters
    ----------
    arr : array-like
        Label codes (integers, or floats with integral values).
    n_classes : int
        Size of the label set.
    what, fix : str
        The error message is ``"{what}, found [...]; {fix}"``, listing up to five bad values.

    Returns
    -------
    ndarray of int64

    Raises
    ------
    ValueError
        If any value is negative, at least ``n_classes`` or not an integer.
    """
    arr = np.asarray(arr)
    if arr.size and (arr.dtype.kind not in "iub" or arr.min() < 0 or arr.max() >= n_classes):
        arr_f = np.asarray(arr, dtype=float)
        bad = (arr_f < 0) | (arr_f >= n_classes) | (arr_f != np.round(arr_f))
        if bad.any():
            raise ValueError(f"{what}, found {np.unique(arr_f[bad])[:5].tolist()}; {fix}")
    return arr.astype(np.int64, copy=False)


class SystemMeasure(Measure):
    """A measure of one system (one column of a pool's outputs), fully described by its spec.

    Subclasses set the class attributes below, store their own parameters and
    then call ``super().__init__``, which sets ``system``, ``system_name``,
    ``name``, ``dim``, ``names`` (``_components()`` with ``[<system_name>]``
    appended when given) and the bounds ``lower``/``upper``.

    Parameters
    ----------
    system : int
        Index of the system (column of the pool's outputs) to evaluate.
    system_name : str, optional
        Appended to component names as ``[<system_name>]``.

    Attributes
    ----------
    kind : str
        The measure's registered name: ``spec()["measure"]`` and ``name``.
    bounds : tuple of float
        Range ``(lower, upper)`` of every component.
    spec_fields : tuple of str
        Constructor arguments, stored as attributes of the same names, that
        :meth:`spec` records (in this order) after ``"measure": kind``.
    classes : {"any", "binary", "multilabel"}
        The pools the measure is meant for: ``"binary"`` for a measure of two
        classes, which :func:`~labelwise.measures.make_measure` refuses by
        name on a pool of more classes; ``"multilabel"`` for those of
        multi-label pools.
    """

    kind: str = ""
    classes: ClassVar[str] = "any"
    bounds: ClassVar[tuple[float, float]] = (0.0, 1.0)
    spec_fields: ClassVar[tuple[str, ...]] = ("system", "system_name")

    def __init__(self, system: int = 0, system_name: str | None = None):
        if int(system) != system or int(system) < 0:
            raise ValueError(f"system: must be a non-negative integer, got {system!r}")
        self.system = int(system)
        self.system_name = system_name
        self.name = self.kind
        self.dim = self._dim()
        suffix = f"[{system_name}]" if system_name else ""
        self.names = tuple(f"{c}{suffix}" for c in self._components())
        self.lower = np.full(len(self.names), self.bounds[0])
        self.upper = np.full(len(self.names), self.bounds[1])

    def _dim(self) -> int:
        """``d``, the dimension of the loss: the class attribute ``dim`` unless the parameters set it."""
        return type(self).dim

    def _components(self) -> tuple[str, ...]:
        """Component names of G before the system suffix."""
        return (self.kind,)

    def spec(self) -> dict:
        """``{"measure": kind, <field>: <value> for each of spec_fields}``; arrays as lists."""
        out: dict = {"measure": self.kind}
        for field in self.spec_fields:
            value = getattr(self, field)
            out[field] = value.tolist() if isinstance(value, np.ndarray) else value
        return out

    def _preds(self, outputs: Outputs) -> np.ndarray:
        """The system's predicted label per item (a clear error when the pool has none)."""
        return outputs.require("preds", self.kind)[:, self.system]

    def loss_key(self, outputs: Outputs) -> np.ndarray | None:
        """The loss depends on x only through the predicted label."""
        return self._preds(outputs).astype(np.int64)
