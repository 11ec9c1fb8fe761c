"""OASIS: stratified adaptive importance sampling (Marchant & Rubinstein, VLDB 2017).

The baseline of Marchant & Rubinstein (KDD 2021) section 5.  The pool is cut into CSF score strata;
the oracle is modelled by a Beta-Bernoulli positive rate per stratum, with a
prior centred on the stratum's mean probability; after every batch the
stratum proposal is set to the asymptotically optimal one for a stochastic
oracle (Marchant & Rubinstein (KDD 2021) Prop. 2),

    q_k ∝ omega_k sqrt( mean_{x in k} sum_y pi_k(y) ||Dg(R_t) l(x, y)||^2 ),

mixed with the stratum weights ``omega_k = N_k / N`` (the uniform distribution
over items) with weight ``defensive`` (OASIS's epsilon-greedy step).
Items are drawn with replacement: a stratum from ``q``, then an item
uniformly within it, with weight ``omega_k / q_k``.  Binary pools only.
Under a stochastic oracle (OASIS's own setting) every draw is labeled afresh
and the Beta model counts every label.  The interval adds to the draws'
martingale variance the positives that may be left unseen in the strata
whose labels showed none (:mod:`~labelwise.designs.unseen_strata`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..draws import Draws, Sample
from ..estimators import Estimate, importance_moments, larger_variance, make_estimate
from ..estimators.missed import missed_count_variance
from ..measures import Measure
from ..oracle import score_prior
from ..oracle.calibration import block_quantiles, fit_platt, logits_of, platt_posterior
from ..partition import make_strata
from ..pool import Pool
from ..validation import check_int
from .base import Design, Sampler, check_share, check_system, design_scores
from .grouped import GroupedPool
from .unseen_strata import UNSEEN_BASIS, UnseenExceptions, unseen_exceptions

__all__ = ["OASISDesign", "OASISSampler"]


@dataclass(frozen=True, kw_only=True)
class OASISDesign(Design):
    """Stratified AIS for F-measures and other binary measures (the OASIS baseline).

    Parameters
    ----------
    n_strata : int
        Number of CSF score strata.
    defensive : float in (0, 1]
        Weight of the uniform distribution (the stratum weights) in the proposal.
    prior_strength : float
        Pseudo-labels per stratum in the Beta prior (centred on the mean probability).
    lam : float
        Shrinkage of the systems' probabilities (Yilmaz et al. 2021, eq. 13).
    system : int or "mean"
        Whose scores define the strata; ``"mean"``: the mean of every system's probability
        (:func:`~labelwise.designs.base.design_scores`).

    Under a stochastic oracle (OASIS's own setting) every draw is its own
    label request and the estimate is of the measure's expectation over the
    oracle's labels.
    """

    name = "oasis"
    n_strata: int = 30
    defensive: float = 1e-3
    prior_strength: float = 2.0
    lam: float = 1.0
    system: int | str = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("n_strata", self.n_strata, 1)
        check_system(self.system)
        check_share("lam", self.lam)
        if self.prior_strength <= 0:
            raise ValueError(f"prior_strength: must be positive, got {self.prior_strength}")
        if not 0.0 < self.defensive <= 1.0:
            raise ValueError(f"defensive: must lie in (0, 1], got {self.defensive}")

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> OASISSampler:
        if pool.n_classes != 2:
            raise ValueError("oasis: binary pools only; use design 'ais' for multi-class pools")
        return OASISSampler(self, pool, measure, oracle, rng)


class OASISSampler(Sampler):
    """One run of :class:`OASISDesign`: a Beta-Bernoulli model per stratum and the proposal it implies."""

    def __init__(self, design: OASISDesign, pool: Pool, measure: Measure, oracle: str, rng: np.random.Generator):
        super().__init__(pool, measure, oracle, rng)
        self.defensive = design.defensive
        strata = make_strata(design_scores(pool, design.system), design.n_strata)
        self.strata = strata.assignment
        self.sizes = strata.sizes.astype(float)
        self.groups = GroupedPool(self.strata, measure.loss_key(pool.outputs()))
        G = self.groups.n_groups
        self._rep_out = pool.outputs(self.groups.rep)
        self._rep_loss = np.stack([measure.loss(self._rep_out, np.full(G, c)) for c in (0, 1)])  # (2, G, d)
        p1 = score_prior(pool, design.lam)[:, 1]
        mean_p = np.bincount(self.strata, weights=p1) / self.sizes
        self._logits = logits_of(p1)
        self._logit_quantiles = block_quantiles(self.groups.of_item, self._logits, G)  # (G, 16)
        self._alike: dict[Measure, tuple[GroupedPool, np.ndarray, np.ndarray]] = {}  # other measures' groups
        self._a0 = design.prior_strength * mean_p
        self._b0 = design.prior_strength * (1 - mean_p)
        K = self.sizes.size
        self._pos = np.zeros(K)
        self._n = np.zeros(K)
        self._dirty = True

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        self.groups.mark_labeled(np.asarray(items, dtype=np.int64))
        h = self.strata[items]
        self._n += np.bincount(h, minlength=self.sizes.size)
        self._pos += np.bincount(h, weights=(np.asarray(labels) == 1).astype(float), minlength=self.sizes.size)
        self._dirty = True

    def _update(self) -> None:
        if not self._dirty:
            return
        N = self.pool.n_items
        pi1 = (self._a0 + self._pos) / (self._a0 + self._b0 + self._n)  # posterior mean positive rate
        pi = np.stack([1 - pi1, pi1])[:, self.groups.block]  # (2, G)
        size = self.groups.sizes.astype(float)
        R = np.einsum("g,cg,cgd->d", size, pi, self._rep_loss) / N
        G = self.groups.n_groups
        inf = np.stack([self.measure.influence_norm_sq(self._rep_out, np.full(G, c), R) for c in (0, 1)])
        second = np.bincount(self.groups.block, weights=size * np.sum(pi * inf, axis=0),
                             minlength=self.sizes.size)
        omega = self.sizes / N
        v = omega * np.sqrt(np.maximum(second / self.sizes, 0.0))
        q_opt = v / v.sum() if v.sum() > 0 and np.isfinite(v.sum()) else omega
        self._q = self.defensive * omega + (1 - self.defensive) * q_opt
        self._dirty = False

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        """A stratum from q, then an item uniformly within it (deterministic oracle: draws of labeled
        items aggregated; stochastic: every draw a label)."""
        self._update()
        N = self.pool.n_items
        q_group = self._q[self.groups.block] / self.sizes[self.groups.block]
        if self.stochastic:
            draws = self.groups.draw_any(q_group, n_new, N, self.rng)
            return Draws(draws.items, draws.weight, draws.prob, self.strata[draws.items])
        q_lab = q_group[self.groups.of_item[self.groups.labeled_items]]
        draws = self.groups.draw(q_group, q_lab, n_new, N, self.rng)
        return Draws(draws.items, draws.weight, draws.prob, self.strata[draws.items], draws.count)

    def _alike_groups(self, measure: Measure) -> tuple[GroupedPool, np.ndarray, np.ndarray]:
        """Groups of alike items for ``measure`` (within a stratum, the same loss at each label), their losses
        at label 0 and 1 ``(2, G, d)`` and their logits' quantiles ``(G, 16)``: :attr:`groups` for the target
        measure, built for another."""
        if measure is self.measure:
            return self.groups, self._rep_loss, self._logit_quantiles
        if measure not in self._alike:  # computed once per measure: none of it depends on the labels
            groups = GroupedPool(self.strata, measure.loss_key(self.pool.outputs()))
            out = self.pool.outputs(groups.rep)
            losses = np.stack([measure.loss(out, np.full(groups.n_groups, c)) for c in (0, 1)])
            self._alike[measure] = (groups, losses, block_quantiles(groups.of_item, self._logits, groups.n_groups))
        return self._alike[measure]

    def unseen_exceptions(self, measure: Measure, sample: Sample, jacobian: np.ndarray) -> UnseenExceptions:
        """The exceptions that may be left in the groups of alike items whose labels showed none
        (:func:`~labelwise.designs.unseen_strata.unseen_exceptions`), ``jacobian`` being ``Dg(R-hat)``."""
        d = sample.draws
        positive = np.asarray(sample.labels) == 1
        if sample.excluded is not None:
            positive &= ~sample.excluded
        # each labeled item once and unweighted: the draws select on the scores alone, so the labels given the
        # scores follow the Platt model whatever the proposal (design weights would only add variance)
        items, first = np.unique(d.items, return_index=True)
        logits, labels = self._logits[items], positive[first].astype(float)
        fit = fit_platt(logits, labels)
        groups, alike, quantiles = self._alike_groups(measure)
        labeled = np.bincount(groups.of_item[items], minlength=groups.n_groups)
        return unseen_exceptions(np.einsum("cgd,md->cgm", alike, jacobian), groups.sizes - labeled, quantiles, fit,
                                 platt_posterior(logits, labels, fit=fit), positive, groups.of_item[d.items],
                                 self.pool.n_items)

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        """Importance-sampling estimate with a covariance that holds under adaptation and on rare strata.

        The variance is that of the normal interval covering the error
        ``X + j K`` (:mod:`~labelwise.designs.unseen_strata`):

        * ``X``, normal with the martingale variance of the draws at the
          weights they were drawn with, ``(1/n^2) sum_j (w_j u_j - r)^2`` (no
          reweighting to the current proposal: Marchant & Rubinstein (KDD
          2021) 3.3.2's ``c_j = q_{j-1} / q_n`` gives the variance the draws
          would have had under the final proposal, which on a pool whose
          early proposals were poor understates the error several-fold), and
        * ``K``, the exceptions (positives among low scores) left unlabeled in
          the strata whose labels showed none, which the martingale variance
          cannot see, counted under the scores recalibrated to the labels
          with the recalibration's uncertainty.
        """
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        losses = self.losses(measure, sample)
        R, _, cov = importance_moments(measure, losses, d.weight, counts=d.count)
        J = measure.jacobian(R)
        if not (np.isfinite(cov).all() and np.isfinite(J).all()):
            return make_estimate(measure, R, cov, sample.n_labels, d.n_draws, level)
        unseen = self.unseen_exceptions(measure, sample, J)
        var = missed_count_variance(np.diag(cov), unseen.jump, level, unseen.means[:, None], unseen.weights)
        return make_estimate(measure, R, larger_variance(cov, np.diag(var)), sample.n_labels, d.n_draws, level,
                             basis=UNSEEN_BASIS)
