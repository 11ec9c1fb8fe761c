"""Stratified sampling without replacement within strata of the score.

Strata are score bins (cumulative square-root frequency by default).  Each
batch is allocated so that the cumulative number of labels per stratum
tracks the target allocation: proportional (``n_h ∝ N_h``) or Neyman
(``n_h ∝ N_h S_h``, with ``S_h`` the prior standard deviation of the
projected loss ``Dg(R0) l`` within the stratum).  Every stratum first gets
``min_per_stratum`` labels (so its variance can be estimated).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..draws import Draws, Sample
from ..engines.hashing import generator_seed
from ..estimators import Estimate, make_estimate, stratified_moments
from ..estimators.label_floor import stratum_slope_moments
from ..measures import Measure
from ..oracle import score_prior
from ..partition import Strata, make_strata
from ..pool import Pool
from ..validation import check_int
from .base import Design, Sampler, SharedCache, check_share, check_system, design_scores
from .hashed import HashDrawn, HashOrder, hash_keys
from .importance import prior_deviation

__all__ = ["StratifiedDesign", "StratifiedSampler", "allocate", "planned_allocation", "stratified_batch"]


def allocate(n: int, target: np.ndarray, counts: np.ndarray, capacity: np.ndarray, minimum: int = 2) -> np.ndarray:
    """Split ``n`` new labels over strata.

    Strata below ``minimum`` labels are served first.  The rest moves the
    final counts as close as possible to ``s * target`` (proportions summing
    to one) for the new total: final counts ``clip(s * target, counts,
    counts + capacity)`` with ``s`` found by bisection, so a stratum that runs
    out of items passes its share to the others in the target ratio.
    Fractions are rounded by largest remainder.

    Returns
    -------
    ndarray of int
        New labels per stratum, summing to ``min(n, capacity.sum())``, never
        beyond a stratum's ``capacity`` (unlabeled items left).
    """
    n = int(min(n, capacity.sum()))
    alloc = np.zeros_like(capacity)
    need_min = np.minimum(np.maximum(minimum - counts, 0), capacity)
    for h in np.argsort(-need_min, kind="stable"):  # at most K strata
        take = min(int(need_min[h]), n - int(alloc.sum()))
        if take <= 0:
            break
        alloc[h] += take
    left = n - int(alloc.sum())
    if left == 0:
        return alloc
    now = (counts + alloc).astype(float)
    limit = (counts + capacity).astype(float)
    weights = np.where(limit > now, target, 0.0)
    if weights.sum() <= 0:  # only zero-target strata have room: fill them by capacity
        weights = limit - now
    total = now.sum() + left
    lo, hi = 0.0, total / weights[weights > 0].min() + 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if np.clip(mid * weights, now, limit).sum() < total:
            lo = mid
        else:
            hi = mid
    share = np.clip(hi * weights, now, limit) - now
    share *= left / share.sum()
    base = np.minimum(np.floor(share).astype(np.int64), capacity - alloc)
    rest = left - int(base.sum())
    if rest > 0:
        frac = np.where(capacity - alloc - base > 0, share - base, -np.inf)
        base[np.argsort(-frac, kind="stable")[:rest]] += 1
    return alloc + base


@dataclass(frozen=True, kw_only=True)
class StratifiedDesign(Design):
    """Stratified sampling on score bins, without replacement within a stratum.

    Parameters
    ----------
    n_strata : int
        Number of score strata (fewer when the scores have fewer distinct values).
    allocation : {"proportional", "neyman"}
    method : {"csf", "quantile"}
        How strata are cut from the scores.
    system : int or "mean"
        Whose scores define the strata; ``"mean"``: the mean of every system's probability
        (:func:`~labelwise.designs.base.design_scores`).
    lam : float
        Prior shrinkage for Neyman allocation (Yilmaz et al. 2021, eq. 13).
    min_per_stratum : int
        Labels every stratum receives before the allocation applies.

    Under a stochastic oracle (noisy or several annotators) each item is
    still labeled once, the estimate is of the measure's expectation over
    the oracle's labels, and its variance drops the finite-population
    correction (a stratum labeled in full is not exact).
    """

    name = "stratified"
    with_replacement = False
    n_strata: int = 16
    allocation: str = "proportional"
    method: str = "csf"
    system: int | str = 0
    lam: float = 1.0
    min_per_stratum: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.allocation not in ("proportional", "neyman"):
            raise ValueError(f"allocation: choose 'proportional' or 'neyman', got {self.allocation!r}")
        if self.method not in ("csf", "quantile"):
            raise ValueError(f"method: choose 'csf' or 'quantile', got {self.method!r}")
        check_int("n_strata", self.n_strata, 1)
        check_system(self.system)
        check_int("min_per_stratum", self.min_per_stratum, 0)
        check_share("lam", self.lam)

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> StratifiedSampler:
        strata = make_strata(design_scores(pool, self.system), self.n_strata, method=self.method)
        sizes = strata.sizes.astype(np.int64)
        if self.allocation == "proportional":
            target = sizes / sizes.sum()
        else:
            target = self._neyman_target(pool, measure, strata)
        return StratifiedSampler(pool, measure, oracle, rng, strata, target, self.min_per_stratum, budget)

    def _neyman_target(self, pool: Pool, measure: Measure, strata: Strata) -> np.ndarray:
        """``N_h S_h`` normalised; ``S_h^2`` is the prior within-stratum variance of ``Dg(R0) l``."""
        probs = score_prior(pool, self.lam)
        R0 = measure.expected_loss_sum(pool.outputs(), probs) / pool.n_items
        second = prior_deviation(measure, pool, probs, R0) ** 2
        J = measure.finite_jacobian(R0)
        S2 = np.zeros(strata.n_strata)
        for h in range(strata.n_strata):  # one pass per stratum, vectorised within
            members = strata.members(h)
            mean_u = J @ (measure.expected_loss_sum(pool.outputs(members), probs[members]) / members.size)
            S2[h] = max(second[members].mean() - mean_u @ mean_u, 0.0)
        weight = strata.sizes * np.sqrt(S2)
        if weight.sum() <= 0:
            return strata.sizes / strata.sizes.sum()
        return weight / weight.sum()


def planned_allocation(budget: int | None, target: np.ndarray, sizes: np.ndarray, min_per_stratum: int) -> np.ndarray:
    """Labels per stratum a run of ``budget`` labels is expected to take (what a :class:`HashOrder` first reaches)."""
    return allocate(budget or 0, target, np.zeros_like(sizes), sizes, min_per_stratum)


def stratified_batch(order: HashOrder, target: np.ndarray, counts: np.ndarray, n_new: int, min_per_stratum: int,
                     is_labeled: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One batch: ``n_new`` labels allocated over the strata (:func:`allocate`), each stratum's share its next
    unlabeled items in ``order`` (groups = strata), handed out in increasing ``u``.

    Parameters
    ----------
    order : HashOrder
    target : ndarray, shape (K,)
        Target allocation (proportions).
    counts : ndarray of int, shape (K,)
        Labeled items per stratum.
    n_new : int
    min_per_stratum : int
    is_labeled : callable
        Which of given items are labeled.

    Returns
    -------
    items : ndarray of int
    strata : ndarray of int
        Their strata.
    alloc : ndarray of int, shape (K,)
        New items per stratum.

    Raises
    ------
    ValueError
        When fewer than ``n_new`` items are unlabeled.
    """
    capacity = order.sizes - counts
    if capacity.sum() < n_new:
        raise ValueError(f"only {int(capacity.sum())} unlabeled items left, cannot draw {n_new}")
    alloc = allocate(n_new, target, counts, capacity, min_per_stratum)
    order.reach(order.start + alloc)  # every stratum at once: one pass of an engine
    strata = np.flatnonzero(alloc)
    taken = [order.take(h, int(alloc[h]), is_labeled) for h in strata]  # at most K strata
    if not taken:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), alloc
    walked, u = (np.concatenate(parts) for parts in zip(*taken))
    of_walked = np.repeat(strata, [part.size for part, _ in taken])
    fresh = ~is_labeled(walked)  # labeled items the order passes are skipped: a stratum's sample is its labels
    by = np.argsort(u[fresh], kind="stable")
    return walked[fresh][by], of_walked[fresh][by], alloc


class StratifiedSampler(HashDrawn, Sampler):
    """One run of :class:`StratifiedDesign`.

    Within a stratum the new items are its next unlabeled ones in increasing
    ``u = H(item_id, seed)`` (:mod:`~labelwise.designs.hashed`): a simple
    random sample without replacement of its unlabeled items, as engine
    pools draw it.  A batch is handed out in increasing ``u``.
    """

    stratified_gain = True

    def __init__(self, pool: Pool, measure: Measure, oracle: str, rng: np.random.Generator, strata: Strata,
                 target: np.ndarray, min_per_stratum: int, budget: int | None = None):
        super().__init__(pool, measure, oracle, rng)
        self.assignment = strata.assignment
        self.sizes = strata.sizes.astype(np.int64)
        self.target, self.min_per_stratum, self.budget = target, min_per_stratum, budget
        self.hash_seed, self._order = generator_seed(rng), None
        self._slope_cache = SharedCache()

    def label_floor_inputs(self, measure: Measure, sample: Sample) -> dict:
        """``slope_moments`` and ``positive`` for a floor on each stratum's label variance
        (:mod:`~labelwise.estimators.label_floor`); empty (no floor) unless the pool's labels are binary, and
        for a measure whose own refinement floors the labels not seen
        (:attr:`~labelwise.measures.Measure.floors_unseen_labels`: the AUC, whose interval took both floors
        at up to 4 times its error on a 1:100 pool, ``benchmarks/auc_designs.py``).

        The strata's slope moments are kept for the last ``measure`` asked for, shared by the sampler's copies (a
        simulation's runs).  Excluded draws count as negatives.
        """
        if self.pool.n_classes != 2 or measure.floors_unseen_labels:
            return {}
        cache = self.__dict__.setdefault("_slope_cache", SharedCache())  # samplers stored before it have none
        if cache.get("measure") is not measure:
            cache.update(measure=measure, moments=self.slope_moments(measure))
        moments = cache["moments"]
        positive = np.asarray(sample.labels) == 1
        if sample.excluded is not None:
            positive &= ~sample.excluded
        return {"slope_moments": moments, "positive": positive}

    def slope_moments(self, measure: Measure) -> np.ndarray:
        """:func:`~labelwise.estimators.label_floor.stratum_slope_moments` of the strata over every pool item."""
        return stratum_slope_moments(measure, self.pool.outputs(), self.assignment, self.sizes.size)

    def new_order(self) -> HashOrder:
        order = HashOrder.in_memory(hash_keys(self.pool), self.hash_seed, self.assignment)
        order.reach(planned_allocation(self.budget, self.target, self.sizes, self.min_per_stratum))
        return order

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        counts = np.bincount(self.assignment[labeled], minlength=self.sizes.size)
        items, strata, alloc = stratified_batch(self.order, self.target, counts, n_new, self.min_per_stratum,
                                                labeled.__getitem__)
        after = counts + alloc
        n_h = after[strata].astype(float)
        N_h = self.sizes[strata].astype(float)
        return Draws(items, N_h / n_h, n_h / N_h, strata)

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        R, _, cov, _ = stratified_moments(measure, self.losses(measure, sample), self.assignment[d.items],
                                          self.sizes, finite_population=not self.stochastic,
                                          **self.label_floor_inputs(measure, sample))
        return make_estimate(measure, R, cov, sample.n_labels, len(d), level)
