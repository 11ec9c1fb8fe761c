"""A variance for the AUC that does not collapse when few positives are labeled.

The design-based variance of the AUC (:mod:`labelwise.measures.auc`) is the
weighted DeLong variance: per class ``k``, the spread of the labeled items'
placements over the class's effective size,

    var = sum_k S_k / n_k,   S_k = sum_{j in k} w_j^2 (V_j - A)^2 / sum_{j in k} w_j^2,
    n_k = (sum_{j in k} w_j)^2 / sum_{j in k} w_j^2

(Kish's effective size; ``w`` the design weights, ``V_j`` the placement of
E. R. DeLong, D. M. DeLong and D. L. Clarke-Pearson, Biometrics 44, 1988).
With a handful of labeled positives that all score high (the usual sample
from an imbalanced pool) ``S_pos`` misses the rare low-scoring positives that
make the AUC uncertain, and the interval is far too narrow exactly when the
estimate is too high.

The remedy here puts a prior on each class's score distribution: a Dirichlet
process (T. S. Ferguson, "A Bayesian Analysis of Some Nonparametric
Problems", Annals of Statistics 1(2), 1973) whose base measure is the pool's
expected positives (negatives) per score bin under the model's probabilities,
recalibrated on the labels by maximum a posteriori Platt scaling
(:func:`~labelwise.oracle.calibration.fit_platt`; J. Platt, 1999), with
concentration ``alpha`` (:data:`PSEUDO_COUNT` labeled items of the class).
Its posterior mean of the class's distribution is
``(n_k F_k + alpha G_k) / (n_k + alpha)`` (``F_k`` the design-weighted
empirical distribution, ``G_k`` the base measure); the spread ``S_k`` and
the placements are taken under it, centred at the estimate ``A``::

    S~_k = (n_k S_k + alpha sum_b G_kb (V~_b - A)^2) / (n_k + alpha),   var~ = sum_k S~_k / n_k.

The estimate keeps its design-based value and its variance becomes
``max(var, var~)``: the prior only widens, its weight ``alpha / (n_k +
alpha)`` vanishes as labels accrue, and with ``alpha = 0`` ``var~`` is the
weighted DeLong variance itself.

``var~`` is a variance for a sample drawn as if uniformly.  A stratified
sample's variance is uniform sampling's less the variance between its
strata (Cochran, *Sampling Techniques*, 3rd ed., 1977, sec. 5.6), so there
the floor is ``var~`` less the gain the labels show, the weighted DeLong
variance minus the design's: without it the floor undid the strata's gain
and the interval was 2.3 times the error on a balanced pool at 2000 labels
(``benchmarks/auc_designs.py``).
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..oracle import score_prior
from ..oracle.calibration import block_quantiles, fit_platt, logits_of

if TYPE_CHECKING:
    from ..designs import Sampler
    from ..draws import Sample
    from ..estimators import Estimate
    from ..pool import Pool
    from .auc import AUC

__all__ = ["PRIOR_BASIS", "PSEUDO_COUNT", "prior_variance", "recalibrated_bins", "with_prior_variance"]

#: Concentration ``alpha`` of the Dirichlet-process prior: labeled items of a class the prior counts as.
PSEUDO_COUNT = 50.0

#: Per pool (held weakly) and measure: the items per score bin and quantiles of the logits within each.
_QUADRATURE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: What the interval assumes (:attr:`~labelwise.estimators.Estimate.basis`).
PRIOR_BASIS = (f"the AUC's variance is at least that under a prior on each class's score distribution: the pool's "
               f"probabilities recalibrated on the labels (Platt), worth {PSEUDO_COUNT:g} labeled items of each class")


def _bin_quadrature(measure: AUC, pool: Pool) -> tuple[np.ndarray, np.ndarray]:
    """Items per score bin and 16 quantiles of the model's logits within each bin (computed once per pool)."""
    per_pool = _QUADRATURE.setdefault(pool, {})
    if measure not in per_pool:
        bins = measure._k(pool.outputs())
        logits = logits_of(score_prior(pool, systems=[measure.system])[:, measure.positive])
        per_pool[measure] = (np.bincount(bins, minlength=measure.n_bins).astype(float),
                             block_quantiles(bins, logits, measure.n_bins))
    return per_pool[measure]


def recalibrated_bins(measure: AUC, pool: Pool, sample: Sample) -> np.ndarray:
    """Expected positives, then negatives, per score bin under the pool's probabilities recalibrated on the labels.

    The system's probabilities of ``measure.positive`` (:func:`~labelwise.oracle.score_prior`) are
    Platt-recalibrated on the labeled draws with their design weights, so an over- or under-confident model
    still gives the right spread of scores within each class.  A bin's expected positives are its size times
    the mean recalibrated probability over quantiles of its logits (quadrature: ``O(B)`` per estimate).

    Returns
    -------
    ndarray, shape (2 B,)
    """
    counts, quantiles = _bin_quadrature(measure, pool)
    d = sample.draws
    logits = logits_of(score_prior(pool, systems=[measure.system], items=d.items)[:, measure.positive])
    platt = fit_platt(logits, (sample.labels == measure.positive).astype(float), d.weight * d.count)
    positives = counts * platt(quantiles).mean(axis=1)
    return np.concatenate([positives, counts - positives])


def prior_variance(total: np.ndarray, total_sq: np.ndarray, prior: np.ndarray, auc: float,
                   pseudo_count: float = PSEUDO_COUNT) -> float:
    """``var~`` of the module docstring from the labeled draws' tallies per (class, bin) cell.

    Parameters
    ----------
    total, total_sq : ndarray, shape (2 B,)
        ``sum_j w_j l_j`` and ``sum_j w_j^2 l_j`` over the labeled draws (one-hot losses: positives'
        bins, then negatives').
    prior : ndarray, shape (2 B,)
        The base measures ``G``, positives then negatives (any scale; normalized per class).
    auc : float
        The estimate ``A`` the spreads are centred at.
    pseudo_count : float
        ``alpha``; 0 gives the weighted DeLong variance.

    Returns
    -------
    float
    """
    B = total.size // 2
    classes = [slice(0, B), slice(B, 2 * B)]
    n_eff = [total[c].sum() ** 2 / total_sq[c].sum() for c in classes]
    # posterior mean of each class's distribution over the bins
    pos, neg = ((n * total[c] / total[c].sum() + pseudo_count * prior[c] / prior[c].sum()) / (n + pseudo_count)
                for n, c in zip(n_eff, classes))
    placements = [np.cumsum(neg) - neg / 2,  # a positive in bin b beats the negatives below it, half those in it
                  pos[::-1].cumsum()[::-1] - pos / 2]  # a negative in bin b loses to the positives above it
    var = 0.0
    for n, c, v in zip(n_eff, classes, placements):
        dev = (v - auc) ** 2
        spread = (n * (total_sq[c] @ dev) / total_sq[c].sum() + pseudo_count * (prior[c] @ dev) / prior[c].sum())
        var += spread / (n + pseudo_count) / n
    return float(var)


def with_prior_variance(measure: AUC, estimate: Estimate, pool: Pool, sampler: Sampler, sample: Sample) -> Estimate:
    """``estimate`` with its variance raised to ``var~`` where that is larger (module docstring).

    Left as it is when undefined, when it is a census of the pool, or when its interval is a posterior's.
    """
    if not estimate.defined[0] or estimate.posterior is not None or sample.n_labels >= pool.n_items:
        return estimate
    d = sample.draws
    losses = sampler.losses(measure, sample)
    total, total_sq = (d.count * d.weight) @ losses, (d.count * d.weight**2) @ losses
    bins, auc = recalibrated_bins(measure, pool, sample), float(estimate.value[0])
    var = prior_variance(total, total_sq, bins, auc)
    if sampler.stratified_gain:  # less the strata's gain over a uniform sample (module docstring)
        var -= max(prior_variance(total, total_sq, bins, auc, pseudo_count=0.0) - estimate.cov[0, 0], 0.0)
    if not var > estimate.cov[0, 0]:
        return estimate
    basis = f"{estimate.basis}; {PRIOR_BASIS}" if estimate.basis else PRIOR_BASIS
    return replace(estimate, cov=np.array([[var]]), basis=basis)
