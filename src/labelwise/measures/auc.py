"""ROC AUC as a generalized measure: a design-weighted two-sample U-statistic over score bins.

The AUC of a score ``s`` is the probability that a positive outscores a
negative, ties counting one half (the "probability of correct pairwise
comparison" form, equal to the area under the ROC curve and to the
Mann-Whitney statistic: J. A. Hanley and B. J. McNeil, "The Meaning and Use
of the Area under a Receiver Operating Characteristic (ROC) Curve",
Radiology 143, 1982)::

    AUC = sum_{i pos, j neg} K(s_i, s_j) / (P N),   K = 1{s_i > s_j} + 1/2 1{s_i = s_j}.

From a labelled sample with design weights ``w`` the plug-in estimate is the
weighted U-statistic ``sum_{i pos, j neg} w_i w_j K / (sum_pos w_i sum_neg w_j)``.

**How it fits ``G = g(R)``.**  The thresholds ``tau_1 < ... < tau_L`` cut the
scores into ``B = L + 1`` ordered bins (bin ``k(x)`` = number of thresholds at
or below the score, :class:`~labelwise.measures.thresholds.ThresholdMeasure`).
The loss of an item is one-hot over ``2B`` cells: ``[1{y = pos, k(x) = b}]_b,
[1{y != pos, k(x) = b}]_b``, so ``R = (P_b, N_b)_b`` are the pool's shares of
positives and negatives per bin and

    g(R) = sum_b P_b (N_{<b} + N_b / 2) / (sum_b P_b sum_b N_b)

(the Mann-Whitney statistic of the binned scores).  Every design's estimate
``R-hat`` is a design-weighted mean of losses, and ``g(R-hat)`` is exactly the
weighted U-statistic above with the bins as scores.  ``g`` is a smooth ratio,
so the delta method of each design's estimator (Marchant and Rubinstein, KDD
2021, section 3.3.2; Yilmaz et al. 2021, eq. 25) applies unchanged: with
``A = g(R)``, ``Dg`` maps a positive in bin ``b`` to
``((N_{<b} + N_b / 2) / N - A) / P`` and a negative to
``((P_{>b} + P_b / 2) / P - A) / N`` -- the placement values of E. R. DeLong,
D. M. DeLong and D. L. Clarke-Pearson, "Comparing the Areas under Two or
More Correlated Receiver Operating Characteristic Curves", Biometrics 44,
1988 -- so the variance is the design variance of the Hajek projection of
the U-statistic, correct under each design's weights to first order.  A session raises it
where it collapses for want of labeled positives
(:mod:`labelwise.measures.auc_variance`) and, under ``importance``, where the labels miss the
rare heavy-weight positives of its proposal (:mod:`labelwise.measures.auc_importance`).

**What the bins cost.**  When the thresholds are the pool's distinct scores
(``auc:<n>`` with ``n`` at least their number) the binned AUC is the AUC.
Otherwise pairs in one bin count as ties, and ``|g(R) - AUC| <= 1/2 sum_b P_b
N_b / (P N) <= 1/2 min(max_b N_b / N, max_b P_b / P)``.  The default grid
(:meth:`~labelwise.measures.thresholds.ThresholdMeasure.grid` with
quantiles) puts half its thresholds at quantiles of all scores and half at
quantiles of the expected positives' scores, so both maxima are about
``2 / L`` and the bias at most about ``1 / L``; in practice far less, since
scores within one narrow bin barely separate the classes (the benchmark
``benchmarks/auc_designs.py`` reports it per pool).  The loss has ``2 (L + 1)``
components, which the designs materialise per labelled draw:
:data:`DEFAULT_THRESHOLDS` balances the two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..pool import Outputs
from .auc_importance import with_importance_model_variance
from .auc_variance import with_prior_variance
from .registry import register_measure
from .thresholds import ThresholdMeasure, grid_option

if TYPE_CHECKING:
    from ..designs import Sampler
    from ..draws import Sample
    from ..estimators import Estimate
    from ..pool import Pool

__all__ = ["AUC", "DEFAULT_THRESHOLDS", "ScoreBinMeasure", "binned_auc", "weighted_auc"]

#: Thresholds of ``auc`` without an argument (quantiles of the pool's scores).
DEFAULT_THRESHOLDS = 256


def binned_auc(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """The AUC of ordered bins with positive and negative weights ``pos``, ``neg`` (ties within a bin: 1/2).

    Parameters
    ----------
    pos, neg : ndarray, shape (..., B)
        Weight (count, share or design-weighted total) of positives and
        negatives per bin, bins in increasing order of score.

    Returns
    -------
    ndarray, shape (...)
        ``sum_b pos_b (neg_{<b} + neg_b / 2) / (sum pos sum neg)``; NaN or inf
        when either class has no weight.
    """
    pos, neg = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
    below = np.cumsum(neg, axis=-1) - neg / 2  # negatives below each bin, its own counted half
    return np.sum(pos * below, axis=-1) / (pos.sum(axis=-1) * neg.sum(axis=-1))


def weighted_auc(scores: np.ndarray, pos_weight: np.ndarray, neg_weight: np.ndarray) -> float:
    """The exact weighted AUC ``sum_{i,j} a_i b_j K(s_i, s_j) / (sum a sum b)`` in O(n log n).

    Every distinct score is its own bin of :func:`binned_auc` (ranks with ties
    averaged, as in the Mann-Whitney statistic).

    Parameters
    ----------
    scores : ndarray, shape (n,)
    pos_weight, neg_weight : ndarray, shape (n,)
        Each item's weight as a positive and as a negative: ``y`` and ``1 - y``
        for known labels, ``p(y | x)`` and ``1 - p(y | x)`` for a label
        distribution, design weights times those for a sample.

    Returns
    -------
    float
        NaN when either class has no weight.
    """
    order = np.argsort(scores)
    ranked = np.asarray(scores, dtype=float)[order]
    rank = np.zeros(ranked.size, dtype=np.int64)  # dense rank (ties equal), in sorted order
    rank[1:] = np.cumsum(ranked[1:] != ranked[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        value = binned_auc(np.bincount(rank, weights=np.asarray(pos_weight, dtype=float)[order]),
                           np.bincount(rank, weights=np.asarray(neg_weight, dtype=float)[order]))
    return float(value) if np.isfinite(value) else float("nan")


class ScoreBinMeasure(ThresholdMeasure):
    """A measure of the label counts per score bin: one-hot loss over ``(class, bin)`` cells.

    The loss has ``2 B`` components (``B = L + 1`` bins): the first ``B`` are
    ``1{y = positive, k(x) = b}``, the last ``B`` ``1{y != positive, k(x) = b}``.
    Subclasses implement ``g`` and its Jacobian on the bins' shares.
    """

    @property
    def n_bins(self) -> int:
        """``B = L + 1``: below the first threshold, between two, above the last."""
        return self.L + 1

    def _dim(self) -> int:
        return 2 * (self.L + 1)

    def _cell(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """Index of each item's nonzero loss component."""
        return self._k(outputs) + np.where(np.asarray(y) == self.positive, 0, self.n_bins)

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        cell = self._cell(outputs, y)
        out = np.zeros((cell.size, self.dim))
        out[np.arange(cell.size), cell] = 1.0
        return out

    def loss_is_nonzero(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        return np.ones(len(y), dtype=bool)

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        k, B = self._k(outputs), self.n_bins
        p_pos = label_probs[:, self.positive]
        return np.concatenate([np.bincount(k, weights=p_pos, minlength=B),
                               np.bincount(k, weights=label_probs.sum(axis=1) - p_pos, minlength=B)])

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        """``||Dg(R) l||^2`` in O(n + m d): a one-hot loss picks one column of ``Dg``."""
        J = self.finite_jacobian(R)
        return np.sum(J**2, axis=0)[self._cell(outputs, y)]

    def _shares(self, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positive and negative shares per bin, ``(..., B)`` each."""
        R = np.asarray(R, dtype=float)
        return R[..., : self.n_bins], R[..., self.n_bins :]


class AUC(ScoreBinMeasure):
    """ROC AUC of one system's score, binned at ``thresholds`` (module docstring).

    Parameters
    ----------
    thresholds : array-like, shape (L,)
        Bin edges on the system's score; the pool's distinct scores give the exact AUC.
    system, positive, system_name
        As for :class:`~labelwise.measures.BinaryMeasure`.
    """

    kind = "auc"
    floors_unseen_labels = True

    def g(self, R: np.ndarray) -> np.ndarray:
        return binned_auc(*self._shares(R))[..., None]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        P, N = self._shares(R)
        sp, sn = P.sum(axis=-1, keepdims=True), N.sum(axis=-1, keepdims=True)
        A = binned_auc(P, N)[..., None]
        below = np.cumsum(N, axis=-1) - N / 2  # d(numerator) / dP_b
        above = sp - np.cumsum(P, axis=-1) + P / 2  # d(numerator) / dN_b
        return np.concatenate([(below / sn - A) / sp, (above / sp - A) / sn], axis=-1)[..., None, :]

    def refine_estimate(self, estimate: Estimate, pool: Pool, sampler: Sampler, sample: Sample) -> Estimate:
        """The variance raised where larger to the recalibrated model's view of an ``importance`` proposal
        (:mod:`.auc_importance`), then to that under a recalibrated-model prior (:mod:`.auc_variance`)."""
        estimate = with_importance_model_variance(self, estimate, pool, sampler, sample)
        return with_prior_variance(self, estimate, pool, sampler, sample)

    def pool_value(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """The exact AUC of the pool, not the binned one (:func:`weighted_auc`)."""
        p_pos = label_probs[:, self.positive]
        return np.array([weighted_auc(self._scores(outputs), p_pos, label_probs.sum(axis=1) - p_pos)])


register_measure("auc", AUC, options=grid_option(AUC, DEFAULT_THRESHOLDS, quantiles=True),
                 usage=("auc", "auc:<n_thresholds>"))
