"""OASIS: stratified adaptive importance sampling (Marchant & Rubinstein, VLDB 2017).

The baseline of seed 001 section 5.  The pool is cut into CSF score strata;
the oracle is modelled by a Beta-Bernoulli positive rate per stratum, with a
prior centred on the stratum's mean probability; after every batch the
stratum proposal is set to the asymptotically optimal one for a stochastic
oracle (seed 001 Prop. 2),

    q_k ∝ omega_k sqrt( mean_{x in k} sum_y pi_k(y) ||Dg(R_t) l(x, y)||^2 ),

mixed epsilon-greedily with the stratum weights ``omega_k = N_k / N``.
Items are drawn with replacement: a stratum from ``q``, then an item
uniformly within it, with weight ``omega_k / q_k``.  Binary pools only.
Under a stochastic oracle (OASIS's own setting) every draw is labeled afresh
and the Beta model counts every label.
"""

from __future__ import annotations

import numpy as np

from ..estimators import Estimate, importance_moments, make_estimate
from ..measures import Measure
from ..oracle import score_prior
from ..partition import make_strata
from ..pool import Pool
from .base import Design, Draws, Sample, check_oracle
from .grouped import GroupedPool
from .importance import _no_labels

__all__ = ["OASISDesign"]


class OASISDesign(Design):
    """Stratified AIS for F-measures and other binary measures (the OASIS baseline).

    Parameters
    ----------
    n_strata : int
        Number of CSF score strata.
    epsilon : float in (0, 1]
        Weight of the stratum weights in the epsilon-greedy mixture.
    prior_strength : float
        Pseudo-labels per stratum in the Beta prior (centred on the mean probability).
    lam : float
        Shrinkage of the systems' probabilities (seed 002 eq. 13).
    system : int
        Whose scores define the strata.
    oracle : {"deterministic", "stochastic"}
        ``"stochastic"`` (noisy or several annotators): every draw is its own
        label request and the estimate is of the measure's expectation over
        the oracle's labels.
    """

    name = "oasis"

    def __init__(self, n_strata: int = 30, epsilon: float = 1e-3, prior_strength: float = 2.0, lam: float = 1.0,
                 system: int = 0, oracle: str = "deterministic"):
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon: must lie in (0, 1], got {epsilon}")
        self.oracle = check_oracle(oracle)
        self.n_strata, self.epsilon = int(n_strata), float(epsilon)
        self.prior_strength, self.lam, self.system = float(prior_strength), float(lam), int(system)

    def params(self) -> dict:
        return {"n_strata": self.n_strata, "epsilon": self.epsilon, "prior_strength": self.prior_strength,
                "lam": self.lam, "system": self.system, "oracle": self.oracle}

    def prepare(self, pool: Pool, measure: Measure) -> None:
        if pool.n_classes != 2:
            raise ValueError("oasis: binary pools only; use design 'ais' for multi-class pools")
        if getattr(self, "_prepared_for", (None, None)) != (pool, measure):
            self._pool, self._measure, self._N = pool, measure, pool.n_items
            strata = make_strata(pool.primary_scores(self.system), self.n_strata)
            self.strata = strata.assignment
            self.sizes = strata.sizes.astype(float)
            self.groups = GroupedPool(self.strata, measure.loss_key(pool.outputs()))
            G = self.groups.n_groups
            rep = pool.outputs(self.groups.rep)
            self._rep_out = rep
            self._rep_loss = np.stack([measure.loss(rep, np.full(G, c)) for c in (0, 1)])  # (2, G, d)
            p1 = score_prior(pool, self.lam)[:, 1]
            mean_p = np.bincount(self.strata, weights=p1) / self.sizes
            self._a0 = self.prior_strength * mean_p
            self._b0 = self.prior_strength * (1 - mean_p)
            self._prepared_for = (pool, measure)
        K = self.sizes.size
        self.groups.reset()
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
        pi1 = (self._a0 + self._pos) / (self._a0 + self._b0 + self._n)  # posterior mean positive rate
        pi = np.stack([1 - pi1, pi1])[:, self.groups.block]  # (2, G)
        size = self.groups.sizes.astype(float)
        R = np.einsum("g,cg,cgd->d", size, pi, self._rep_loss) / self._N
        G = self.groups.n_groups
        inf = np.stack([self._measure.influence_norm_sq(self._rep_out, np.full(G, c), R) for c in (0, 1)])
        second = np.bincount(self.groups.block, weights=size * np.sum(pi * inf, axis=0),
                             minlength=self.sizes.size)
        omega = self.sizes / self._N
        v = omega * np.sqrt(np.maximum(second / self.sizes, 0.0))
        q_opt = v / v.sum() if v.sum() > 0 and np.isfinite(v.sum()) else omega
        self._q = self.epsilon * omega + (1 - self.epsilon) * q_opt
        self._cdf = np.cumsum(self._q)
        self._dirty = False

    def draw(self, n_new: int, labeled: np.ndarray, rng: np.random.Generator) -> Draws:
        """A stratum from q, then an item uniformly within it (deterministic oracle: draws of labeled
        items aggregated; stochastic: every draw a label)."""
        self._update()
        q_group = self._q[self.groups.block] / self.sizes[self.groups.block]
        if self.oracle == "stochastic":
            draws = self.groups.draw_any(q_group, n_new, self._N, rng)
            return Draws(draws.items, draws.weight, draws.prob, self.strata[draws.items])
        q_lab = q_group[self.groups.of_item[self.groups.labeled_items]]
        draws = self.groups.draw(q_group, q_lab, n_new, self._N, rng)
        return Draws(draws.items, draws.weight, draws.prob, self.strata[draws.items], draws.count)

    def estimate(self, measure: Measure, pool: Pool, sample: Sample, level: float = 0.95) -> Estimate:
        d = sample.draws
        if len(d) == 0:
            return _no_labels(measure, level)
        self._update()
        losses = measure.loss(pool.outputs(d.items), sample.labels)
        q_now = self._q[d.stratum] / self.sizes[d.stratum]
        R, _, cov = importance_moments(measure, losses, d.weight, d.prob / q_now, d.count)
        return make_estimate(measure, R, cov, sample.n_labels, d.n_draws, level)
