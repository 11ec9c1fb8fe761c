"""What the exceptions left unlabeled do to an estimate when the model is unsure of their rate.

An *exception* (:class:`~labelwise.estimators.ModelCovariance`) is an
unlabeled item whose label is not its leaf's most likely one and changes
the loss (a positive in a tail of negatives).  Once the labels are in, every
unlabeled item is known not to have been sampled, so an exception left
among them can only be *missed*: it shifts the estimate by ``shift_b`` (its
block's), never by its design weight.  Exceptions that were sampled are
labeled items and sit in the design-based part of the variance at their
weights.  So, given the sample, the unlabeled items add the missed sum

    S = sum_b shift_b K_b,

``K_b`` the exceptions left in block ``b``.  Under the flat Dirichlet model
(Marchant & Rubinstein, "Needle in a Haystack", KDD 2021, sec. 4, depth 1)
the blocks of leaf ``l`` share one rate of exceptions ``r_l ~ Beta(alpha_l,
beta_l)`` (its posterior after the leaf's labels) and, given it, ``K_b ~
Binomial(U_b, r_l)`` independently; so, exactly,

    E S   = sum_l E[r_l] s1_l,
    Var S = sum_l ( E[r_l (1 - r_l)] s2_l + Var[r_l] s1_l^2 ),

with ``s1_l = sum_{b in l} U_b shift_b`` and ``s2_l = sum_{b in l} U_b
shift_b^2`` (the second term is the Beta-binomial's overdispersion: large
tail leaves hold many items against few labels), and the probability that
no exception is left is ``P(K = 0) = prod_l E[(1 - r_l)^{U_l}] = prod_l
B(alpha_l, beta_l + U_l) / B(alpha_l, beta_l)``.

The leaves' prior means come from the scores recalibrated on the labels (a
Platt map): uncertain too.  Over the map's posterior the leaves' mean rates
vary together, and ``E S`` with them: its variance over that posterior,
taken over the leaves whose mean the error holds, is added to the mean
square (the rates' mean is already the posterior's; the leaves' Beta
parameters carry it).  The recalibration fitted on few labels is itself
uncertain, and a tail holding more positives than its point estimate
expects is the case the interval must cover.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import betaln

__all__ = ["LeafMissed", "leaf_missed_moments", "per_leaf", "uncertain_missed_square"]


class LeafMissed(NamedTuple):
    """What each leaf's exceptions left can miss (module docstring), computed once per estimate.

    Attributes
    ----------
    mean, variance : ndarray (L, m)
        ``E S_l = E[r_l] s1_l`` and ``Var S_l = E[r_l (1 - r_l)] s2_l + Var[r_l] s1_l^2``.
    none_left : ndarray (L,)
        ``-log P(K_l = 0)``: ``-log B(alpha_l, beta_l + U_l) / B(alpha_l, beta_l)``.
    recalibration : ndarray (L, k, m)
        How each leaf's ``E S_l`` varies over the recalibration's posterior: its deviation from its mean at
        ``k`` points of the posterior, times the root of each point's weight, so that the variance of the
        summed means of any set of leaves is the squared norm of their rows' sum (``k = 0`` without a
        recalibration).
    """

    mean: np.ndarray
    variance: np.ndarray
    none_left: np.ndarray
    recalibration: np.ndarray

    def recalibration_spread(self, leaves: np.ndarray) -> np.ndarray:
        """The variance over the recalibration's posterior of the summed ``E S_l`` over ``leaves`` (bool,
        ``(L,)`` or per component ``(L, m)``), ``(m,)``."""
        take = np.broadcast_to(leaves[:, None] if leaves.ndim == 1 else leaves, self.mean.shape)
        return np.sum(np.einsum("ljm,lm->jm", self.recalibration, take.astype(float)) ** 2, axis=0)


def leaf_missed_moments(shift: np.ndarray, unlabeled: np.ndarray, leaf: np.ndarray, alpha: np.ndarray,
                        beta: np.ndarray, rate_spread: np.ndarray | None = None) -> LeafMissed:
    """Each leaf's missed sum ``S_l = sum_{b in l} shift_b K_b``: its moments and the chance it is empty.

    Parameters
    ----------
    shift : ndarray (G, m)
        How far one exception left in each block shifts the estimate.
    unlabeled : ndarray (G,)
        Unlabeled items per block whose exception moves the estimate (0 where it changes no loss).
    leaf : ndarray of int (G,)
        Each block's leaf.
    alpha, beta : ndarray (L,)
        Each leaf's Beta posterior of its rate of exceptions (pseudo-counts of exceptions and of the rest).
    rate_spread : ndarray (k, L), optional
        How each leaf's mean rate of exceptions ``E[r_l]`` varies with the model's uncertain parameters:
        ``Var(sum_l c_l E[r_l]) = sum_k (sum_l c_l rate_spread[k, l])^2`` for any coefficients ``c`` (its
        deviations at the points of a quadrature of their posterior, times the root of each point's weight).

    Returns
    -------
    LeafMissed
    """
    L = alpha.size
    s1, s2 = per_leaf(leaf, unlabeled[:, None] * shift, L), per_leaf(leaf, unlabeled[:, None] * shift**2, L)
    mean, var, spread = _rate_moments(alpha, beta)
    recalibration = np.zeros((L, 0, shift.shape[1]))
    if rate_spread is not None:  # E S_l = E[r_l] s1_l varies by rate_spread[:, l] s1_l
        recalibration = np.einsum("kl,lm->lkm", rate_spread, s1)
    left = np.bincount(leaf, weights=unlabeled, minlength=L)
    live = (left > 0) & (alpha > 0)
    none_left = np.zeros(L)
    none_left[live] = betaln(alpha[live], beta[live]) - betaln(alpha[live], beta[live] + left[live])
    return LeafMissed(mean[:, None] * s1, spread[:, None] * s2 + var[:, None] * s1**2, none_left, recalibration)


def uncertain_missed_square(moments: LeafMissed, missed: np.ndarray | None = None,
                            offset: np.ndarray | float = 0.0,
                            recalibrated: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Mean square of the missed sum ``S`` over some leaves and ``-log P(none of them has one left)``.

    Parameters
    ----------
    moments : LeafMissed
        :func:`leaf_missed_moments`.
    missed : ndarray of bool (L,), optional
        The leaves whose exceptions left can only be missed (default all).
    offset : ndarray (m,) or float
        A fixed error beside ``-S``: the other leaves' bias given the labels
        (:func:`~labelwise.designs.unlabeled_covariance.drawn_variance`).  The
        cross term ``-2 offset E S`` is included where it is positive (a cancellation between the two is not
        credited), the square of ``offset`` is not.
    recalibrated : ndarray of bool (L,) or (L, m), optional
        The leaves whose mean the error holds, per component or for all (default ``missed``): the recalibration spreads their summed
        ``E S_l``; a leaf read with mean 0 (the design's reading of a drawn exception) has none to spread.

    Returns
    -------
    miss : ndarray (m,)
        ``E[S^2] + max(-2 offset E S, 0)`` per component, with the variance of the ``recalibrated`` leaves'
        summed ``E S_l`` over the recalibration's posterior.
    none_left : float
        ``-log P(K = 0)``: the expected count of a Poisson count as likely to be 0.
    """
    missed = np.ones(moments.none_left.size, dtype=bool) if missed is None else missed
    mean = moments.mean[missed].sum(axis=0)
    spread = moments.recalibration_spread(missed if recalibrated is None else recalibrated)
    miss = moments.variance[missed].sum(axis=0) + mean**2 + np.maximum(-2.0 * offset * mean, 0.0) + spread
    return miss, float(moments.none_left[missed].sum())


def per_leaf(leaf: np.ndarray, values: np.ndarray, n_leaves: int) -> np.ndarray:
    """Sum of the blocks' ``values`` ``(G, m)`` within each leaf, ``(L, m)``."""
    return np.stack([np.bincount(leaf, weights=column, minlength=n_leaves) for column in values.T], axis=1)


def _rate_moments(alpha: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``E[r]``, ``Var[r]`` and ``E[r (1 - r)]`` of each leaf's Beta rate."""
    total = alpha + beta
    # a rate whose Beta has no mass away from 0 (a prior mean of exactly 0 and no exception labeled) is surely 0
    mean = np.divide(alpha, total, out=np.zeros_like(total), where=total > 0)
    var = mean * (1.0 - mean) / (total + 1.0)
    return mean, var, mean * (1.0 - mean) - var
