"""The AUC's variance under static importance sampling, with the unlabeled items from the recalibrated model.

The static proposal of ``importance`` (Marchant & Rubinstein, "Needle in a
Haystack: Label-Efficient Evaluation under Extreme Class Imbalance", KDD
2021, eq. 5) gives the positives that score below most negatives almost no
draws; their weights are far above the others' and most runs never meet one,
so no variance built from the labels reflects them.  The proposal ``q`` is
known for every item, so the variance of one draw of the estimator (ibid.,
eq. 1),

    V = sum_x E[u_x^2] / (N^2 q(x)) - r^2,   u_x = Dg(R) l(x, y_x),  r = Dg(R) R,

needs only the labels of the items not labeled yet
(:func:`~labelwise.estimators.proposal_model_covariance`).  For the AUC
``u_x`` depends on the item only through its score bin and label (the DeLong
placements, :mod:`labelwise.measures.auc`), so the bins are the groups and an
unlabeled item is positive with its bin's mean probability under the
system's probabilities recalibrated on the labels
(:func:`~labelwise.measures.auc_variance.recalibrated_bins`, the same map as
the AUC's prior variance).  The interval is then that of
:func:`~labelwise.estimators.model_interval_covariance`, never narrower
than the design's.  The sampler's own interval takes the same variance
under its Dirichlet-tree model of score strata
(:meth:`~labelwise.designs.ImportanceSampler.model_covariance`); the
larger of the two is kept.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..estimators.model_covariance import (
    model_interval_covariance,
    proposal_model_covariance,
    unlabeled_proposal_sums,
)
from .auc_variance import recalibrated_bins

if TYPE_CHECKING:
    from ..designs import Sampler
    from ..draws import Sample
    from ..estimators import Estimate
    from ..pool import Pool
    from .auc import AUC

__all__ = ["with_importance_model_variance"]

#: Per ``importance`` run (held weakly): items, sum of ``1 / q`` and sum of ``q`` per score bin over the pool.
_PROPOSAL_BINS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _proposal_bins(measure: AUC, pool: Pool, sampler: Sampler) -> tuple[np.ndarray, ...]:
    """Items, ``sum 1 / q`` and ``sum q`` per score bin over the whole pool (computed once per run)."""
    if sampler not in _PROPOSAL_BINS:
        bins, B = measure._k(pool.outputs()), measure.n_bins
        _PROPOSAL_BINS[sampler] = (np.bincount(bins, minlength=B).astype(float),
                                   np.bincount(bins, 1.0 / sampler.q, B), np.bincount(bins, sampler.q, B))
    return _PROPOSAL_BINS[sampler]


def with_importance_model_variance(measure: AUC, estimate: Estimate, pool: Pool, sampler: Sampler,
                                   sample: Sample) -> Estimate:
    """``estimate`` with its variance raised to the recalibrated model's view of the proposal (module docstring).

    Parameters
    ----------
    measure : AUC
    estimate : Estimate
        The design's estimate of ``measure``.
    pool : Pool
    sampler : Sampler
        Left as it is unless an ``importance`` run whose interval comes from the oracle model
        (:attr:`~labelwise.designs.ImportanceSampler.uses_model`) and whose measure is ``measure``.
    sample : Sample
        Its labeled draws.

    Returns
    -------
    Estimate
        ``estimate`` itself, or a copy with the larger variance.
    """
    # the designs and the estimators of a sample import the measures
    from ..designs.importance import ImportanceSampler
    from ..estimators.importance import importance_moments

    if (not isinstance(sampler, ImportanceSampler) or not sampler.uses_model or measure != sampler.measure
            or not estimate.defined[0] or sample.excluded is not None):
        return estimate
    d = sample.draws
    B, N = measure.n_bins, pool.n_items
    J = measure.finite_jacobian(estimate.R)  # (1, 2B): the placements, positives' bins then negatives'
    labeled, first = np.unique(d.items, return_index=True)
    labeled_bins, q_labeled = measure._k(pool.outputs(labeled)), sampler.q[labeled]
    size, inv_q, q = _proposal_bins(measure, pool, sampler)
    unlabeled = size - np.bincount(labeled_bins, minlength=B)
    inv_q, q = unlabeled_proposal_sums(inv_q, q, unlabeled, labeled_bins, q_labeled)
    positive_share = np.divide(recalibrated_bins(measure, pool, sample)[:B], size, out=np.zeros(B), where=size > 0)
    # two labels per bin, the positive class (index 1) and every other (index 0)
    pi = np.stack([1.0 - positive_share, positive_share], axis=1)
    u = np.stack([J[0, B:], J[0, :B]])[:, :, None]
    u_labeled = measure.loss(pool.outputs(labeled), sample.labels[first]) @ J.T
    model = proposal_model_covariance(u, pi, unlabeled, inv_q, q, u_labeled, q_labeled, J @ estimate.R, d.n_draws, N)
    _, _, plugin = importance_moments(measure, sampler.losses(measure, sample), d.weight, counts=d.count)
    cov = model_interval_covariance(plugin, model, d.n_draws, estimate.level, sampler.design.variance)
    if not cov[0, 0] > estimate.cov[0, 0]:
        return estimate
    return replace(estimate, cov=cov)
