"""Online (multi-round) optimal Poisson sampling (Yilmaz et al. (2021) appendix E, generalized).

Labels arrive a batch at a time. Round r draws among the items not yet labeled, with inclusion probabilities ``b_r``
from the water-filling of Yilmaz et al. (2021) Algorithm 3 applied to the current deviations ``h_n`` under the
Dirichlet-tree model of the oracle (updated from every label so far, as in ``ais``), so that the round's expected --
and, with randomised systematic sampling, exact -- number of new labels is the batch size. The oracle model
recalibrates the scores on the labels after every batch (:class:`~labelwise.designs.tree_model.TreeModelDesign`,
``calibration``); a round whose adaptive allocation the model expects to do no better than uniform sampling is drawn
uniformly instead (``hedge``).

The deviation of an item is the root mean square ``sqrt(E_pi ||Dg(R_t) l(x_n, y)||^2)`` that minimises the
round's variance under the model (Yilmaz et al. (2021) eq. 25) while the model expects exceptions (labels other
than their group's most likely one) to be common among the unlabeled items, and the mean ``E_pi ||Dg l||``
(eq. 12, the importance-sampling form) while it expects them to be rare (``deviation="auto"``, chosen each round,
:func:`~labelwise.designs.poisson_rounds.round_deviations`). For a 0/1 loss of probability ``p`` the mean gives
``b ∝ p``, whose variance under the model is uniform sampling's, and the root mean square ``b ∝ sqrt(p)``,
Neyman's allocation; but when exceptions are rare, the square root spreads the budget over tens of thousands of
low-ranked items whose small probabilities are the model's least reliable part, and each exception drawn there
moves the estimate by a jump a normal interval does not cover.

The estimate is the weighted average of the rounds' unbiased totals (:func:`labelwise.estimators.rounds_moments`);
its covariance has a part for the items labeled so far and one for the items still unlabeled, estimated in
hindsight: items labeled since round r enter at their labels, and items still unlabeled at their expectation under
the current oracle model -- so the interval accounts for positives not found yet, which a plug-in over the sampled
items cannot see. That full variance is dominated by positives the model allows among many low-ranked items, each
sampled with a tiny probability: their draw would move the estimate far, but is too unlikely to matter at 95%. By
default (``variance="mixture"``) the interval covers the model's error split into no surprise / surprises never
sampled / one sampled, as ``ais`` does (:func:`labelwise.estimators.mixture_variance`). Its last case (an exception
drawn) is a hindsight worst case: once the labels are in, every unlabeled item is known not to have been drawn, and
the exceptions that were drawn are labeled items, in the design-based part. On rare pools that case sets the width
(two to four times the error). Every round's term is held to the measure's range: a draw at ``b ~ 1e-6`` would
move the estimate by more than F1 can move (:func:`~labelwise.estimators.jump_limit`). On score blocks, where the
labels each counted once show the design-weighted recalibration to understate the pool's positives
(:func:`~labelwise.engines.block_leaves.weighted_understates`), the mixture's missed case is the count of exceptions left
over the recalibration's posterior, each count at the measure's own error (:func:`~labelwise.estimators.missed_errors`);
where they show it to overstate them (:func:`~labelwise.engines.block_leaves.weighted_overstates`: under-confident
scores), the interval is read in hindsight over that posterior, as with ``variance="hindsight"``.
``variance="hindsight"`` (opt-in) drops the last case on binary pools, whose rounds run on score
blocks (:mod:`~labelwise.designs.hashed_online`), and takes each leaf's rate of exceptions as uncertain instead
(:func:`~labelwise.designs.unlabeled_covariance.missed_in_hindsight`); this per-item sampler keeps it.
``variance="conditional"`` (opt-in, score blocks too) reads the third case leaf by leaf on what the rounds drew: a
leaf where an exception was drawn adds its error's second moment given that draw, the others are read in hindsight
(:func:`~labelwise.designs.unlabeled_covariance.drawn_variance`). ``variance="count"`` (opt-in) counts the exceptions
left unlabeled instead
(:mod:`~labelwise.designs.count_interval`). Once every item is labeled (a number of rounds fixed by the batch sizes)
the estimate is the pool's exact value.

Under a stochastic oracle (noisy or several annotators) each item is still labeled once, and every label is a draw
from ``p(y|x)``: ``T_r`` stays unbiased for the expected total, but a label's noise ``e_n = l_n - E l_n`` enters
``N R-hat`` with the coefficient ``c_n = w_rho / b_rho,n + sum_{r > rho} w_r`` (``rho`` the round that labeled it), so
the covariance gains ``sum_n c_n^2 Var(u_n) / N^2`` with ``Var(u_n)`` under the oracle model, and the unlabeled
items enter at their full model variance (no split into likely cases). A census is the mean of its noisy labels'
losses, with covariance ``sum_n Var(u_n) / N^2``.

The per-item sampler that computes all this is :class:`~labelwise.designs.online_poisson_sampler.OnlinePoissonSampler`
(importable from here too); the rounds on score blocks are :mod:`~labelwise.designs.hashed_online`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..measures import Measure
from ..pool import Pool
from .base import Sampler
from .online_poisson_sampler import PLUGIN_BASIS, OnlinePoissonSampler
from .poisson_rounds import DEVIATIONS, ORDERS
from .tree_model import TreeModelDesign
from .unlabeled_covariance import unlabeled_covariance, with_unlabeled

__all__ = ["BLOCK_VARIANCES", "HINDSIGHT_VARIANCES", "PLUGIN_BASIS", "VARIANCES", "OnlinePoissonDesign",
           "OnlinePoissonSampler", "unlabeled_covariance", "with_unlabeled"]

#: The intervals that read the unlabeled tail in hindsight (module docstring): they run only on score blocks.
HINDSIGHT_VARIANCES = ("hindsight", "conditional")
#: The intervals of rounds on score blocks (:func:`~labelwise.engines.online.rounds_refusal`).
BLOCK_VARIANCES = ("mixture", *HINDSIGHT_VARIANCES, "model")
#: The intervals of :class:`OnlinePoissonDesign` (``variance``; module docstring).
VARIANCES = (*BLOCK_VARIANCES, "count")


@dataclass(frozen=True, kw_only=True)
class OnlinePoissonDesign(TreeModelDesign):
    """Multi-round optimal Poisson sampling with a Dirichlet-tree oracle model.

    Parameters
    ----------
    defensive : float in (0, 1)
        Share of each round's labels spread uniformly over the unlabeled
        items (:func:`~labelwise.designs.poisson.defensive_deviations`), so
        every unlabeled item keeps a positive inclusion probability.
    gamma : float
        Rounds are weighted ``∝ n_r m_r^gamma`` (:func:`~labelwise.estimators.round_weights`).
    deviation : {"auto", "mean", "rms"}
        ``E_pi ||Dg l||`` or ``sqrt(E_pi ||Dg l||^2)``; ``"auto"`` takes the root mean square in the rounds
        where the oracle model expects at least
        :data:`~labelwise.designs.poisson_rounds.COMMON_EXCEPTIONS` of the unlabeled items' labels to be
        exceptions, the mean in the others (module docstring).
    variance : {"mixture", "hindsight", "conditional", "count", "model"}
        Interval from the model's likely cases, from those cases read in hindsight or read leaf by leaf on
        what the rounds drew (both on binary pools on score blocks only; refused elsewhere), from the count
        of exceptions left unlabeled, or from the model's full variance (module docstring; a stochastic
        oracle always uses the full one).
    estimator : {"horvitz-thompson", "difference"}
        Each round's total as the plain weighted sum of its labels
        (default), or as the oracle model's prediction plus the weighted
        residuals of the round's labels (the model is the one fitted before
        the round, so the round stays unbiased; its power is tuned from the
        labels, :func:`~labelwise.designs.difference_rounds.prediction_power`); see
        :func:`~labelwise.estimators.rounds_moments`.  The difference
        estimator also steers the design by the residuals' spread instead of
        the losses'.  It gains most on balanced pools, but a model that
        extrapolates badly into a large unlabeled tail can cost it more than
        it gains (``benchmarks/RESULTS.md``), hence not the default yet.
    tail_floor : bool
        Opt-in, score blocks only: the interval's model raises the recalibrated scores to a floor rate of
        positives they do not rank (label noise, positives the system never learned), at its posterior mean
        given the labels (:mod:`~labelwise.designs.tail_floor`).  It covers where a share of the positives is
        invisible to the scores, but widens the interval on clean rare pools, whose labels cannot rule a small
        floor out (``benchmarks/RESULTS.md``).
    hedge : float
        A round is drawn uniformly when the oracle model's variance for the
        adaptive allocation is at least ``hedge`` times its variance for
        uniform sampling (0 never adapts, above 1 always does).  The
        default 1 goes uniform only when adapting promises nothing, as on
        balanced pools with a weak system, where the water-filling of the
        mean deviations is no better than uniform even under the model (the
        root mean square deviations are the model's optimum, never worse
        than uniform under it, so in practice it acts in the rounds that
        take the mean);
        under imbalance adapting promises a factor of 2 to 10.  A smaller
        ``hedge`` (0.9) also won on 30%-positive pools but cost abt-buy
        ten times its error: once its positives are found, the model sees
        the tail as alike and uniform rounds waste the budget there.  The
        choice uses only the labels before the round, which keeps the round
        unbiased.
    order : {"score", "random"}
        The order of the groups in a round's randomised systematic sampling
        (:func:`~labelwise.designs.poisson_rounds.systematic_counts`): by
        score (the blocks' mean prior on score blocks, the model's posterior
        per item), which stratifies every round implicitly over the scores,
        or at random.  Every item's inclusion probability is the same
        either way; the interval, which treats the draws as independent,
        does not count the gain of the score order.  Multi-class pools keep
        the random order (:func:`~labelwise.designs.poisson_rounds.group_scores`).
    **model
        The oracle model's settings (:class:`~labelwise.designs.tree_model.TreeModelDesign`).
    """

    name = "online-poisson"
    with_replacement = False
    defensive: float = 0.03
    gamma: float = 1.0
    deviation: str = "auto"
    variance: str = "mixture"
    estimator: str = "horvitz-thompson"
    hedge: float = 1.0
    tail_floor: bool = False
    order: str = "score"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.deviation not in DEVIATIONS:
            raise ValueError(f"deviation: choose {', '.join(map(repr, DEVIATIONS))}, got {self.deviation!r}")
        if self.variance not in VARIANCES:
            raise ValueError(f"variance: choose {', '.join(map(repr, VARIANCES))}, got {self.variance!r}")
        if self.order not in ORDERS:
            raise ValueError(f"order: choose {', '.join(map(repr, ORDERS))}, got {self.order!r}")
        if self.estimator not in ("difference", "horvitz-thompson"):
            raise ValueError(f"estimator: choose 'difference' or 'horvitz-thompson', got {self.estimator!r}")
        if not 0.0 < self.defensive < 1.0:
            raise ValueError(f"defensive: must lie in (0, 1), got {self.defensive}")
        if self.hedge < 0:
            raise ValueError(f"hedge: must be non-negative, got {self.hedge}")
        if self.gamma < 0:
            raise ValueError(f"gamma: must be non-negative, got {self.gamma}")
        if self.tail_floor and self.calibration != "platt":
            raise ValueError(f"tail_floor: the floor is fitted under the Platt recalibration; set calibration='platt' "
                             f"(got {self.calibration!r})")

    @property
    def round_deviation(self) -> str:
        """The deviation the rounds use: ``deviation``, but ``"mean"`` for ``"auto"`` under the intervals read in
        hindsight, which were built on the mean deviation's rounds (under the root mean square's, the conditional
        interval was 2.3 times the error on a 3%-positive pool, against 1.5)."""
        if self.deviation == "auto" and self.variance in HINDSIGHT_VARIANCES:
            return "mean"
        return self.deviation

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> Sampler:
        """A run: an engine pool's rounds on score blocks where an engine pool could run it (binary pool, measure of
        the predictions, deterministic oracle; :mod:`~labelwise.designs.hashed_online`), else per item."""
        from .hashed_online import (  # it builds on this module
            HashedOnlineSampler,
            memory_rounds,
            runs_on_blocks,
        )

        if runs_on_blocks(self, pool, measure, oracle):
            try:
                rounds, block = memory_rounds(self, pool, measure)
            except ValueError:  # scores spanning too wide a range for fine bins: strata by rank, per item
                pass
            else:
                return HashedOnlineSampler(self, pool, measure, oracle, rng, rounds, block)
        block_only = [f"variance={self.variance!r}"] * (self.variance in HINDSIGHT_VARIANCES)
        block_only += ["tail_floor=True"] * self.tail_floor
        if block_only:
            raise ValueError(f"online-poisson: {' with '.join(block_only)} runs only on score blocks (a binary pool, a "
                             "measure of the predictions, a deterministic oracle, depth 1, the score partition, the "
                             "default estimator); use variance='mixture' without tail_floor here")
        return OnlinePoissonSampler(self, self.group_model(pool, measure, oracle), rng)
