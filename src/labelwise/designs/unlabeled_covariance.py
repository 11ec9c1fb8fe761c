"""The part of ``online-poisson``'s covariance that the items not labeled yet add, under the oracle model.

Split out of :mod:`labelwise.designs.online_poisson` (whose module docstring
explains the intervals: ``mixture``, ``hindsight``, ``count`` and the full
``model`` variance); the DuckDB/Spark engine's online-poisson shares these functions.
"""

from __future__ import annotations

from typing import NamedTuple

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
from ..estimators.uncertain_tail import uncertain_missed_square
from ..oracle.calibration import Platt

__all__ = ["LeafModel", "missed_in_hindsight", "unlabeled_covariance", "with_unlabeled"]


class LeafModel(NamedTuple):
    """The flat Dirichlet model of a binary pool's labels: a Beta posterior of each leaf's rate of positives.

    Attributes
    ----------
    positive, negative : ndarray (L,)
        Each leaf's Beta parameters: prior strength times the (recalibrated) prior mean, plus the labels.
    platt : Platt or None
        The recalibration of the scores behind the prior means (``None``: none, or no labels yet).
    rate_gradient : ndarray (2, L) or None
        The derivative of each leaf's posterior mean rate of positives in the Platt slope and intercept.
    """

    positive: np.ndarray
    negative: np.ndarray
    platt: Platt | None = None
    rate_gradient: np.ndarray | None = None

    def posterior(self) -> np.ndarray:
        """Each leaf's posterior label distribution, ``(L, 2)``."""
        r1 = self.positive / (self.positive + self.negative)
        return np.stack([1.0 - r1, r1], axis=1)


def missed_in_hindsight(unlabeled: ModelCovariance, u: np.ndarray, pi: np.ndarray, left: np.ndarray,
                        n_items: int, leaf: np.ndarray, model: LeafModel) -> ModelCovariance:
    """``unlabeled`` with the mixture's cases read in hindsight: no exception left, or some missed.

    Once the labels are in, no unlabeled item was drawn, so the mixture's
    third case (an exception drawn at its tiny inclusion probability,
    :func:`~labelwise.estimators.mixture_variance`) has not happened: an
    exception that was drawn is a labeled item, in the design-based part at
    its weight.  The missed exceptions' mean square and the chance that none
    is left take each leaf's rate as uncertain (its Beta posterior and the
    recalibration's Laplace covariance,
    :func:`~labelwise.estimators.uncertain_tail.uncertain_missed_square`).

    Parameters
    ----------
    unlabeled : ModelCovariance
        :func:`unlabeled_covariance` of the blocks.
    u : ndarray (2, G, m)
        ``Dg(R) l`` of a block's items for each label.
    pi : ndarray (G, 2)
        The model's label distribution of each block (its leaf's).
    left : ndarray (G,)
        Unlabeled items per block.
    n_items : int
    leaf : ndarray of int (G,)
        Each block's leaf.
    model : LeafModel
    """
    _, shift, _ = exception_shifts(u, pi, left, n_items)  # (G, 2, m)
    G = pi.shape[0]
    mode = np.argmax(pi, axis=1)
    shift = shift[np.arange(G), 1 - mode]  # an exception's (the other label's) shift, (G, m)
    positive_mode = np.zeros(model.positive.size, dtype=bool)
    positive_mode[leaf] = mode == 1  # a leaf's blocks share its mode
    # the rate of exceptions: of negatives where positives are likelier, else of positives
    alpha = np.where(positive_mode, model.negative, model.positive)
    beta = np.where(positive_mode, model.positive, model.negative)
    gradient = None if model.rate_gradient is None else np.where(positive_mode, -1.0, 1.0) * model.rate_gradient
    miss, none_left = uncertain_missed_square(shift, left, leaf, alpha, beta, gradient,
                                              None if model.platt is None else model.platt.cov)
    return unlabeled._replace(miss=miss, exceptions=none_left, hits=0.0)


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
