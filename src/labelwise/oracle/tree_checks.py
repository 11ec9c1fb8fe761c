"""The checks of :class:`~labelwise.oracle.tree.DirichletTreeModel`'s settings and of the labels it observes."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..partition import Hierarchy

__all__ = ["check_settings", "checked_observations"]


def check_settings(hierarchy: Hierarchy, oracle: str, prior_strength: float, max_iter: int, tol: float) -> None:
    """Check the model's constructor arguments (see :class:`~labelwise.oracle.tree.DirichletTreeModel`).

    Raises
    ------
    ValueError
        Naming the first invalid argument and what it must be.
    """
    if not isinstance(hierarchy, Hierarchy):
        raise ValueError(f"hierarchy: expected a Hierarchy, got {type(hierarchy).__name__}")
    if oracle not in ("deterministic", "stochastic"):
        raise ValueError(f"oracle: must be 'deterministic' or 'stochastic', got {oracle!r}")
    if isinstance(prior_strength, bool) or not isinstance(prior_strength, Real) or not (
        np.isfinite(prior_strength) and prior_strength >= 0
    ):
        raise ValueError(f"prior_strength: must be a finite number >= 0, got {prior_strength!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, Integral) or max_iter < 1:
        raise ValueError(f"max_iter: must be an integer >= 1, got {max_iter!r}")
    if isinstance(tol, bool) or not isinstance(tol, Real) or not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol: must be a finite number >= 0, got {tol!r}")


def checked_observations(blocks, labels, n_leaves: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``blocks`` and ``labels`` of observed items as int64 arrays, checked.

    Raises
    ------
    ValueError
        Unless both are 1-d integer arrays of equal length, blocks in ``[0, n_leaves)`` and labels in
        ``[0, n_classes)``.
    """
    b = np.asarray(blocks)
    y = np.asarray(labels)
    if b.ndim != 1 or y.ndim != 1 or b.shape != y.shape:
        raise ValueError(f"blocks, labels: expected two 1-d arrays of equal length, got shapes {b.shape} and {y.shape}")
    for name, arr, hi in (("blocks", b, n_leaves), ("labels", y, n_classes)):
        if arr.size and (arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= hi):
            raise ValueError(f"{name}: must be integers in [0, {hi}), got dtype {arr.dtype}, "
                             f"range [{arr.min()}, {arr.max()}]")
    return b.astype(np.int64, copy=False), y.astype(np.int64, copy=False)
