"""Online (multi-round) optimal Poisson sampling (Yilmaz et al. (2021) appendix E, generalized).

Labels arrive a batch at a time.  Round r draws among the items not yet
labeled, with inclusion probabilities ``b_r`` from the water-filling of
Yilmaz et al. (2021) Algorithm 3 applied to the current deviations ``h_n`` under the
Dirichlet-tree model of the oracle (updated from every label so far, as in
``ais``), so that the round's expected -- and, with randomised systematic
sampling, exact -- number of new labels is the batch size.

The deviation is ``h_n = E_pi ||Dg(R_t) l(x_n, y)||`` by default (Yilmaz et al. (2021)
eq. 12, the importance-sampling form) rather than the root mean square
``sqrt(E_pi ||Dg l||^2)`` that minimises the round's variance under the
model (Yilmaz et al. (2021) eq. 25): when scores put a small probability of a positive
on each of tens of thousands of low-ranked items, the square root spreads
the budget over them.

The estimate is the weighted average of the rounds' unbiased totals
(:func:`labelwise.estimators.rounds_moments`); its covariance has a part for
the items labeled so far and one for the items still unlabeled, estimated
in hindsight: items labeled since round r enter at their labels, and items still unlabeled at their expectation
under the current oracle model -- so the interval accounts for positives not
found yet, which a plug-in over the sampled items cannot see.  That full
variance is dominated by positives the model allows among many low-ranked
items, each sampled with a tiny probability: their draw would move the
estimate far, but is too unlikely to matter at 95%.  By default
(``variance="mixture"``) the interval covers the model's error split into
no surprise / surprises never sampled / one sampled, as ``ais`` does
(:func:`labelwise.estimators.mixture_variance`).  Once every item is
labeled (a number of rounds fixed by the batch sizes) the estimate is the
pool's exact value.

Under a stochastic oracle (noisy or several annotators) each item is still
labeled once, and every label is a draw from ``p(y|x)``: ``T_r`` stays unbiased for the expected total, but a label's
noise ``e_n = l_n - E l_n`` enters ``N R-hat`` with the coefficient
``c_n = w_rho / b_rho,n + sum_{r > rho} w_r`` (``rho`` the round that
labeled it), so the covariance gains ``sum_n c_n^2 Var(u_n) / N^2`` with
``Var(u_n)`` under the oracle model, and the unlabeled items enter at their
full model variance (no split into likely cases).  A census is the mean of
its noisy labels' losses, with covariance ``sum_n Var(u_n) / N^2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..draws import Draws, Sample
from ..estimators import (
    Estimate,
    ModelCovariance,
    exception_terms,
    larger_variance,
    make_estimate,
    mixture_variance,
    rounds_moments,
    rounds_plugin_covariance,
)
from ..measures import Measure
from ..pool import Pool
from .base import Sampler
from .group_model import GroupModel, TreeModelDesign
from .poisson import defensive_deviations, inclusion_probabilities

__all__ = ["OnlinePoissonDesign", "OnlinePoissonSampler"]


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
    deviation : {"mean", "rms"}
        ``E_pi ||Dg l||`` or ``sqrt(E_pi ||Dg l||^2)`` (module docstring).
    variance : {"mixture", "model"}
        Interval from the model's likely cases, or from its full variance
        (module docstring; a stochastic oracle always uses the full one).
    **model
        The oracle model's settings (:class:`~labelwise.designs.group_model.TreeModelDesign`).
    """

    name = "online-poisson"
    with_replacement = False
    defensive: float = 0.03
    gamma: float = 2.0
    deviation: str = "mean"
    variance: str = "mixture"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.deviation not in ("mean", "rms"):
            raise ValueError(f"deviation: choose 'mean' or 'rms', got {self.deviation!r}")
        if self.variance not in ("mixture", "model"):
            raise ValueError(f"variance: choose 'mixture' or 'model', got {self.variance!r}")
        if not 0.0 < self.defensive < 1.0:
            raise ValueError(f"defensive: must lie in (0, 1), got {self.defensive}")
        if self.gamma < 0:
            raise ValueError(f"gamma: must be non-negative, got {self.gamma}")

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> OnlinePoissonSampler:
        return OnlinePoissonSampler(self, self.group_model(pool, measure, oracle), rng)


class OnlinePoissonSampler(Sampler):
    """One run of :class:`OnlinePoissonDesign`."""

    def __init__(self, design: OnlinePoissonDesign, model: GroupModel, rng: np.random.Generator):
        super().__init__(model.pool, model.measure, model.oracle, rng)
        self.design, self.gm = design, model
        self._sizes: list[int] = []  # items drawn per round
        self._b_groups: list[np.ndarray] = []  # inclusion probability of an unlabeled member, per group

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        self.gm.observe(items, labels)

    def state(self) -> dict:
        """The newest round: its size and its inclusion probability per group."""
        return {"sizes": self._sizes[-1:], "b_groups": [b.tolist() for b in self._b_groups[-1:]]}

    def set_state(self, states: list[dict]) -> None:
        self._sizes = [int(n) for state in states for n in state.get("sizes", [])]
        self._b_groups = [np.asarray(b, dtype=float) for state in states for b in state.get("b_groups", [])]

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        """Round r: water-filling inclusion probabilities over unlabeled items, exactly ``n_new`` drawn."""
        groups, rng = self.gm.groups, self.rng
        left = int(groups.unlabeled.sum())
        if n_new > left:  # a stochastic session does not check: items may be drawn again by other designs
            raise ValueError(f"online-poisson labels each item once: {n_new} new items asked for but {left} are "
                             "unlabeled; ask for fewer")
        pi, _, inf_g = self.gm.influence()
        if self.design.deviation == "rms":
            h_group = np.sqrt(np.maximum(np.sum(pi.T * inf_g, axis=0), 0.0))
        else:
            h_group = np.sum(pi.T * np.sqrt(np.maximum(inf_g, 0.0)), axis=0)
        # all unlabeled members of a group share h, hence b: O(groups + batch) per round, not O(N)
        U = groups.unlabeled.astype(float)
        b_group = inclusion_probabilities(defensive_deviations(h_group, self.design.defensive, U), n_new, counts=U)
        b_group[U == 0] = 1.0  # groups with no unlabeled member are never used
        # randomised systematic sampling of how many members each group gives (exactly n_new in
        # all, each count's mean U_g b_g), then that many members uniformly
        order = rng.permutation(groups.n_groups)
        cum = np.cumsum((U * np.where(U > 0, b_group, 0.0))[order])
        u = rng.random()
        per_group = np.zeros(groups.n_groups, dtype=np.int64)
        per_group[order] = (np.floor(cum - u) - np.floor(np.concatenate([[0.0], cum[:-1]]) - u)).astype(np.int64)
        asked = np.flatnonzero(per_group)
        chosen = rng.permutation(groups.sample_members(asked, per_group[asked], rng))
        self._sizes.append(int(chosen.size))
        self._b_groups.append(b_group)
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
        R, cov, w, J = rounds_moments(measure, losses, d.round, b_rounds[:, group].T, N, self.design.gamma)
        if self.stochastic:  # each label's noise, with coefficient c_n (module docstring)
            later = 1.0 - np.cumsum(w)  # sum of the weights of the rounds after each one
            c = w[d.round] / b_rounds[d.round, group] + later[d.round]
            cov = cov + self._label_noise(measure, d.items, J, c / N)
        # never below the design-based estimate, which needs no model: the model's variance for the
        # unlabeled items is too small where it is wrong and the design trusted it (over-confident
        # scores), and other measures (sample reuse) have no model of the unlabeled items at all
        plugin = rounds_plugin_covariance(losses @ J.T / N, d.round, b_rounds[d.round, group], w)
        if measure != self.measure:
            return make_estimate(measure, R, larger_variance(cov, plugin), sample.n_labels, len(d), level)
        excess = np.sum(w[:, None] ** 2 * (1.0 / b_rounds - 1.0), axis=0)  # every round, per group
        unlabeled = self._unlabeled_covariance(J, excess, b_rounds.sum(axis=0))
        if self.stochastic or self.design.variance == "model":  # the unlabeled items at their full model variance
            cov = cov + unlabeled.full
        else:
            usual = cov + unlabeled.modal
            target = mixture_variance(np.diag(usual), np.diag(cov + unlabeled.full), unlabeled, level)
            cov = larger_variance(usual, np.diag(target))
        return make_estimate(measure, R, larger_variance(cov, plugin), sample.n_labels, len(d), level)

    def _label_noise(self, measure: Measure, items: np.ndarray, J: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``sum_n coef_n^2 Var(u_n)`` with ``u_n = J l(x_n, y)`` and ``y`` from the interval's model."""
        pi = self.gm.posterior(interval=True)[self.gm.groups.of_item[items]]  # (n, C)
        outputs = self.pool.outputs(items)
        u = np.stack([measure.loss(outputs, np.full(items.size, c)) @ J.T for c in range(pi.shape[1])])  # (C, n, m)
        mean = np.einsum("nc,cnm->nm", pi, u)
        second = np.einsum("n,nc,cni,cnj->ij", coef**2, pi, u, u)
        return second - np.einsum("n,ni,nj->ij", coef**2, mean, mean)

    def _unlabeled_covariance(self, J: np.ndarray, excess: np.ndarray, b_seen: np.ndarray) -> ModelCovariance:
        """The unlabeled items' part of the covariance under the interval's oracle model.

        ``full`` is ``sum_g excess_g * (unlabeled items of g) * E_pi[u u^T] / N^2``,
        ``modal`` the same at each group's most likely label; ``hits`` counts
        the exceptions the rounds would have sampled (``b_seen``: each
        group's inclusion probabilities summed over the rounds).
        """
        gm, N = self.gm, self.pool.n_items
        pi = gm.posterior(interval=True)
        u = np.einsum("cgd,md->cgm", gm.rep_loss, J)  # (C, G, m)
        U = gm.groups.unlabeled.astype(float)
        u_mode, exceptions, miss = exception_terms(u, pi, U, N)
        scale = excess * U / N**2
        full = np.einsum("g,gc,cgi,cgj->ij", scale, pi, u, u)
        modal = np.einsum("g,gi,gj->ij", scale, u_mode, u_mode)
        return ModelCovariance(full, modal, miss, float(exceptions.sum()), float(exceptions @ np.minimum(b_seen, 1)))
