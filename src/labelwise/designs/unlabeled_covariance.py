"""The part of ``online-poisson``'s covariance that the items not labeled yet add, under the oracle model.

Split out of :mod:`labelwise.designs.online_poisson` (whose module docstring
explains the intervals: ``mixture``, ``hindsight``, ``count`` and the full
``model`` variance); the DuckDB/Spark engine's online-poisson shares these functions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..estimators import (
    JumpBound,
    MissedErrors,
    ModelCovariance,
    exception_jump,
    exception_shifts,
    held_second_moment,
    larger_variance,
    missed_count_variance,
    missed_square,
    mixture_variance,
)
from ..estimators.uncertain_tail import (
    LeafMissed,
    leaf_missed_moments,
    per_leaf,
    uncertain_missed_square,
)

__all__ = ["DrawnExceptions", "DrawnReading", "LeafModel", "drawn_variance", "missed_in_hindsight", "unlabeled_covariance",
           "with_unlabeled"]


class LeafModel(NamedTuple):
    """The flat Dirichlet model of a binary pool's labels: a Beta posterior of each leaf's rate of positives.

    Attributes
    ----------
    positive, negative : ndarray (L,)
        Each leaf's Beta parameters: prior strength times the (recalibrated) prior mean, plus the labels.
    rate_spread : ndarray (k, L) or None
        How each leaf's posterior mean rate of positives varies over the recalibration's posterior: at ``k``
        points of it, its deviation from the mean times the square root of the point's weight, so that
        ``Var(sum_l c_l E[r_l]) = sum_k (sum_l c_l rate_spread[k, l])^2`` for any coefficients ``c``.
    point_rates : ndarray (k, L) or None
        Each leaf's posterior mean rate of positives under each of ``k`` points of the recalibration's
        posterior, and ``point_weights`` (k,) their probabilities: where the mixture interval reads the count
        of exceptions left over that posterior (:func:`~labelwise.estimators.missed_errors`).
    """

    positive: np.ndarray
    negative: np.ndarray
    rate_spread: np.ndarray | None = None
    point_rates: np.ndarray | None = None
    point_weights: np.ndarray | None = None

    def posterior(self) -> np.ndarray:
        """Each leaf's posterior label distribution, ``(L, 2)``."""
        r1 = self.positive / (self.positive + self.negative)
        return np.stack([1.0 - r1, r1], axis=1)


class DrawnExceptions(NamedTuple):
    """What the rounds drew, for reading the mixture's third case leaf by leaf (:func:`drawn_variance`).

    Attributes
    ----------
    blocks, labels : ndarray of int (n,)
        Block and label of each labeled item.
    weights : ndarray (n,)
        Each labeled item's coefficient ``c_n`` in ``N R-hat``
        (:func:`~labelwise.designs.count_interval.label_coefficients`).
    coefficient : ndarray (G,)
        ``sum_r w_r^2 (1 / b_rg - 1)``: an unlabeled item's coefficient in the design variance, per block.
    survival : ndarray (G,)
        ``prod_r (1 - b_rg)``: the probability that an item of the block was drawn by no round.
    """

    blocks: np.ndarray
    labels: np.ndarray
    weights: np.ndarray
    coefficient: np.ndarray
    survival: np.ndarray


class DrawnReading(NamedTuple):
    """The leaves where the rounds drew an exception and how :func:`drawn_variance` reads their error.

    Attributes
    ----------
    hit : ndarray of bool (L,)
        Leaves where the rounds drew an exception.
    by_model : ndarray of bool (L, m)
        The hit leaves read by the model given the labels, per component (their error's mean depends on the
        model); the others are read by the design, with mean 0.
    variance : ndarray (m,)
        The hit leaves' total error's second moment.
    bias : ndarray (m,)
        Its mean ``B``: the sum of ``o_l - E S_l`` over the leaves the model reads.
    """

    hit: np.ndarray
    by_model: np.ndarray
    variance: np.ndarray
    bias: np.ndarray


def drawn_variance(shift: np.ndarray, expected: np.ndarray, mode: np.ndarray, leaf: np.ndarray, moving: np.ndarray,
                   drawn: DrawnExceptions, moments: LeafMissed) -> DrawnReading:
    """The leaves where the rounds drew an exception, and the variance their exceptions add given that draw.

    The mixture (:func:`~labelwise.estimators.mixture_variance`) weighs
    the case "an exception was drawn" by its probability under the model;
    once the labels are in, whether it happened in leaf ``l`` is known: a
    labeled item whose label is not its block's most likely one.  Where
    none was drawn, the leaf's exceptions left can only be missed
    (hindsight).  Where one was, the leaf's error is ``o_l - S_l``: the
    labeled exceptions count ``o_l = sum (c_n - 1) shift`` beyond themselves
    for the missed sum ``S_l``.  Each hit leaf's error is read the way that
    gives it the larger second moment:

    * the design's, given a draw: the exceptions left are a Poisson
      thinning of those the block held before the rounds, ``E[K_g] / s_g``
      of them (``s_g`` its :attr:`~DrawnExceptions.survival`), and one is
      drawn in the leaf with probability ``P_l = 1 - exp(-sum_{g in l}
      E[K_g] (1 - s_g) / s_g)``.  Each exception has the design variance
      ``c_g shift_g^2`` (``c_g`` the block's
      :attr:`~DrawnExceptions.coefficient`); the drawn ones' terms are
      already in the labeled items' part, so the exceptions left add ``D_l
      = sum_{g in l} c_g shift_g^2 E[K_g]``, read given a draw as ``D_l /
      P_l``: the rest of the leaf's design variance where exceptions are
      drawn all the time, one drawn exception's squared jump ``(shift /
      b)^2`` where they are rare;
    * the model's, given the labels: mean ``o_l - E S_l`` (the ``o_l`` are
      fixed numbers then) and variance ``Var S_l``, exact for a known number
      drawn.

    The design's reading has mean 0; the leaves' errors are independent, so
    their total's second moment is the sum of the variances plus the square
    of the summed means ``B``: the model-read leaves' biases add before they
    are squared, and the missed sum ``S`` of the leaves without a draw adds
    the cross term ``-2 B E S``
    (:func:`~labelwise.estimators.uncertain_tail.uncertain_missed_square`).
    Both cross terms count only where they widen the interval: reading the
    hit leaves by the design (mean 0) is the other reading, and the model's
    means are not trusted to cancel (credited, the cancellation under-covers
    where positives are common).

    Parameters
    ----------
    shift : ndarray (G, m)
        How far one exception left in each block shifts the estimate.
    expected : ndarray (G,)
        The model's expected exceptions left in each block.
    mode : ndarray of int (G,)
        Each block's most likely label.
    leaf : ndarray of int (G,)
        Each block's leaf.
    moving : ndarray of bool (G,)
        Blocks whose exception changes a loss.
    drawn : DrawnExceptions
    moments : LeafMissed
        Each leaf's missed sum (:func:`~labelwise.estimators.uncertain_tail.leaf_missed_moments`).

    Returns
    -------
    DrawnReading
    """
    L = moments.mean.shape[0]
    exception = (drawn.labels == 1 - mode[drawn.blocks]) & moving[drawn.blocks]
    at = leaf[drawn.blocks]
    hit = np.bincount(at, weights=exception, minlength=L) > 0
    before = np.divide(expected, drawn.survival, out=np.zeros_like(expected), where=drawn.survival > 0)
    p_hit = -np.expm1(-np.bincount(leaf, weights=before * (1.0 - drawn.survival), minlength=L))
    design = per_leaf(leaf, (drawn.coefficient * expected)[:, None] * shift**2, L)  # D_l, (L, m)
    given_draw = np.divide(design, p_hit[:, None], out=np.zeros_like(design), where=p_hit[:, None] > 0)
    beyond = np.where(exception, drawn.weights - 1.0, 0.0)
    counted = per_leaf(at, beyond[:, None] * shift[drawn.blocks], L)  # o_l, (L, m)
    given_labels = moments.variance + (counted - moments.mean) ** 2
    # each model-read leaf's mean, (L, m): 0 where the design reads it
    by_model = hit[:, None] & (given_labels >= given_draw)  # (L, m)
    means = np.where(by_model, counted - moments.mean, 0.0)
    bias = means.sum(axis=0)
    second = np.maximum(given_draw, given_labels)[hit].sum(axis=0)
    return DrawnReading(hit, by_model, second + np.maximum(bias**2 - (means**2).sum(axis=0), 0.0), bias)


def missed_in_hindsight(unlabeled: ModelCovariance, u: np.ndarray, pi: np.ndarray, left: np.ndarray,
                        n_items: int, leaf: np.ndarray, model: LeafModel,
                        drawn: DrawnExceptions | None = None) -> ModelCovariance:
    """``unlabeled`` with the mixture's cases read in hindsight: no exception left, or some missed.

    Once the labels are in, no unlabeled item was drawn, so the mixture's
    third case (an exception drawn at its tiny inclusion probability,
    :func:`~labelwise.estimators.mixture_variance`) has not happened: an
    exception that was drawn is a labeled item, in the design-based part at
    its weight.  The missed exceptions' mean square and the chance that none
    is left take each leaf's rate as uncertain (its Beta posterior and its
    spread over the recalibration's posterior, :attr:`LeafModel.rate_spread`;
    :func:`~labelwise.estimators.uncertain_tail.leaf_missed_moments`).

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
    drawn : DrawnExceptions, optional
        ``variance="conditional"``: the labels and the rounds' coefficients, to read the mixture's third case leaf
        by leaf on what the rounds drew (:func:`drawn_variance`); without it every leaf is read as if no
        exception had been drawn there (``variance="hindsight"``).
    """
    _, shift, expected = exception_shifts(u, pi, left, n_items)  # (G, 2, m), (G, 2)
    G = pi.shape[0]
    mode = np.argmax(pi, axis=1)
    exception = 1 - mode  # an exception's label: the other one
    shift, expected = shift[np.arange(G), exception], expected[np.arange(G), exception]  # (G, m), (G,)
    moving = np.any(shift != 0, axis=1)
    positive_mode = np.zeros(model.positive.size, dtype=bool)
    positive_mode[leaf] = mode == 1  # a leaf's blocks share its mode
    # the rate of exceptions: of negatives where positives are likelier, else of positives
    alpha = np.where(positive_mode, model.negative, model.positive)
    beta = np.where(positive_mode, model.positive, model.negative)
    spread = None if model.rate_spread is None else np.where(positive_mode, -1.0, 1.0) * model.rate_spread
    moments = leaf_missed_moments(shift, left * moving, leaf, alpha, beta, spread)
    if drawn is None:
        miss, none_left = uncertain_missed_square(moments)
    else:  # leaves where an exception was drawn: their error given the draw; the others' can only be missed
        reading = drawn_variance(shift, expected, mode, leaf, moving, drawn, moments)
        # the recalibration moves the means of the missed and the model-read leaves, not the design-read ones'
        miss, none_left = uncertain_missed_square(moments, ~reading.hit, reading.bias,
                                                  ~reading.hit[:, None] | reading.by_model)
        unlabeled = unlabeled._replace(modal=unlabeled.modal + np.diag(reading.variance))
    return unlabeled._replace(miss=miss, exceptions=none_left, hits=0.0)


def unlabeled_covariance(u: np.ndarray, pi: np.ndarray, unlabeled: np.ndarray, coef: np.ndarray,
                         b_seen: np.ndarray, n_items: int, bound: JumpBound, predicted: float = 0.0,
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
    bound : JumpBound
        Each group's inclusion probabilities ``(G, rounds)``, the rounds' weights and the measure's range: each
        round's term is held so that a draw moves the estimate by at most that range, as the labeled items' are
        (:func:`~labelwise.estimators.held_second_moment`).
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
    # every round's jump held to the measure's range; (label, group) pairs flattened
    per_round = coef.T * unlabeled[:, None]  # (G, rounds)
    every = bound._replace(inclusion=np.tile(bound.inclusion, (pi.shape[1], 1)))
    full = held_second_moment((u / n_items).reshape(-1, u.shape[2]),
                              (pi.T[:, :, None] * per_round[None]).reshape(-1, per_round.shape[1]), every) + drift
    modal = held_second_moment(u_mode / n_items, per_round, bound) + drift
    return ModelCovariance(full, modal, missed_square(shift, expected, predicted), float(exceptions.sum()),
                           float(exceptions @ np.minimum(b_seen, 1)), exception_jump(shift, expected))


def with_unlabeled(cov: np.ndarray, plugin: np.ndarray, unlabeled: ModelCovariance, full: bool,
                   level: float, spread: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                   offset: float = 0.0, missed: MissedErrors | None = None) -> np.ndarray:
    """The labeled items' covariance ``cov`` plus the unlabeled items' (module docstring), never below ``plugin``.

    ``full``: the unlabeled items at their full model variance.  Else, with
    ``spread`` (the exceptions' expected numbers per block under each point
    of the recalibration's posterior, the points' probabilities and the
    blocks' overdispersion,
    :meth:`~labelwise.designs.group_model.GroupModel.count_spread`), the
    exceptions left unlabeled as an exact count
    (:func:`~labelwise.estimators.missed_count_variance`, ``offset``: how
    many of them the estimate already counts); without it, the mixture of the model's
    likely cases (:func:`~labelwise.estimators.mixture_variance`), its missed case the count's own distribution
    through the measure where ``missed`` is given (:func:`~labelwise.estimators.missed_errors`).
    """
    if full:
        cov = cov + unlabeled.full
    else:
        usual = cov + unlabeled.modal
        if spread is None:
            target = mixture_variance(np.diag(usual), np.diag(cov + unlabeled.full), unlabeled, level, missed)
        else:
            target = missed_count_variance(np.diag(usual), unlabeled.jump, level, *spread, offset=offset)
        cov = larger_variance(usual, np.diag(target))
    return larger_variance(cov, plugin)
