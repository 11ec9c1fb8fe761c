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
than the design's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..estimators.model_covariance import (
    model_interval_covariance,
    proposal_model_covariance,
)
from .auc_variance import recalibrated_bins

if TYPE_CHECKING:
    from ..designs import Sampler
    from ..draws import Sample
    from ..estimators import Estimate
    from ..pool import Pool
    from .auc import AUC

__all__ = ["with_importance_model_variance"]


def with_importance_model_variance(measure: AUC, estimate: Estimate, pool: Pool, sampler: Sampler,
                                   sample: Sample) -> Estimate:
    """``estimate`` with its variance raised to the recalibrated model's view of the proposal (module docstring).

    Left as it is unless ``sampler`` is an ``importance`` run whose interval comes from the oracle model
    (:attr:`~labelwise.designs.ImportanceSampler.uses_model`) and ``measure`` is its measure.
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
    bins = measure._k(pool.outputs())
    unlabeled_bins = np.delete(bins, labeled)
    q_unlabeled = np.delete(sampler.q, labeled)
    size = np.bincount(bins, minlength=B).astype(float)
    positive_share = np.divide(recalibrated_bins(measure, pool, sample)[:B], size, out=np.zeros(B), where=size > 0)
    # two labels per bin, the positive class (index 1) and every other (index 0)
    pi = np.stack([1.0 - positive_share, positive_share], axis=1)
    u = np.stack([J[0, B:], J[0, :B]])[:, :, None]
    u_labeled = measure.loss(pool.outputs(labeled), sample.labels[first]) @ J.T
    model = proposal_model_covariance(
        u, pi, np.bincount(unlabeled_bins, minlength=B).astype(float),
        np.bincount(unlabeled_bins, 1.0 / q_unlabeled, B), np.bincount(unlabeled_bins, q_unlabeled, B),
        u_labeled, sampler.q[labeled], J @ estimate.R, d.n_draws, N)
    _, _, plugin = importance_moments(measure, sampler.losses(measure, sample), d.weight, counts=d.count)
    cov = model_interval_covariance(plugin, model, d.n_draws, estimate.level, sampler.design.variance)
    if not cov[0, 0] > estimate.cov[0, 0]:
        return estimate
    return replace(estimate, cov=cov)
