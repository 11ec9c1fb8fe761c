"""The sampler of one online Poisson run on an in-memory pool: its rounds, their state, and the estimate.

Split out of :mod:`labelwise.designs.online_poisson`, whose module docstring describes the rounds (Yilmaz et al.
(2021), "Sample Efficient Model Evaluation", arXiv:2109.12043, appendix E, generalized) and the estimate's
covariance that :meth:`OnlinePoissonSampler.estimate` computes; the design's settings are
:class:`~labelwise.designs.online_poisson.OnlinePoissonDesign`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from .base import Sampler
from .count_interval import COUNT_BASIS, count_terms, label_coefficients
from .difference_rounds import prediction_power, prediction_weights, unlabeled_by_round
from .group_losses import group_losses
from .group_model import GroupModel
from .poisson_rounds import group_scores, round_inclusion, systematic_counts
from .unlabeled_covariance import unlabeled_covariance, with_unlabeled

if TYPE_CHECKING:
    from .online_poisson import OnlinePoissonDesign

__all__ = ["PLUGIN_BASIS", "OnlinePoissonSampler"]

PLUGIN_BASIS = ("design-based from the labeled items alone: positives among items no round has reached yet are "
                "not accounted for")


class OnlinePoissonSampler(Sampler):
    """One run of :class:`~labelwise.designs.online_poisson.OnlinePoissonDesign`."""

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
        """Weighted average of the rounds' unbiased totals, covariance in hindsight (:mod:`~labelwise.designs.online_poisson`)."""
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
        if self.stochastic:  # each label's noise, with coefficient c_n (online_poisson's docstring)
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
                                        sample.labels, unlabeled.exceptions, N, N - self.gm.groups.unlabeled.sum())
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
