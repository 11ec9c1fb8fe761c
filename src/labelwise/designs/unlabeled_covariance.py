"""The part of ``online-poisson``'s covariance that the items not labeled yet add, under the oracle model.

Split out of :mod:`labelwise.designs.online_poisson` (whose module docstring
explains the three intervals: ``mixture``, ``count`` and the full ``model``
variance); the DuckDB/Spark engine's online-poisson shares these functions.
"""

from __future__ import annotations

import numpy as np

from ..estimators import (
    ModelCovariance,
    exception_jump,
    exception_shifts,
    larger_variance,
    missed_count_variance,
    missed_square,
    mixture_variance,
)

__all__ = ["unlabeled_covariance", "with_unlabeled"]


def unlabeled_covariance(u: np.ndarray, pi: np.ndarray, unlabeled: np.ndarray, coef: np.ndarray,
                         b_seen: np.ndarray, n_items: int, predicted: float = 0.0,
                         drift: np.ndarray | float = 0.0) -> ModelCovariance:
    """The unlabeled items' part of the covariance of the rounds' estimate under an oracle model.

    Parameters
    ----------
    u : ndarray (C, G, m)
        ``Dg(R) l`` of a group's items for each label, minus the estimator's prediction (0 for Horvitz-Thompson).
    pi : ndarray (G, C)
        Posterior label distribution of a group's unlabeled items.
    unlabeled : ndarray (G,)
        Unlabeled items per group.
    coef : ndarray (rounds, G)
        ``w_r^2 (1 / b_rg - 1)`` of every round.
    b_seen : ndarray (G,)
        Each group's inclusion probabilities summed over the rounds.
    n_items : int
    predicted : float
        The difference estimator's power (:func:`~labelwise.estimators.exception_terms`).
    drift : ndarray (m, m) or float
        The rounds' predictions' distance from today's (0 for Horvitz-Thompson).

    Returns
    -------
    ModelCovariance
        ``full`` takes ``u`` at the posterior, ``modal`` at each group's
        most likely label; ``hits`` counts the exceptions the rounds would
        have sampled.
    """
    u_mode, shift, expected = exception_shifts(u, pi, unlabeled, n_items)
    exceptions = expected.sum(axis=1)
    scale = coef.sum(axis=0) * unlabeled / n_items**2
    full = np.einsum("g,gc,cgi,cgj->ij", scale, pi, u, u) + drift
    modal = np.einsum("g,gi,gj->ij", scale, u_mode, u_mode) + drift
    return ModelCovariance(full, modal, missed_square(shift, expected, predicted), float(exceptions.sum()),
                           float(exceptions @ np.minimum(b_seen, 1)), exception_jump(shift, expected))


def with_unlabeled(cov: np.ndarray, plugin: np.ndarray, unlabeled: ModelCovariance, full: bool,
                   level: float, spread: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                   offset: float = 0.0) -> np.ndarray:
    """The labeled items' covariance ``cov`` plus the unlabeled items' (module docstring), never below ``plugin``.

    ``full``: the unlabeled items at their full model variance.  Else, with
    ``spread`` (the exceptions' expected numbers per block under each point
    of the recalibration's posterior, the points' probabilities and the
    blocks' overdispersion,
    :meth:`~labelwise.designs.group_model.GroupModel.count_spread`), the
    exceptions left unlabeled as an exact count
    (:func:`~labelwise.estimators.missed_count_variance`, ``offset``: how
    many of them the estimate already counts); without it, the mixture of the model's
    likely cases (:func:`~labelwise.estimators.mixture_variance`).
    """
    if full:
        cov = cov + unlabeled.full
    else:
        usual = cov + unlabeled.modal
        if spread is None:
            target = mixture_variance(np.diag(usual), np.diag(cov + unlabeled.full), unlabeled, level)
        else:
            target = missed_count_variance(np.diag(usual), unlabeled.jump, level, *spread, offset=offset)
        cov = larger_variance(usual, np.diag(target))
    return larger_variance(cov, plugin)
