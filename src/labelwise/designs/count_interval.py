"""``online-poisson``'s opt-in ``variance="count"`` interval: the exceptions left unlabeled as an exact count.

The mixture interval's last case (an exception drawn, :mod:`labelwise.designs.online_poisson`) is a hindsight worst
case; ``variance="count"`` drops it: the exceptions left unlabeled can only be missed.  Their number in each block is
the oracle model's posterior predictive (Beta-binomial: the block's probability of an exception is uncertain, which
matters in the large tail blocks of a large pool), whose prior part is spread by the posterior of the scores'
recalibration (fitted to the labels each counted once); the labeled exceptions (labels that change the loss) stand,
beyond their own count, for the unlabeled ones (:func:`labelwise.estimators.missed_count_variance`,
:meth:`~labelwise.designs.group_model.GroupModel.count_spread`).  It is about as wide as the error where the
recalibrated scores fit the tail, and wider than the mixture where exceptions are common and the recalibration
uncertain (weak scores); not the default (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import numpy as np

from ..estimators import ModelCovariance, counted_exceptions, exception_shifts
from .group_model import GroupModel

__all__ = ["COUNT_BASIS", "count_terms", "label_coefficients"]

COUNT_BASIS = ("design-based for the labeled items; the positives the labels may have missed among the items not "
               "labeled yet are counted as the oracle model predicts them block by block (the systems' scores "
               "recalibrated on the labels, with the recalibration's and each block's uncertainty), so the interval "
               "assumes a monotone recalibration of the scores does not understate the unlabeled tail")


def label_coefficients(weights: np.ndarray, rounds: np.ndarray, inclusion: np.ndarray) -> np.ndarray:
    """``c_n = w_rho / b_rho,n + sum_{r > rho} w_r``: the coefficient of a labeled item's loss in ``N R-hat``.

    Parameters
    ----------
    weights : ndarray, shape (rounds,)
        The rounds' weights ``w_r``.
    rounds : ndarray of int, shape (n,)
        ``rho``, the round that labeled each item.
    inclusion : ndarray, shape (n,)
        Each item's inclusion probability in its round.
    """
    return weights[rounds] / inclusion + (1.0 - np.cumsum(weights))[rounds]


def count_terms(gm: GroupModel, rep_loss: np.ndarray, J: np.ndarray, unlabeled: ModelCovariance,
                beta: float, labeled_groups: np.ndarray, labels: np.ndarray,
                coefficients: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], float]:
    """The count's spread (:meth:`~labelwise.designs.group_model.GroupModel.count_spread`) and how many of the
    exceptions left the estimate already counts (``offset`` of :func:`~labelwise.estimators.missed_count_variance`).

    Parameters
    ----------
    gm : GroupModel
        The oracle model.
    rep_loss : ndarray (C, G, d)
        A group's loss for each label.
    J : ndarray (m, d)
        ``Dg(R-hat)``.
    unlabeled : ModelCovariance
        The unlabeled items' part (:func:`~labelwise.designs.unlabeled_covariance.unlabeled_covariance`).
    beta : float
        The difference estimator's power (0 for Horvitz-Thompson).
    labeled_groups, labels : ndarray of int, shape (n,)
        Group and label of each labeled item.
    coefficients : ndarray, shape (n,)
        Each labeled item's coefficient in ``N R-hat`` (:func:`label_coefficients`).
    """
    u = np.einsum("cgd,md->cgm", rep_loss, J)
    _, shift, expected = exception_shifts(u, gm.posterior(interval=True), gm.groups.unlabeled, gm.pool.n_items)
    moves = np.any(shift != 0, axis=2)  # (G, C): labels that change the loss from the group's likeliest
    found = counted_exceptions(moves[labeled_groups, labels], coefficients)
    return gm.count_spread(expected.sum(axis=1)), beta * unlabeled.exceptions + (1.0 - beta) * found
