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
``online-poisson``; multi-label pools get ``importance``.

The choice reads only the systems' outputs, never labels, so it is fixed
before the first label.
"""

from __future__ import annotations

import numpy as np

from ..oracle import score_prior
from ..pool import Pool

__all__ = ["COMMON_POSITIVES", "default_design", "predicted_positive_share"]

#: Predicted positive share from which the default is ``stratified``: one item in ten, between the 5% where
#: ``online-poisson`` gains most and the 10-30% where it can lose to uniform sampling (module docstring).
COMMON_POSITIVES = 0.1


def predicted_positive_share(pool: Pool) -> float:
    """The share of a binary pool's items its systems call positive.

    The larger of the share predicted positive (by the system predicting
    most positives) and the mean probability of a positive (averaged over the
    systems), so that neither under-confident probabilities nor a system that
    predicts few positives hide common positives.  0 for a pool with neither
    predictions nor probabilities.

    Parameters
    ----------
    pool : Pool
        A binary pool.

    Returns
    -------
    float
    """
    shares = []
    if pool.preds is not None:
        shares.append(float(np.max(np.mean(pool.preds != 0, axis=0))))
    if pool.probs is not None:
        shares.append(float(np.mean(score_prior(pool)[:, 1])))
    return max(shares, default=0.0)


def default_design(pool: Pool) -> str:
    """The name of the design labelwise picks for ``pool`` (module docstring).

    ``importance`` for multi-label pools (whose label-set groups the tree
    model of ``online-poisson`` serves less well, ``benchmarks/multilabel.py``);
    ``stratified`` for binary pools with common positives
    (:func:`predicted_positive_share` at least :data:`COMMON_POSITIVES`);
    ``online-poisson`` otherwise.
    """
    if pool.label_names:
        return "importance"
    if pool.n_classes == 2 and predicted_positive_share(pool) >= COMMON_POSITIVES:
        return "stratified"
    return "online-poisson"
