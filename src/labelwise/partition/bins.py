"""Score-based stratification of a pool.

Stratified sampling needs a partition of the pool into strata that are
homogeneous in the quantity to estimate.  A system's score is a cheap, strong
proxy for the label, so strata are intervals of the score:

* :func:`csf_bins` -- the cumulative square-root frequency rule of Dalenius
  and Hodges (1959), which approximates the boundaries of optimal
  (Neyman-allocated) stratification on the score, with a rank-based
  refinement when the score distribution is too concentrated for the rule;
* :func:`quantile_bins` -- strata with (nearly) equal numbers of items.

Both return one stratum index per item, ``0..K'-1`` with ``K' <= n_strata``.
Strata are ordered by score (every score of stratum ``h`` is below every score
of stratum ``h + 1``), every stratum is non-empty and items with equal scores
are always in the same stratum, so ``K' = min(n_strata, D)`` where ``D`` is the
number of distinct scores (``csf_bins`` attains this bound too, thanks to its
fallback).  :class:`Strata` wraps an assignment with stratum sizes and member
look-up, and :func:`make_strata` validates input and builds one.

All functions are vectorised and run in ``O(N log N)`` time (the CSF rule is
``O(N)`` when it needs no fallback).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from numbers import Integral
from typing import Literal

import numpy as np

from ..validation import check_int

__all__ = ["Strata", "csf_bins", "make_strata", "quantile_bins"]

#: Minimum number of fine bins per stratum used by the CSF rule by default.
FINE_PER_STRATUM = 20
#: Default number of fine bins for large pools (see :func:`default_n_fine`).
FINE_BINS = 1000


# ---------------------------------------------------------------- validation

def _check_scores(scores) -> np.ndarray:
    arr = np.asarray(scores)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"scores: expected a 1-d array (one score per item), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("scores: empty; give at least one score")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"scores: must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        raise ValueError(
            f"scores: {bad} NaN or infinite value(s) (first at position {int(np.argmax(~np.isfinite(arr)))}); "
            "fill or drop them first"
        )
    return arr


# ---------------------------------------------------------------- helpers
def _groups(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct score values ``u`` (sorted) and ``cum`` with ``cum[b]`` = #items below ``u[b]``."""
    u, counts = np.unique(scores, return_counts=True)
    cum = np.zeros(u.size + 1, dtype=np.int64)
    np.cumsum(counts, out=cum[1:])
    return u, cum


def _fill(cum: np.ndarray, bounds: np.ndarray, n_strata: int) -> np.ndarray:
    """Add group boundaries until there are ``n_strata`` strata or no stratum can be split.

    A boundary ``b`` (``1 <= b < D``) separates the distinct values ``< u[b]``
    from those ``>= u[b]``.  The missing strata are shared out among the
    current strata in proportion to their item counts (each new piece goes to
    the stratum whose equal-count pieces are currently the largest, and a
    stratum gets at most as many pieces as it has distinct values); each
    stratum is then cut at the group boundaries nearest to its own
    equal-count positions.  Ties may merge some of these cuts, so this repeats
    until the target is reached (at least one boundary is added per round;
    the loops run over strata, never over items).
    """
    D = cum.size - 1
    bounds = np.unique(np.asarray(bounds, dtype=np.int64))
    target = min(n_strata, D)
    while bounds.size + 1 < target:
        edges = np.concatenate(([0], bounds, [D]))
        lo, hi = edges[:-1], edges[1:]
        size = (cum[hi] - cum[lo]).astype(float)
        cap = hi - lo  # distinct values in each stratum
        pieces = np.ones(lo.size, dtype=np.int64)
        heap = [(-size[i], i) for i in np.flatnonzero(cap >= 2).tolist()]
        heapq.heapify(heap)
        for _ in range(target - lo.size):
            if not heap:
                break
            _, i = heapq.heappop(heap)
            pieces[i] += 1
            if pieces[i] < cap[i]:
                heapq.heappush(heap, (-size[i] / pieces[i], i))
        new = [bounds]
        for i in np.flatnonzero(pieces > 1).tolist():
            a, b_hi = int(lo[i]), int(hi[i])
            t = cum[a] + np.arange(1, pieces[i]) * (size[i] / pieces[i])
            b = np.clip(np.searchsorted(cum, t, side="left"), a + 1, b_hi - 1)
            left = np.maximum(b - 1, a + 1)
            new.append(np.where((left < b) & (t - cum[left] <= cum[b] - t), left, b))
        bounds = np.unique(np.concatenate(new))
    return bounds


def _assign(scores: np.ndarray, u: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Stratum of each item: the number of cut values ``u[bounds]`` at or below its score."""
    return np.searchsorted(u[bounds], scores, side="right").astype(np.int64)


def _quantile_bounds(cum: np.ndarray, n_strata: int) -> np.ndarray:
    """Group boundaries nearest to the equal-count cut positions ``k N / K``."""
    D = cum.size - 1
    N = cum[-1]
    if n_strata <= 1 or D <= 1:
        return np.zeros(0, dtype=np.int64)
    t = np.arange(1, n_strata) * (N / n_strata)
    b = np.clip(np.searchsorted(cum, t, side="left"), 1, D - 1)  # cum[b] >= t where possible
    left = np.maximum(b - 1, 1)
    use_left = (left < b) & (t - cum[left] <= cum[b] - t)
    return np.unique(np.where(use_left, left, b))


def _fine_index(scores: np.ndarray, lo: float, hi: float, n_fine: int) -> np.ndarray:
    """Index of the equal-width fine bin of each score (monotone in the score)."""
    span = hi - lo
    if not np.isfinite(span):  # extreme ranges: halve to avoid overflow
        x = scores * 0.5 - lo * 0.5
        span = hi * 0.5 - lo * 0.5
    else:
        x = scores - lo
    x *= n_fine / span
    idx = x.astype(np.int64)
    np.minimum(idx, n_fine - 1, out=idx)
    return idx


def default_n_fine(n_items: int, n_strata: int) -> int:
    """Default number of fine bins of the CSF rule.

    ``max(20 * n_strata, min(1000, n_items // 10))``: enough fine bins that each
    stratum spans many of them, but (for pools above a few thousand items)
    few enough that an occupied bin holds several items, since with one item
    per bin the square-root rule degenerates into equal-count strata.
    """
    return max(FINE_PER_STRATUM * n_strata, min(FINE_BINS, n_items // 10))


# ---------------------------------------------------------------- public API
def quantile_bins(scores: np.ndarray, n_strata: int) -> np.ndarray:
    """Equal-count strata by rank, never splitting tied scores.

    Cut points are placed at the boundary between distinct scores closest to
    the ideal positions ``k * N / n_strata``; when ties make several cuts
    coincide, the most populous strata that contain two or more distinct
    scores are split further into equal-count pieces until there are
    ``min(n_strata, number of distinct scores)`` strata.

    Parameters
    ----------
    scores : ndarray, shape (N,)
        Finite real scores.
    n_strata : int
        Requested number of strata ``K >= 1``.

    Returns
    -------
    ndarray of int64, shape (N,)
        Stratum ``0..K'-1`` of each item, ordered by score, all non-empty.

    Examples
    --------
    >>> quantile_bins(np.array([5.0, 1.0, 2.0, 2.0, 3.0, 4.0]), 2).tolist()
    [1, 0, 0, 0, 1, 1]
    """
    scores = _check_scores(scores)
    n_strata = check_int("n_strata", n_strata)
    u, cum = _groups(scores)
    bounds = _fill(cum, _quantile_bounds(cum, n_strata), n_strata)
    return _assign(scores, u, bounds)


def csf_bins(scores: np.ndarray, n_strata: int, n_fine: int | None = None) -> np.ndarray:
    """Strata by the cumulative square-root frequency rule (Dalenius-Hodges).

    The score range is cut into ``n_fine`` equal-width fine bins with item
    counts ``f_1..f_J``; the cumulative sum of ``sqrt(f_j)`` is divided into
    ``n_strata`` equal parts, and each stratum boundary is put at the fine-bin
    edge whose cumulative value is closest to ``k / n_strata`` of the total.
    Boundaries that leave a stratum empty are dropped.

    Fallback: when the score distribution is concentrated (a long tail, as
    with SVM margins, squeezes almost all items into a few fine bins) or has
    many tied scores, the rule yields fewer non-empty strata than asked.  The
    CSF boundaries are then kept and refined by rank: the missing strata are
    shared out among the CSF strata in proportion to their item counts and
    each CSF stratum is cut into equal-count (quantile) sub-strata, ties kept
    together, until there are ``min(n_strata, number of distinct scores)``
    strata.  This blends CSF in the sparse regions (e.g. the tail) with
    quantile strata in the dense ones.

    Parameters
    ----------
    scores : ndarray, shape (N,)
        Finite real scores.
    n_strata : int
        Requested number of strata ``K >= 1``.
    n_fine : int, optional
        Number of fine bins; defaults to :func:`default_n_fine`,
        ``max(20 * n_strata, min(1000, N // 10))``.

    Returns
    -------
    ndarray of int64, shape (N,)
        Stratum ``0..K'-1`` of each item, ordered by score, all non-empty,
        ``K' = min(n_strata, number of distinct scores)``.

    Notes
    -----
    ``O(N)`` when the rule gives ``n_strata`` strata; the fallback sorts the
    scores (``O(N log N)``).

    References
    ----------
    T. Dalenius and J. L. Hodges, "Minimum variance stratification",
    JASA 54 (1959) 88-101.

    Examples
    --------
    >>> s = np.linspace(0.0, 1.0, 1000)
    >>> np.bincount(csf_bins(s, 4)).tolist()
    [250, 250, 250, 250]
    """
    scores = _check_scores(scores)
    n_strata = check_int("n_strata", n_strata)
    N = scores.size
    n_fine = default_n_fine(N, n_strata) if n_fine is None else check_int("n_fine", n_fine, 2)
    lo, hi = float(scores.min()), float(scores.max())
    if n_strata == 1 or lo == hi:
        return np.zeros(N, dtype=np.int64)

    fine = _fine_index(scores, lo, hi, n_fine)
    f = np.bincount(fine, minlength=n_fine)
    root = np.cumsum(np.sqrt(f))
    t = np.arange(1, n_strata) * (root[-1] / n_strata)
    # a cut "after fine bin j" (j < n_fine - 1) sends bins > j to the next stratum
    j = np.clip(np.searchsorted(root, t, side="left"), 0, n_fine - 2)
    left = np.maximum(j - 1, 0)
    j = np.where((left < j) & (t - root[left] <= root[j] - t), left, j)
    # drop cuts that would leave a stratum empty (equal item counts below them)
    below = np.cumsum(f)[j]
    keep = (below > 0) & (below < N)
    j, below = j[keep], below[keep]
    _, first = np.unique(below, return_index=True)
    cuts = np.sort(j[first])

    if cuts.size + 1 >= n_strata:
        return np.searchsorted(cuts, fine, side="left").astype(np.int64)

    # fallback: refine by rank within the distinct score values
    del fine
    u, cum = _groups(scores)
    group_fine = _fine_index(u, lo, hi, n_fine)
    bounds = np.searchsorted(group_fine, cuts, side="right")  # first group in a bin > cut
    bounds = _fill(cum, bounds, n_strata)
    return _assign(scores, u, bounds)


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
    scores = _check_scores(scores)
    n_strata = check_int("n_strata", n_strata)
    if method == "csf":
        assignment = csf_bins(scores, n_strata, n_fine)
    elif method == "quantile":
        assignment = quantile_bins(scores, n_strata)
    else:
        raise ValueError(f"method: must be 'csf' or 'quantile', got {method!r}")
    sizes = np.bincount(assignment)
    return Strata(assignment, sizes)
