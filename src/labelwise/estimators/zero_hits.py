"""The upper end of a ratio estimated 0 because no labeled item is a hit (no true positive labeled).

A ratio of totals ``sum f / sum g`` (precision, recall, F-beta: E. Yilmaz,
P. Hayes, R. Habib, J. Burgess and D. Barber, "Sample Efficient Model
Evaluation", arXiv:2109.12043, 2021, eq. 1) whose labeled items hold no
*hit* -- no item whose numerator loss is nonzero -- is estimated 0, and every
design's variance of it is then zero or nearly so: no labeled loss moves the
numerator.  The interval must still reach the hits the items not labeled yet
may hold, and only those: the numerator's *support* (the items whose
numerator loss is nonzero for some label: a system's predicted positives)
splits into ``n`` labeled items, none a hit, and ``U`` unlabeled ones.  A 0
from 3 labeled of 500 predicted positives says little; a 0 from all 500
(a census) is exact.

The share of hits in the support gets Jeffreys' prior ``Beta(1/2, 1/2)``
(Brown, Cai and DasGupta, "Interval estimation for a binomial proportion",
Statistical Science 16(2), 2001, sec. 4.1.2), the labeled support items
counting as ``n`` misses, so the hits among the ``U`` unlabeled items are
beta-binomial ``BB(U, 1/2, n + 1/2)``, and ``c``, its ``(1 + level) / 2``
quantile, bounds them as the Jeffreys interval's upper end bounds a
proportion.  With ``c`` hits the ratio is at most ``c h / (D + c e)``: ``h``
the largest numerator loss of a hit, ``D`` the smallest denominator total the
labels allow (the labeled items' losses, every unlabeled item at its smallest
denominator loss) and ``e`` the smallest rise of an item's denominator loss
when it becomes a hit (F1: ``2 c / (PP + P_labeled + c)`` with ``PP`` the
predicted positives and ``P_labeled`` the labeled positives; precision
``c / PP``; recall ``c / (P_labeled + c)``).  The end takes the unlabeled
support items as exchangeable with the labeled ones: it is a model's, stated
in the estimate's basis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .pool_cache import per_pool

if TYPE_CHECKING:
    from ..measures import Measure
    from ..pool import Outputs, Pool
    from .result import Estimate

__all__ = ["ZERO_HITS_BASIS", "hits_upper", "pool_support_terms", "support_terms", "with_zero_hits", "zero_hits_end"]

#: What the upper end of a ratio estimated 0 with no hit labeled assumes (:attr:`Estimate.basis`).
ZERO_HITS_BASIS = ("a ratio estimated 0 with no hit among its labeled items (no true positive labeled) reaches the "
                   "hits its unlabeled items may hold, taken as exchangeable with the labeled ones (Jeffreys prior)")

#: Beyond this many unlabeled items the beta-binomial quantile is the Beta's, times the items.
_EXACT_ITEMS = 1_000_000
#: Most labels (classes, or a multi-label pool's label codes) whose losses are taken over the pool, a pass each:
#: beyond it a ratio at 0 keeps its interval.
_MAX_CLASSES = 16


def hits_upper(unlabeled: int, labeled: int, level: float = 0.95) -> int:
    """The ``(1 + level) / 2`` quantile of the hits among ``unlabeled`` items when none of ``labeled`` is one.

    The hits are beta-binomial ``BB(unlabeled, 1/2, labeled + 1/2)``: the
    predictive of Jeffreys' posterior on the share of hits (module docstring).
    Above a million items, the Beta quantile times ``unlabeled`` (rounded up).
    """
    from scipy.special import betaincinv, betaln, gammaln

    u, a, b, q = int(unlabeled), 0.5, labeled + 0.5, (1 + level) / 2
    if u <= 0:
        return 0
    if u > _EXACT_ITEMS:
        return min(u, int(np.ceil(u * betaincinv(a, b, q))))
    k = np.arange(u + 1)
    log_pmf = gammaln(u + 1) - gammaln(k + 1) - gammaln(u - k + 1) + betaln(k + a, u - k + b) - betaln(a, b)
    # the first count whose CDF reaches q (rounding can leave the last CDF a hair below 1)
    return min(u, int(np.searchsorted(np.cumsum(np.exp(log_pmf)), q * (1 - 1e-12))))


def zero_hits_end(rows: np.ndarray, level: float) -> np.ndarray:
    """The upper end per component from :attr:`Estimate.zero_hits` rows ``(U, n, h, D, e)`` (NaN: none)."""
    rows = np.asarray(rows, dtype=float)
    ends = np.full(rows.shape[0], np.nan)
    for i in np.flatnonzero(np.isfinite(rows[:, 0])):  # one per ratio on its bound: a handful
        unlabeled, labeled, hit, floor, rise = rows[i]
        c = hits_upper(int(unlabeled), int(labeled), level)
        with np.errstate(divide="ignore", invalid="ignore"):
            ends[i] = c * hit / (floor + c * rise) if c else 0.0
    return ends


def support_terms(part: Measure, outputs: Outputs, counts: np.ndarray | None = None) -> np.ndarray:
    """The numerator's support of a ratio ``part`` over a population: ``(items, h, e, lowest)``.

    ``items`` counts the items whose numerator loss is nonzero for some label,
    ``h`` is the largest numerator loss of a hit among them and ``e`` the
    smallest rise of a denominator loss from its lowest to a hit's, and
    ``lowest`` the denominator total with every item at its lowest loss.

    Parameters
    ----------
    part : Measure
        A ratio of totals (loss ``[numerator, denominator]``).
    outputs : Outputs
        One row per item, or per group of items whose losses are alike (an engine's score blocks).
    counts : ndarray, shape (n,), optional
        Items per row (default 1).
    """
    counts = np.ones(len(outputs)) if counts is None else np.asarray(counts, dtype=float)
    hit, lowest, rise = _by_label(part, outputs)
    support = hit != 0
    if not support.any():
        return np.array([0.0, 0.0, 0.0, float(counts @ lowest)])
    return np.array([counts[support].sum(), hit[support].max(), rise[support].min(), float(counts @ lowest)])


def with_zero_hits(est: Estimate, measure: Measure, terms: Callable[[Measure], np.ndarray | None], labeled: Outputs,
                   labels: np.ndarray, items: np.ndarray, outside: Outputs | None = None) -> Estimate:
    """``est`` with :attr:`Estimate.zero_hits` set for each ratio of totals it estimates 0 with no hit labeled.

    Parameters
    ----------
    est : Estimate
        Of ``measure`` from the labeled draws.
    measure : Measure
        A ratio of totals (:class:`~labelwise.measures.base.RatioOfTotals`) or a
        combination holding some; other parts are left as they are.
    terms : callable
        :func:`support_terms` of a part over the whole pool (called only for a
        ratio at 0 with no hit labeled; ``None``: not known, the interval stays).
    labeled : Outputs
        The outputs of the labeled draws (an item drawn twice: twice).
    labels : ndarray, shape (n,)
        Their labels.
    items : ndarray of int, shape (n,)
        Their items (any ids): a labeled item counts once, at its draws' mean denominator loss.
    outside : Outputs, optional
        The items outside the population (not judgeable), none of them labeled.

    Returns
    -------
    Estimate
        ``est`` itself where no ratio sits at 0 with unlabeled items in its numerator's support.
    """
    from ..measures.base import CombinedMeasure, RatioOfTotals, _take

    parts = measure.parts if isinstance(measure, CombinedMeasure) else [measure]
    starts = np.cumsum([0, *(p.size for p in parts)])
    zero = est.defined & (est.value == est.lower_bound) & (est.lower_bound == 0)
    todo = [(k, p) for k, p in enumerate(parts) if isinstance(p, RatioOfTotals) and p.size == 1 and zero[starts[k]]]
    if not todo or not len(labels) or labeled.n_classes > _MAX_CLASSES:
        return est
    _, first, of_draw = np.unique(items, return_index=True, return_inverse=True)
    rows = np.full((measure.size, 5), np.nan)
    for k, part in todo:
        drawn = part.loss(labeled, labels)
        if np.any(drawn[:, 0] != 0):  # a hit is labeled: the ratio is 0 for another reason
            continue
        population = terms(part)
        if population is None:
            continue
        support, hit, rise, lowest = population
        hit_l, lowest_l, _ = _by_label(part, _take(labeled, first))
        hit_o, lowest_o, _ = _by_label(part, outside) if outside is not None and len(outside) else (0.0, 0.0, 0.0)
        n = int(np.count_nonzero(hit_l))
        unlabeled = int(support) - n - int(np.count_nonzero(hit_o))
        if unlabeled <= 0:  # a census of the support: the 0 is exact
            continue
        # each labeled item at its draws' mean denominator loss (several answers under a stochastic oracle), every
        # other item of the population at its lowest
        mean_den = np.bincount(of_draw, drawn[:, 1]) / np.bincount(of_draw)
        floor = lowest - np.sum(lowest_l) - np.sum(lowest_o) + mean_den.sum()
        rows[starts[k]] = unlabeled, n, hit, floor, rise
    if np.isnan(rows[:, 0]).all():
        return est
    return replace(est, zero_hits=rows, basis="; ".join(filter(None, (est.basis, ZERO_HITS_BASIS))))


def pool_support_terms(part: Measure, pool: Pool) -> np.ndarray:
    """:func:`support_terms` of ``part`` over every item of ``pool``, computed once per pool and measure (a
    pass over the pool, the same at every estimate of a session)."""
    return per_pool(pool, ("support_terms", part), lambda: support_terms(part, pool.outputs()))


def _by_label(part: Measure, outputs: Outputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the numerator loss as a hit (its largest over the labels), the lowest denominator loss and its rise
    to a hit's."""
    n = len(outputs)
    by_label = np.stack([part.loss(outputs, np.full(n, c)) for c in range(outputs.n_classes)])
    best = by_label[..., 0].argmax(axis=0)[None]
    den = by_label[..., 1]
    lowest = den.min(axis=0)
    return (np.take_along_axis(by_label[..., 0], best, axis=0)[0], lowest,
            np.take_along_axis(den, best, axis=0)[0] - lowest)
