"""The oracle model of ``online-poisson`` on score blocks: each leaf's Beta posterior rate of positives.

The flat (``depth=1``) Dirichlet-tree model of Marchant & Rubinstein ("Needle
in a Haystack", KDD 2021, sec. 4) over the leaves of
:class:`~labelwise.engines.online.BlockRounds`: a leaf's posterior mean is
``r = (lam s + O) / (lam + L)`` (``s`` the leaf's mean prior, ``O`` its
positive labels, ``L`` its labels), with the blocks' priors recalibrated by a
Platt map on the labels (each label standing for the items of its (leaf,
predictions) group per label, as the per-item design weighs them) and ``lam``
chosen by the labels' marginal likelihood
(:mod:`labelwise.oracle.calibration`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, cached_property

import numpy as np
from scipy import sparse
from scipy.special import expit

from ..designs.group_model import START_STRENGTH
from ..designs.online_poisson import HINDSIGHT_VARIANCES, OnlinePoissonDesign
from ..designs.poisson_rounds import COMMON_EXCEPTIONS
from ..designs.tail_floor import floor_rate, with_floor
from ..designs.unlabeled_covariance import LeafModel
from ..oracle.calibration import (
    MAX_LOGIT,
    TAIL_LOGIT,
    Platt,
    fit_platt,
    items_per_label,
    logits_of,
    marginal_strength,
    platt_posterior,
)
from .blocks import BlockSummary

__all__ = ["OVERSTATED", "BlockLeaves", "weighted_overstates", "weighted_understates"]

#: Posterior probability of as many positives left as the weighted map counts, below which it overstates them.
OVERSTATED = 0.025


def weighted_understates(weighted: float, counted_once: np.ndarray) -> bool:
    """Whether the labels, each counted once, show the design-weighted recalibration to understate the positives.

    Both fits estimate the same Platt map when it holds: the weighted one
    (:func:`~labelwise.oracle.calibration.fit_platt` with the items each label
    stands for) steers the design; the unweighted posterior
    (:func:`~labelwise.oracle.calibration.platt_posterior` without weights) is
    the likelihood's, the design being ignorable (Sugden & Smith, Biometrika
    1984).  Where the map does not hold, or where a few tail labels standing
    for many items steepen the weighted slope, the weighted map counts fewer
    positives left among the unlabeled items than every point of the unweighted posterior's
    grid: fewer than any map within its reach (four Laplace standard
    deviations of the likelihood's maximum) allows.  The mixture interval
    assumes the model does not understate the positives left
    (:data:`~labelwise.designs.group_model.MODEL_BASIS`): there the
    assumption is contradicted, and the interval's model takes the
    unweighted posterior instead.  Inside the grid the two are taken to
    agree: the weighted fit's own noise (a label standing for thousands of
    items) puts it in the posterior's lower tail on pools where the map holds,
    and a test at a tail probability fired there, widening intervals that
    covered (``benchmarks/robustness.py``, the weak 1:1000 pools).  A
    weighted map that overstates them is tested apart (:func:`weighted_overstates`).

    Parameters
    ----------
    weighted : float
        The positives left unlabeled under the weighted map.
    counted_once : ndarray (k,)
        The same under each point of the unweighted posterior's grid.
    """
    return bool(weighted < counted_once.min())


def weighted_overstates(weighted: float, counted_once: np.ndarray, weight: np.ndarray) -> bool:
    """Whether the labels, each counted once, show the design-weighted recalibration to overstate the positives.

    On under-confident scores (the true recalibrated slope well above 1)
    the positives sit in the top blocks, whose labels each stand for few
    items: rescaled to mean 1, their weights leave the weighted fit's slope
    to its prior, centred on the identity, and the map spreads the
    positives over the tail, where no number of labels can show its rates
    of 1e-4 too high.  The mixture's hit case then carries that count and
    its interval is the whole range.  The unweighted posterior reads the
    slope from the labels (:func:`weighted_understates`); where it gives
    the weighted count less than :data:`OVERSTATED` probability, the
    interval is read in hindsight over that posterior
    (:meth:`BlockLeaves.model`).  Its missed case alone, the mixture over
    the same posterior, under-covers there: where the labels saw few
    positives the posterior puts fewer left than there are (the robustness
    grid's 1e-05-x0.5-strong at 2000 labels).

    Parameters
    ----------
    weighted, counted_once
        As :func:`weighted_understates`.
    weight : ndarray (k,)
        The points' posterior probabilities.
    """
    return bool(weight @ (counted_once >= weighted) < OVERSTATED)


class BlockLeaves:
    """The model's leaves over the blocks and each leaf's Beta posterior (module docstring).

    Parameters
    ----------
    design : OnlinePoissonDesign
        Its ``calibration``, ``prior_strength`` and ``variance`` (resolved).
    summary : BlockSummary
    prior : ndarray (G,)
        Each block's mean prior probability of a positive.
    leaf : ndarray of int (G,)
        Each block's leaf, numbered ``0 .. n_leaves - 1``.
    """

    def __init__(self, design: OnlinePoissonDesign, summary: BlockSummary, prior: np.ndarray, leaf: np.ndarray):
        self.design, self.summary, self.prior, self.leaf = design, summary, prior, leaf
        self.n_leaves = int(leaf.max()) + 1

    def _leaf_sum(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.leaf, weights=values, minlength=self.n_leaves)

    @cached_property
    def platt_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """The (leaf, predictions) group of every block and the items of every group."""
        s = self.summary
        predictions = s.keys & ((1 << s.n_systems) - 1) if s.has_preds else np.zeros_like(s.keys)
        group = np.unique(self.leaf * (1 << s.n_systems) + predictions, return_inverse=True)[1]
        return group, np.bincount(group, weights=s.counts)

    def platt_weights(self, blocks: np.ndarray) -> np.ndarray:
        """The weight of each label in the Platt fit: the items of its (leaf, predictions) group per label of the
        group, as the per-item design weighs them (:meth:`~labelwise.designs.group_model.GroupModel._label_weights`).

        Weights per block would let single labels stand for whole blocks:
        most fine blocks get few labels.

        Parameters
        ----------
        blocks : ndarray of int, shape (n,)
            The block of every label.

        Returns
        -------
        ndarray, shape (n,)
        """
        group, size = self.platt_groups
        labeled = group[blocks]
        return items_per_label(size, np.bincount(labeled, minlength=size.size), labeled)

    def model(self, blocks: np.ndarray, labels: np.ndarray, interval: bool = False,
              counted_once: bool = False) -> LeafModel:
        """The model's Beta posterior of each leaf's rate of positives after the labels, with the Platt
        recalibration behind its prior mean.

        The rounds plan with the most likely map fitted to the labels weighted
        by the items they stand for (:meth:`platt_weights`).  With
        ``interval``, the prior mean is, for the hindsight-read intervals and
        where the mixture's weighted map understates the positives left
        (:func:`weighted_understates`), the map averaged over its posterior
        given the labels, each counted once
        (:func:`~labelwise.oracle.calibration.platt_posterior`, on a grid);
        the hindsight-read intervals, and the mixture's where its weighted map
        overstates the positives left (:func:`weighted_overstates`), get the
        leaf rates' spread over that posterior (:attr:`LeafModel.rate_spread`,
        read in hindsight by the rounds' estimate), the mixture the leaf rates
        at every point of it (:attr:`LeafModel.point_rates`).  Each label
        once: the rounds choose whom to label from the scores and the earlier
        labels only, so the design is ignorable and the map's posterior is
        its likelihood times the prior (Sugden & Smith, "Ignorable and
        informative designs in survey sampling inference", Biometrika 1984);
        the design weights would count a tail label standing for many items
        as that many negatives, and fitted on a hundred labels such a map
        leaves the tail emptier than a few negatives can show.  The average,
        not the most likely map: far in the tail a leaf's rate ``sigmoid(a x
        + b)`` changes by orders of magnitude across the slope's posterior.
        With the design's opt-in ``tail_floor``, the interval's rates are
        raised to the labels' floor rate fitted under the map behind the
        leaves (:mod:`~labelwise.designs.tail_floor`).  With ``counted_once``
        the map is the most likely one given the labels each counted once,
        behind plain Beta posteriors: the rates of the mixture interval's
        normal case (:data:`~labelwise.engines.online.NORMAL_HITS`).
        The mixture reads the posterior only while the map expects
        exceptions to be rare among the unlabeled items (below
        :data:`~labelwise.designs.poisson_rounds.COMMON_EXCEPTIONS`): where
        they are common the rounds draw them at every turn, and taking
        their count as missed made some runs' precision intervals on
        common-positive pools many times wider than the others'
        (``tests/engines/test_block_leaves_misfit.py``).
        The interval's leaves hold the map's rates (the largest prior
        strength) unless the labels reject them
        (:func:`~labelwise.oracle.calibration.marginal_strength` with
        ``unless_rejected``): the rounds' most likely strength is the weakest
        wherever no positive has been labeled, and it would empty the tail of
        the positives that labels at rates of 1e-5 cannot show.
        """
        counts = self.summary.counts.astype(float)
        # the rounds plan on the clipped logits (the far tail of over-confident scores as one group, a floor the
        # allocation keeps); the interval's model reads the tail's own logits, which a recalibrated slope maps to
        # the tail's rates (clipped, a slope of 1/3 reads logits of -60 to -120 all as -10)
        s1, logits = self.prior, logits_of(self.prior, TAIL_LOGIT if interval else MAX_LOGIT)
        calibrated = self.design.calibration == "platt" and labels.size > 0
        once = cache(lambda: fit_platt(logits[blocks], labels, None))  # the map of the labels each counted once
        if calibrated:
            s1 = (once() if counted_once else fit_platt(logits[blocks], labels, self.platt_weights(blocks)))(logits)
        leaf_s1 = self._leaf_mean(counts * s1)
        leaf = self.leaf[blocks]
        O = np.stack([np.bincount(leaf, weights=labels == c, minlength=self.n_leaves) for c in (0, 1)], axis=1)
        strength = self.design.prior_strength
        if strength == "auto":
            strength = marginal_strength(np.stack([1 - leaf_s1, leaf_s1], axis=1), O, unless_rejected=interval) \
                if labels.size else START_STRENGTH
        floored = interval and calibrated and self.design.tail_floor  # positives the scores do not rank (opt-in)
        if calibrated and interval and not counted_once and self._exceptions_rare(s1, logits, blocks, labels, once) and \
                self.design.variance in (*HINDSIGHT_VARIANCES, "mixture"):
            posterior = platt_posterior(logits[blocks], labels, fit=once())
            block_rates = expit(logits[:, None] * posterior.a + posterior.b)  # (G, points)
            weighted, once_left = self._positives_left(s1, blocks, block_rates)
            hindsight = self.design.variance in HINDSIGHT_VARIANCES or weighted_overstates(
                weighted, once_left, posterior.weight)
            if hindsight or weighted_understates(weighted, once_left):
                r0 = floor_rate(posterior(logits[blocks]), labels) if floored else 0.0
                # each leaf's prior mean at every grid point of the posterior, (points, L)
                at_points = r0 + (1.0 - r0) * (self.leaf_matrix @ block_rates).T
                leaf_s1 = posterior.weight @ at_points
                alpha, beta = strength * leaf_s1 + O[:, 1], strength * (1.0 - leaf_s1) + O[:, 0]
                if hindsight:
                    shrink = strength / (strength + O.sum(axis=1))  # a leaf's posterior mean rate moves by this
                    return LeafModel(alpha, beta, np.sqrt(posterior.weight)[:, None] * (at_points - leaf_s1) * shrink)
                rates = (strength * at_points + O[:, 1]) / (strength + O.sum(axis=1))
                return LeafModel(alpha, beta, point_rates=rates, point_weights=posterior.weight)
        if floored:
            leaf_s1 = with_floor(leaf_s1, s1[blocks], labels)
        return LeafModel(strength * leaf_s1 + O[:, 1], strength * (1.0 - leaf_s1) + O[:, 0])

    def _exceptions_rare(self, s1: np.ndarray, logits: np.ndarray, blocks: np.ndarray, labels: np.ndarray,
                         once: Callable[[], Platt] | None = None) -> bool:
        """Whether the interval may read the recalibration's posterior: always for the hindsight-read intervals;
        for the mixture, where the weighted map ``s1`` or the map of the labels each counted once expects exceptions
        (labels other than a block's most likely one) among less than
        :data:`~labelwise.designs.poisson_rounds.COMMON_EXCEPTIONS` of the unlabeled items.  Where they are common
        the rounds draw them at every turn and the design-weighted labels carry them: none is missed wholesale.
        Early on a rare pool the weighted map can expect them common while the counted-once map does not: the
        posterior is read there.  ``once``: that map's fit, when the caller has it (fitted here otherwise)."""
        if self.design.variance in HINDSIGHT_VARIANCES:
            return True
        left = self.summary.counts - np.bincount(blocks, minlength=self.summary.counts.size)

        def share(rates: np.ndarray) -> float:
            return float(left @ np.minimum(rates, 1.0 - rates)) / max(float(left.sum()), 1.0)

        if share(s1) < COMMON_EXCEPTIONS:
            return True
        return share((once() if once else fit_platt(logits[blocks], labels, None))(logits)) < COMMON_EXCEPTIONS

    def _positives_left(self, s1: np.ndarray, blocks: np.ndarray, block_rates: np.ndarray) -> tuple[float, np.ndarray]:
        """The positives left among the unlabeled items under the weighted map (its blocks' rates ``s1``) and under
        each point of the unweighted posterior (the blocks' rates ``block_rates``, ``(G, points)``)."""
        left = self.summary.counts - np.bincount(blocks, minlength=self.summary.counts.size)
        return float(left @ s1), left @ block_rates

    @cached_property
    def leaf_matrix(self) -> sparse.csr_matrix:
        """``(L, G)``: each block's share of its leaf's items, so that ``leaf_matrix @ values`` is the mean of the
        per-block ``values`` over each leaf's items."""
        counts = self.summary.counts.astype(float)
        share = counts / np.maximum(self._leaf_sum(counts), 1.0)[self.leaf]
        return sparse.csr_matrix((share, (self.leaf, np.arange(counts.size))), shape=(self.n_leaves, counts.size))

    def _leaf_mean(self, values: np.ndarray) -> np.ndarray:
        """The mean over each leaf's items of a per-block ``values`` already multiplied by the blocks' counts."""
        return self._leaf_sum(values) / np.maximum(self._leaf_sum(self.summary.counts.astype(float)), 1.0)
