"""The design labelwise picks for a pool when asked for ``"default"``.

Binary pools get ``online-poisson`` whatever their share of positives, for
every measure but those over every score bin (below).  When
positives are rare, its rounds leave out the items whose loss the scores
call certain, nearly all of them, and gain most over uniform sampling.  When
positives are common, most items carry loss and many rounds are hedged to
uniform allocations; these are drawn by randomised systematic sampling over
the score blocks in score order, so a uniform round is a proportional
stratified sample of the score strata (implicit stratification, Cochran,
*Sampling Techniques*, 3rd ed., Wiley 1977, ch. 8;
:func:`~labelwise.designs.poisson_rounds.systematic_counts`) and does what
proportional ``stratified`` sampling does, while the adaptive rounds gain
where the scores separate the classes.  On the robustness grid's 30% and 50%
pools (``benchmarks/RESULTS.md``, "Variants of a design on chosen pools":
`implicit_f1`, `implicit_accuracy`, `implicit_precision`, `implicit_recall`)
its MSE was within sampling error of ``stratified``'s or lower on the weak
pools for all four measures, lower by a factor of three or more on the strong
ones, its intervals covering; in random order its weak-pool rounds had only
tied uniform sampling on F1, which is why ``stratified`` was the default on
such pools before.

Measures of the label counts in every score bin (ROC AUC and the ROC curve)
get ``stratified`` on every binary pool. They weigh the negatives' score
distribution as much as the positives', and no score-driven design found
a gain there that holds on every pool (``benchmarks/auc_designs.py``):
``online-poisson`` lost to uniform sampling on AUC by 1.4x to 3x on the
1:100, 1:1000 and over-confident pools, and ``importance``, which gains
3-5x on the 1:1000 pool, lost by 2x on the over-confident one.
Proportional stratified sampling was within sampling error of uniform
sampling or better on all four.

Multi-class pools whose share of items outside their most common class is
at least :data:`COMMON_POSITIVES` get ``stratified``, the others
``online-poisson`` (``benchmarks/multiclass_default.py`` measures both
designs on balanced and imbalanced 3-class pools; their rounds keep the
random order, :func:`~labelwise.designs.poisson_rounds.group_scores`).
Multi-label pools get ``importance``.

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

#: Share of a multi-class pool's items outside its most common class from which the default is ``stratified``: one
#: item in ten, between the 5% where ``online-poisson`` gains most and the 10-30% where it could lose to uniform
#: sampling (module docstring).
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
        shares.append(max(float(pool.n_items - c.max()) / pool.n_items for c in counts))  # exact at 10%
    if pool.probs is not None:
        shares.append(1.0 - float(score_prior(pool).mean(axis=0).max()))
    return max(shares, default=0.0)


def default_design(pool: Pool, measure: Measure | None = None) -> str:
    """The name of the design labelwise picks for ``pool`` and ``measure`` (module docstring).

    ``importance`` for multi-label pools (whose label-set groups the tree
    model of ``online-poisson`` serves less well, ``benchmarks/multilabel.py``);
    ``stratified`` for measures over every score bin (ROC AUC, the ROC curve)
    on binary pools and for multi-class pools with common classes besides
    the most common one (:func:`predicted_positive_share` at least
    :data:`COMMON_POSITIVES`); ``online-poisson`` otherwise, on binary pools
    at any share of positives.

    Parameters
    ----------
    pool : Pool
    measure : Measure, optional
        The measure the session estimates; without it the choice is the one
        for a measure of the predictions (F1, precision, recall, ...).
    """
    if pool.label_names:
        return "importance"
    if pool.n_classes == 2:
        return "stratified" if _over_score_bins(measure) else "online-poisson"
    if predicted_positive_share(pool) >= COMMON_POSITIVES:
        return "stratified"
    return "online-poisson"


def _over_score_bins(measure: Measure | None) -> bool:
    """Whether ``measure`` (or one of the measures it combines) counts labels per score bin (AUC, ROC curve)."""
    if measure is None:
        return False
    parts = getattr(measure, "parts", None) or [measure]
    return any(isinstance(m, ScoreBinMeasure) for m in parts)
