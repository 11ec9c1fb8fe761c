"""Strata: a partition of the pool into non-empty strata, and :func:`make_strata` to build one by score.

The score rules themselves are in :mod:`labelwise.partition.bins`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral
from typing import Literal

import numpy as np

from ..validation import check_int
from .bins import check_scores, csf_bins, quantile_bins

__all__ = ["Strata", "make_strata"]


@dataclass(frozen=True, eq=False)
class Strata:
    """A partition of the pool into non-empty strata.

    Attributes
    ----------
    assignment : ndarray of int64, shape (N,)
        Stratum ``0..K-1`` of each item (by position in the pool).
    sizes : ndarray of int64, shape (K,)
        Number of items in each stratum (all positive).

    Build one with :meth:`from_assignment` or :func:`make_strata`.
    """

    assignment: np.ndarray
    sizes: np.ndarray
    _order: np.ndarray | None = field(default=None, repr=False, compare=False)
    _offsets: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        a = np.asarray(self.assignment)
        s = np.asarray(self.sizes)
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise ValueError(f"assignment: expected a 1-d integer array, got shape {a.shape} dtype {a.dtype}")
        if s.ndim != 1 or s.dtype.kind not in "iu" or s.size == 0 or np.any(s <= 0):
            raise ValueError("sizes: expected a non-empty 1-d array of positive integers")
        if int(s.sum()) != a.size:
            raise ValueError(f"sizes: sum to {int(s.sum())} but the assignment has {a.size} items")
        object.__setattr__(self, "assignment", a.astype(np.int64, copy=False))
        object.__setattr__(self, "sizes", s.astype(np.int64, copy=False))

    @classmethod
    def from_assignment(cls, assignment) -> Strata:
        """Build strata from one non-negative integer label per item.

        Labels are renumbered ``0..K-1`` in increasing order, dropping unused
        labels, so that every stratum is non-empty (labels that are already
        ``0..K-1`` with no gaps are kept as they are).

        Raises
        ------
        ValueError
            If ``assignment`` is empty, not 1-d, or not non-negative integers.
        """
        a = np.asarray(assignment)
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"assignment: expected a non-empty 1-d array, got shape {a.shape}")
        if a.dtype.kind == "b" or a.dtype.kind not in "iu":
            if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
                a = a.astype(np.int64)
            else:
                raise ValueError(f"assignment: must hold integer stratum labels, got dtype {a.dtype}")
        a = a.astype(np.int64, copy=False)
        if a.min() < 0:
            raise ValueError(f"assignment: stratum labels must be >= 0, found {int(a.min())}")
        counts = np.bincount(a)
        used = counts > 0
        if not used.all():
            a = (np.cumsum(used) - 1)[a]
            counts = counts[used]
        return cls(a, counts.astype(np.int64))

    @property
    def n_strata(self) -> int:
        """Number of strata ``K``."""
        return int(self.sizes.size)

    @property
    def n_items(self) -> int:
        """Number of items ``N``."""
        return int(self.assignment.size)

    @property
    def weights(self) -> np.ndarray:
        """Stratum weights ``N_h / N``, shape (K,)."""
        return self.sizes / self.assignment.size

    def members(self, h: int) -> np.ndarray:
        """Positions (sorted) of the items of stratum ``h``.

        The first call sorts the assignment once (``O(N)`` for moderate
        ``K``); later calls are ``O(N_h)``.
        """
        if isinstance(h, bool) or not isinstance(h, Integral) or not 0 <= h < self.n_strata:
            raise ValueError(f"h: stratum index must be an integer in 0..{self.n_strata - 1}, got {h!r}")
        if self._order is None:
            K = self.n_strata
            small = self.assignment.astype(np.int16 if K <= np.iinfo(np.int16).max else np.int64)
            object.__setattr__(self, "_order", np.argsort(small, kind="stable"))
            offsets = np.zeros(K + 1, dtype=np.int64)
            np.cumsum(self.sizes, out=offsets[1:])
            object.__setattr__(self, "_offsets", offsets)
        return self._order[self._offsets[h] : self._offsets[h + 1]]

    def __len__(self) -> int:
        return self.n_strata


def make_strata(
    scores: np.ndarray,
    n_strata: int,
    method: Literal["csf", "quantile"] = "csf",
    *,
    n_fine: int | None = None,
) -> Strata:
    """Stratify items by score.

    Parameters
    ----------
    scores : ndarray, shape (N,)
        Finite real scores, e.g. ``pool.primary_scores()``.
    n_strata : int
        Requested number of strata (at least 1); fewer result when there are
        fewer distinct scores.
    method : {"csf", "quantile"}
        :func:`csf_bins` (cumulative square-root frequency rule with rank
        fallback) or :func:`quantile_bins` (equal-count strata).
    n_fine : int, optional
        Fine bins of the CSF rule (ignored by ``"quantile"``).

    Returns
    -------
    Strata

    Raises
    ------
    ValueError
        Naming ``scores``, ``n_strata``, ``method`` or ``n_fine`` when invalid.
    """
    scores = check_scores(scores)
    n_strata = check_int("n_strata", n_strata)
    if method == "csf":
        assignment = csf_bins(scores, n_strata, n_fine)
    elif method == "quantile":
        assignment = quantile_bins(scores, n_strata)
    else:
        raise ValueError(f"method: must be 'csf' or 'quantile', got {method!r}")
    sizes = np.bincount(assignment)
    return Strata(assignment, sizes)
