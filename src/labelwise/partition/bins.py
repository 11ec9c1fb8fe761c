"""Score-based stratification of a pool: one stratum index per item.

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
fallback).  :mod:`labelwise.partition.strata` wraps such an assignment.

All functions are vectorised and run in ``O(N log N)`` time (the CSF rule is
``O(N)`` when it needs no fallback).
"""
from __future__ import annotations

import heapq

import numpy as np

from ..validation import check_int

__all__ = ["csf_bins", "csf_cuts", "fine_scale", "quantile_bins"]

#: Minimum number of fine bins per stratum used by the CSF rule by default.
FINE_PER_STRATUM = 20
#: Default number of fine bins for large pools (see :func:`default_n_fine`).
FINE_BINS = 1000


# ---------------------------------------------------------------- validation

def check_scores(scores) -> np.ndarray:
    """``scores`` as a 1-d float64 array, checked to be non-empty, numeric and finite.

    Parameters
    ----------
    scores : array-like, shape (N,) or (N, 1)

    Returns
    -------
    ndarray of float64, shape (N,)

    Raises
    ------
    ValueError
        Naming ``scores`` and what is wrong with them.
    """
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


def fine_scale(lo: float, hi: float, n_fine: int) -> float:
    """``n_fine / (hi - lo)``: the fine bin of a score ``s`` is ``floor((s - lo) * scale)``, at most ``n_fine - 1``
    (for a finite ``hi - lo``; :func:`_fine_index`)."""
    return n_fine / (hi - lo)


def csf_cuts(f: np.ndarray, n_strata: int) -> np.ndarray:
    """The cumulative square-root frequency rule on fine-bin counts ``f`` (:func:`csf_bins`).

    Returns
    -------
    ndarray of int
        Increasing fine bins ``j``, each a cut sending the bins ``> j`` to the
        next stratum; fewer than ``n_strata - 1`` when the rule leaves strata
        empty (:func:`csf_bins` then refines by rank).
    """
    n_fine, N = f.size, int(f.sum())
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
    return np.sort(j[first])


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
    scores = check_scores(scores)
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
    scores = check_scores(scores)
    n_strata = check_int("n_strata", n_strata)
    N = scores.size
    n_fine = default_n_fine(N, n_strata) if n_fine is None else check_int("n_fine", n_fine, 2)
    lo, hi = float(scores.min()), float(scores.max())
    if n_strata == 1 or lo == hi:
        return np.zeros(N, dtype=np.int64)

    fine = _fine_index(scores, lo, hi, n_fine)
    cuts = csf_cuts(np.bincount(fine, minlength=n_fine), n_strata)

    if cuts.size + 1 >= n_strata:
        return np.searchsorted(cuts, fine, side="left").astype(np.int64)

    # fallback: refine by rank within the distinct score values
    del fine
    u, cum = _groups(scores)
    group_fine = _fine_index(u, lo, hi, n_fine)
    bounds = np.searchsorted(group_fine, cuts, side="right")  # first group in a bin > cut
    bounds = _fill(cum, bounds, n_strata)
    return _assign(scores, u, bounds)
