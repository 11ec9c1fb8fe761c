"""The design labelwise picks for a pool when asked for ``"default"``.

An adaptive design (``online-poisson``) gains by leaving out the items whose
loss the scores call certain.  When positives are rare these are nearly all
items, and the gain over uniform sampling is large.  When positives are common
most items carry loss, the possible gain is small, and an oracle model misled
by over-confident probabilities in the first rounds can lose to uniform
sampling (``benchmarks/robustness.py``, ``benchmarks/default_choice.py``).
Proportional stratified sampling on score strata, without replacement, cannot
lose that way: its variance is uniform sampling's minus the variance between
the strata (Cochran, *Sampling Techniques*, 3rd ed., Wiley 1977, sec. 5.6),
whatever the scores' calibration, since the strata depend on the scores'
ranks only.  So binary pools whose systems call at least
:data:`COMMON_POSITIVES` of the items positive get ``stratified``, the others
``online-poisson``; multi-class pools likewise by the share of items outside
their most common class (``benchmarks/multiclass_default.py`` measures both designs on
balanced and imbalanced 3-class pools); multi-label pools get ``importance``.

Measures of the label counts in every score bin (ROC AUC and the ROC curve)
get ``stratified`` on every binary pool. They weigh the negatives' score
distribution as much as the positives', and no score-driven design found
a gain there that holds on every pool (``benchmarks/auc_designs.py``):
``online-poisson`` lost to uniform sampling on AUC by 1.4x to 3x on the
1:100, 1:1000 and over-confident pools, and ``importance``, which gains
3-5x on the 1:1000 pool, lost by 2x on the over-confident one.
Proportional stratified sampling was within sampling error of uniform
sampling or better on all four.

The choice reads only the systems' outputs and the measure, never labels,
so it is fixed before the first label.
"""

from __future__ import annotations

import numpy as np

from ..measures import Measure
from ..measures.auc import ScoreBinMeasure
from ..oracle import score_prior
from ..pool import Pool

__all__ = ["COMMON_POSITIVES", "default_design", "predicted_positive_share"]

#: Predicted positive share from which the default is ``stratified``: one item in ten, between the 5% where
#: ``online-poisson`` gains most and the 10-30% where it can lose to uniform sampling (module docstring).
COMMON_POSITIVES = 0.1


def predicted_positive_share(pool: Pool) -> float:
    """The share of a pool's items its systems call positive (binary) or outside its most common class.

    The larger of the share predicted positive (by the system predicting
    most positives) and the mean probability of a positive (averaged over the
    systems), so that neither under-confident probabilities nor a system that
    predicts few positives hide common positives.  On a multi-class pool a
    positive is any class but the most common one (among a system's
    predictions, or of the mean probabilities).  0 for a pool with neither
    predictions nor probabilities.

    Parameters
    ----------
    pool : Pool

    Returns
    -------
    float
    """
    shares = []
    if pool.n_classes == 2:
        if pool.preds is not None:
            shares.append(float(np.max(np.mean(pool.preds != 0, axis=0))))
        if pool.probs is not None:
            shares.append(float(np.mean(score_prior(pool)[:, 1])))
        return max(shares, default=0.0)
    if pool.preds is not None:
        counts = [np.bincount(pool.preds[:, s], minlength=pool.n_classes) for s in range(pool.preds.shape[1])]
        shares.append(max(1.0 - float(c.max()) / pool.n_items for c in counts))
    if pool.probs is not None:
        shares.append(1.0 - float(score_prior(pool).mean(axis=0).max()))
    return max(shares, default=0.0)


def default_design(pool: Pool, measure: Measure | None = None) -> str:
    """The name of the design labelwise picks for ``pool`` and ``measure`` (module docstring).

    ``importance`` for multi-label pools (whose label-set groups the tree
    model of ``online-poisson`` serves less well, ``benchmarks/multilabel.py``);
    ``stratified`` for binary pools with common positives and multi-class
    pools with common classes besides the most common one
    (:func:`predicted_positive_share` at least :data:`COMMON_POSITIVES`) and
    for measures over every score bin (ROC AUC, the ROC curve) on any binary
    pool; ``online-poisson`` otherwise.

    Parameters
    ----------
    pool : Pool
    measure : Measure, optional
        The measure the session estimates; without it the choice is the one
        for a measure of the predictions (F1, precision, recall, ...).
    """
    if pool.label_names:
        return "importance"
    if predicted_positive_share(pool) >= COMMON_POSITIVES or (pool.n_classes == 2 and _over_score_bins(measure)):
        return "stratified"
    return "online-poisson"


def _over_score_bins(measure: Measure | None) -> bool:
    """Whether ``measure`` (or one of the measures it combines) counts labels per score bin (AUC, ROC curve)."""
    if measure is None:
        return False
    parts = getattr(measure, "parts", None) or [measure]
    return any(isinstance(m, ScoreBinMeasure) for m in parts)
