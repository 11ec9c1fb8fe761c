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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..draws import Draws, Sample
from ..estimators import (
    Estimate,
    JumpBound,
    ModelCovariance,
    larger_variance,
    make_estimate,
    rounds_moments,
    rounds_plugin_covariance,
    with_unseen_labels,
)
from ..measures import Measure
from ..pool import Pool
from .base import Sampler
from .count_interval import COUNT_BASIS, count_terms, label_coefficients
from .difference_rounds import prediction_power, prediction_weights, unlabeled_by_round
from .group_losses import group_losses
from .group_model import GroupModel
from .poisson_rounds import (
    DEVIATIONS,
    ORDERS,
    group_scores,
    round_inclusion,
    systematic_counts,
)
from .tree_model import TreeModelDesign
from .unlabeled_covariance import unlabeled_covariance, with_unlabeled

__all__ = ["OnlinePoissonDesign", "OnlinePoissonSampler", "unlabeled_covariance", "with_unlabeled"]

#: The intervals that read the unlabeled tail in hindsight (module docstring): they run only on score blocks.
HINDSIGHT_VARIANCES = ("hindsight", "conditional")
#: The intervals of rounds on score blocks (:func:`~labelwise.engines.online.rounds_refusal`).
BLOCK_VARIANCES = ("mixture", *HINDSIGHT_VARIANCES, "model")
#: The intervals of :class:`OnlinePoissonDesign` (``variance``; module docstring).
VARIANCES = (*BLOCK_VARIANCES, "count")

PLUGIN_BASIS = ("design-based from the labeled items alone: positives among items no round has reached yet are "
                "not accounted for")


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


class OnlinePoissonSampler(Sampler):
    """One run of :class:`OnlinePoissonDesign`."""

    def __init__(self, design: OnlinePoissonDesign, model: GroupModel, rng: np.random.Generator):
        super().__init__(model.pool, model.measure, model.oracle, rng)
        self.design, self.gm = design, model
        self._sizes: list[int] = []  # items drawn per round
        self._b_groups: list[np.ndarray] = []  # inclusion probability of an unlabeled member, per group
        self._pi_groups: list[np.ndarray] = []  # label weights of each group's prediction, per round
        self._betas: list[float] = []  # power of each round's prediction (difference_rounds.prediction_power)
        self._reuse: list[tuple[Measure, np.ndarray | None]] = []  # other measures' group losses
        # rounds weighted in the estimate: from the first drawn for the current measure (a system added
        # to a session, :mod:`labelwise.session_systems`), the earlier ones' labels entering as known losses
        self.first_round = 0

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        self.gm.observe(items, labels)

    def state(self) -> dict:
        """The newest round: its size, its inclusion probability and the model's prediction per group."""
        return {**self._rounds_state(slice(-1, None)), "first_round": self.first_round}

    def set_state(self, states: list[dict]) -> None:
        self._sizes = [int(n) for state in states for n in state.get("sizes", [])]
        self._b_groups = [np.asarray(b, dtype=float) for state in states for b in state.get("b_groups", [])]
        # sessions written before the difference estimator have no predictions: they keep Horvitz-Thompson
        self._pi_groups = [np.asarray(p, dtype=float) for state in states for p in state.get("pi_groups", [])]
        self._betas = [float(b) for state in states for b in state.get("betas", [])]
        self.first_round = max((int(state.get("first_round", 0)) for state in states), default=0)

    def states(self) -> list[dict]:
        """Every round's state in one, as :meth:`set_state` takes it back (what a session without a file
        carries to a new sampler)."""
        return [self._rounds_state(slice(None))]

    def _rounds_state(self, rounds: slice) -> dict:
        return {"sizes": self._sizes[rounds], "b_groups": [b.tolist() for b in self._b_groups[rounds]],
                "pi_groups": [p.tolist() for p in self._pi_groups[rounds]], "betas": self._betas[rounds]}

    @property
    def n_rounds(self) -> int:
        """Rounds drawn so far."""
        return len(self._sizes)

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        """Round r: water-filling inclusion probabilities over unlabeled items, exactly ``n_new`` drawn."""
        groups, rng = self.gm.groups, self.rng
        left = int(groups.unlabeled.sum())
        if n_new > left:  # a stochastic session does not check: items may be drawn again by other designs
            raise ValueError(f"online-poisson labels each item once: {n_new} new items asked for but {left} are "
                             "unlabeled; ask for fewer")
        pi, R, inf_g = self.gm.influence()
        difference = self.design.estimator == "difference"
        beta = 0.0  # Horvitz-Thompson: each group's prediction is its mode (unused)
        if difference:
            u = np.einsum("cgd,md->cgm", self.gm.rep_loss, self.measure.finite_jacobian(R))
            beta = 0.0 if self.stochastic else prediction_power(self.gm, pi, u, self._b_groups)
        predicting = prediction_weights(pi, beta)
        if difference:  # the spread of the residual u - m instead of u
            inf_g = np.sum((u - np.einsum("gc,cgm->gm", predicting, u)[None]) ** 2, axis=2)
        # all unlabeled members of a group share h, hence b: O(groups + batch) per round, not O(N)
        U = groups.unlabeled.astype(float)
        b_group = round_inclusion(self.design, pi, inf_g, U, n_new)
        # how many members each group gives (exactly n_new in all), then that many members uniformly
        scores = group_scores(pi) if self.design.order == "score" else None
        per_group = systematic_counts(U * np.where(U > 0, b_group, 0.0), rng, scores)
        asked = np.flatnonzero(per_group)
        chosen = rng.permutation(groups.sample_members(asked, per_group[asked], rng))
        self._sizes.append(int(chosen.size))
        self._b_groups.append(b_group)
        self._pi_groups.append(predicting)
        self._betas.append(beta)
        b_chosen = b_group[groups.of_item[chosen]]
        return Draws(chosen, 1.0 / b_chosen, b_chosen).in_round(len(self._sizes) - 1)

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        """Weighted average of the rounds' unbiased totals, covariance in hindsight (module docstring)."""
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        N = self.pool.n_items
        losses = self.losses(measure, sample)
        if sample.n_labels == N:  # a census (a number of rounds fixed by the batch sizes): exact, but for noise
            R = losses.sum(axis=0) / N
            cov = np.zeros((measure.size, measure.size))
            if self.stochastic:
                cov = self._label_noise(measure, d.items, measure.finite_jacobian(R), np.full(N, 1.0 / N))
            return make_estimate(measure, R, cov, N, len(d), level)
        n_rounds = int(d.round.max()) + 1
        counts = np.bincount(d.round, minlength=n_rounds)  # labels of each round in this sample
        # a round cut short by the labeled prefix is a random subset of it: its b scaled by k / n
        shrink = counts / np.asarray(self._sizes[:n_rounds], dtype=float)
        b_rounds = np.minimum(np.stack(self._b_groups[:n_rounds]) * shrink[:, None], 1.0)  # (rounds, G)
        group = self.gm.groups.of_item[d.items]
        M = self._predictions(measure, n_rounds)
        predicted = predicted_unlabeled = None
        if M is not None:
            predicted = M[:, group].transpose(1, 0, 2)  # (n, rounds, d)
            predicted_unlabeled = np.einsum("rg,rgd->rd", unlabeled_by_round(self.gm.groups, d.round, group, n_rounds), M)
        R, cov, w, J = rounds_moments(measure, losses, d.round, b_rounds[:, group].T, N, self.design.gamma,
                                      predicted, predicted_unlabeled, self.first_round)
        c = label_coefficients(w, d.round, b_rounds[d.round, group])  # each label's in N R-hat
        if self.stochastic:  # each label's noise, with coefficient c_n (module docstring)
            cov = cov + self._label_noise(measure, d.items, J, c / N)
        # never below the design-based estimate, which needs no model: the model's variance for the
        # unlabeled items is too small where it is wrong and the design trusted it (over-confident
        # scores), and a measure without a loss key has no model of them at all
        residuals = losses if M is None else losses - predicted[np.arange(len(d)), d.round]
        plugin = rounds_plugin_covariance(residuals @ J.T / N, d.round, b_rounds[d.round, group], w)
        rep_loss = self._group_losses(measure)
        if rep_loss is None:
            return make_estimate(measure, R, larger_variance(cov, plugin), sample.n_labels, len(d), level,
                                 basis=PLUGIN_BASIS)
        coef = w[:, None] ** 2 * (1.0 / b_rounds - 1.0)  # (rounds, G): every round, per group
        unlabeled = self._unlabeled_covariance(J, rep_loss, coef, b_rounds.sum(axis=0), M,
                                               JumpBound(b_rounds.T, w, measure.upper - measure.lower))
        # a stochastic oracle: the unlabeled items at their full model variance
        full = self.stochastic or self.design.variance == "model"
        spread, offset = None, 0.0
        if self.design.variance == "count" and not full:
            spread, offset = count_terms(self.gm, rep_loss, J, unlabeled, 0.0 if M is None else self._betas[-1],
                                         group, sample.labels, c)
        cov = with_unlabeled(cov, plugin, unlabeled, full, level, spread, offset)
        basis = self.gm.basis if spread is None else COUNT_BASIS
        # no label of another class than the commonest, and less than one expected: what the labels cannot rule out
        cov, basis = with_unseen_labels(cov, basis, np.einsum("cgd,md->cgm", rep_loss, J),
                                        self.gm.posterior(interval=True), self.gm.groups.unlabeled.astype(float),
                                        sample.labels, unlabeled.exceptions, N)
        return make_estimate(measure, R, cov, sample.n_labels, len(d), level, basis=basis)

    def _predictions(self, measure: Measure, n_rounds: int) -> np.ndarray | None:
        """``M[r, g]``: a group's expected loss under the model of round r's start, ``(rounds, G, d)``.

        ``None`` (Horvitz-Thompson) for the plain estimator, for other
        measures than the design's (sample reuse) and for sessions without
        stored predictions.
        """
        if self.design.estimator != "difference" or measure != self.measure or len(self._pi_groups) < n_rounds:
            return None
        return np.einsum("rgc,cgd->rgd", np.stack(self._pi_groups[:n_rounds]), self.gm.rep_loss)

    def _label_noise(self, measure: Measure, items: np.ndarray, J: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``sum_n coef_n^2 Var(u_n)`` with ``u_n = J l(x_n, y)`` and ``y`` from the interval's model."""
        pi = self.gm.posterior(interval=True)[self.gm.groups.of_item[items]]  # (n, C)
        outputs = self.pool.outputs(items)
        u = np.stack([measure.loss(outputs, np.full(items.size, c)) @ J.T for c in range(pi.shape[1])])  # (C, n, m)
        mean = np.einsum("nc,cnm->nm", pi, u)
        second = np.einsum("n,nc,cni,cnj->ij", coef**2, pi, u, u)
        return second - np.einsum("n,ni,nj->ij", coef**2, mean, mean)

    def _group_losses(self, measure: Measure) -> np.ndarray | None:
        """A group's loss for each label under ``measure``, ``(C, G, d)``; ``None`` without a loss key.

        The design's own measure has it by construction; another measure
        (sample reuse) from :func:`~labelwise.designs.group_losses.group_losses`: exact when its loss depends
        on x only through what the groups fix (recall or accuracy from an F1 session), else each group's
        mean.
        """
        if measure == self.measure:
            return self.gm.rep_loss
        for known, rep_loss in self._reuse:
            if known == measure:
                return rep_loss
        groups = self.gm.groups
        rep_loss = group_losses(measure, self.pool, groups.of_item, groups.rep)
        self._reuse.append((measure, rep_loss))
        return rep_loss

    def _unlabeled_covariance(self, J: np.ndarray, rep_loss: np.ndarray, coef: np.ndarray, b_seen: np.ndarray,
                              M: np.ndarray | None, bound: JumpBound) -> ModelCovariance:
        """The unlabeled items' part of the covariance under the interval's oracle model.

        Round r adds ``coef[r, g] (u - m_rg)(u - m_rg)^T / N^2`` for each
        unlabeled item of group g, with ``u = Dg l`` and ``m_rg`` the round's
        prediction (0 for Horvitz-Thompson).  Around the current model's mean
        ``c_g`` this is ``coef (u - c_g)(u - c_g)^T`` plus the drift
        ``coef (c_g - m_rg)(c_g - m_rg)^T``.  ``full`` takes ``u`` at the
        posterior, ``modal`` at each group's most likely label; ``hits``
        counts the exceptions the rounds would have sampled (``b_seen``:
        each group's inclusion probabilities summed over the rounds); each
        round's term held to the measure's range (``bound``, :func:`~labelwise.estimators.held_second_moment`).
        """
        gm, N = self.gm, self.pool.n_items
        pi = gm.posterior(interval=True)
        u = np.einsum("cgd,md->cgm", rep_loss, J)  # (C, G, m)
        U = gm.groups.unlabeled.astype(float)
        beta = 0.0 if M is None else self._betas[-1]
        center = np.einsum("gc,cgm->gm", prediction_weights(pi, beta), u) if M is not None else np.zeros(u.shape[1:])
        u = u - center[None]
        drift = np.zeros((J.shape[0], J.shape[0]))
        if M is not None:  # how far each round's prediction was from today's
            gap = center[None] - M @ J.T  # (rounds, G, m)
            drift = np.einsum("rg,g,rgi,rgj->ij", coef, U / N**2, gap, gap)
        return unlabeled_covariance(u, pi, U, coef, b_seen, N, bound, beta, drift)
