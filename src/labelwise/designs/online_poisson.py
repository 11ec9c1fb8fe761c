"""Online (multi-round) optimal Poisson sampling (seed 002 appendix E, generalized).

Labels arrive a batch at a time.  Round r draws among the items not yet
labeled, with inclusion probabilities ``b_r`` from the water-filling of seed
002 Algorithm 3 applied to the current deviations
``h_n = sqrt(E_pi ||Dg(R_t) l(x_n, y)||^2)`` under the Dirichlet-tree model
of the oracle (updated from every label so far, as in ``ais``), so that the
round's expected -- and, with randomised systematic sampling, exact --
number of new labels is the batch size.

Every round gives an unbiased estimate of the pool's total loss,

    T_r = (losses of the items labeled before round r) + sum_{n in S_r} l_n / b_rn,

because only the unlabeled part is unknown and round r samples it with
known probabilities.  The estimate is a weighted average
``R-hat = sum_r w_r T_r / N`` with weights ``w_r ∝ 1 / V_r`` fixed from the
model's predicted variance of round r before it is drawn, and
``cov(R-hat) = sum_r w_r^2 cov(T_r) / N^2`` (the rounds are martingale
differences), each ``cov(T_r)`` by the Poisson-sampling estimator of seed
002 eqs. 25-28; G and its covariance follow by the delta method.  Items
that every round would take with certainty carry no variance, so the
estimate becomes exact once every informative item is labeled.
"""

from __future__ import annotations

import numpy as np

from ..estimators import Estimate, make_estimate
from ..measures import Measure
from ..pool import Pool
from .adaptive import AISDesign
from .base import Draws, Sample
from .importance import _no_labels
from .poisson import inclusion_probabilities, systematic_sample

__all__ = ["OnlinePoissonDesign"]


class OnlinePoissonDesign(AISDesign):
    """Multi-round optimal Poisson sampling with a Dirichlet-tree oracle model.

    Parameters
    ----------
    floor : float
        Every deviation is raised by ``floor`` times the mean deviation of the
        round, so every unlabeled item keeps a positive inclusion probability.
    **model
        Model options shared with :class:`AISDesign` (``depth``, ``branching``,
        ``n_blocks``, ``prior_strength``, ``lam``, ``partition``, ``system``).
    """

    name = "online-poisson"
    with_replacement = False

    def __init__(self, floor: float = 0.1, depth: int = 1, branching: int = 256, n_blocks: int = 256,
                 prior_strength: float = 1.0, lam: float = 1.0, partition: str = "score", system: int = 0):
        if floor <= 0:
            raise ValueError(f"floor: must be positive, got {floor}")
        super().__init__(depth=depth, branching=branching, n_blocks=n_blocks, prior_strength=prior_strength,
                         lam=lam, partition=partition, system=system)
        self.floor = float(floor)

    def params(self) -> dict:
        return {"floor": self.floor, "depth": self.depth, "branching": self.branching, "n_blocks": self.n_blocks,
                "prior_strength": self.prior_strength, "lam": self.lam, "partition": self.partition,
                "system": self.system}

    def prepare(self, pool: Pool, measure: Measure) -> None:
        super().prepare(pool, measure)
        self._rounds: list[tuple[int, float]] = []  # (items drawn, predicted variance) per round

    def state(self) -> dict:
        return {"rounds": [[n, v] for n, v in self._rounds]}

    def set_state(self, state: dict) -> None:
        self._rounds = [(int(n), float(v)) for n, v in state.get("rounds", [])]

    def draw(self, n_new: int, labeled: np.ndarray, rng: np.random.Generator) -> Draws:
        """Round r: water-filling inclusion probabilities over unlabeled items, exactly ``n_new`` drawn."""
        pi, inf_g = self._group_influence()
        h_group = np.sqrt(np.maximum(np.sum(pi.T * inf_g, axis=0), 0.0))
        unlabeled = np.flatnonzero(~self.groups.known)
        h = h_group[self.groups.of_item[unlabeled]]
        h_floor = h + self.floor * (h.mean() if h.mean() > 0 else 1.0)
        b = inclusion_probabilities(h_floor, n_new)
        chosen = systematic_sample(b, rng)
        # the model's variance of this round's estimate of the total (seed 002 eq. 25), fixed before drawing
        predicted = float(np.sum((1.0 / b - 1.0) * h**2))
        self._rounds.append((chosen.size, predicted))
        b_chosen = b[chosen]
        return Draws(unlabeled[chosen], 1.0 / b_chosen, b_chosen,
                     np.full(chosen.size, len(self._rounds) - 1, dtype=np.int64))

    def estimate(self, measure: Measure, pool: Pool, sample: Sample, level: float = 0.95) -> Estimate:
        """Weighted average of the rounds' unbiased totals (see the module docstring)."""
        d = sample.draws
        if len(d) == 0:
            return _no_labels(measure, level)
        N = pool.n_items
        losses = measure.loss(pool.outputs(d.items), sample.labels)
        rounds = np.unique(d.stratum)
        # a round cut short by the labeled prefix is a random subset of it: b scaled by k / n
        sizes = np.array([self._rounds[r][0] for r in rounds], dtype=float)
        counts = np.bincount(d.stratum, minlength=rounds.max() + 1)[rounds]
        pi = np.minimum(d.prob * (counts / sizes)[np.searchsorted(rounds, d.stratum)], 1.0)
        totals = []
        for r in rounds:
            before = d.stratum < r
            now = d.stratum == r
            totals.append(losses[before].sum(axis=0) + (losses[now] / pi[now, None]).sum(axis=0))
        totals = np.array(totals) / N  # (rounds, d)
        predicted = np.array([self._rounds[r][1] for r in rounds])
        inv = 1.0 / np.maximum(predicted, 1e-300)
        w = inv / inv.sum()
        R = w @ totals
        with np.errstate(divide="ignore", invalid="ignore"):
            u = losses @ measure.jacobian(R).T  # (n, m)
            scale = (1.0 - pi) / pi**2 * w[np.searchsorted(rounds, d.stratum)] ** 2
            cov = (u.T * scale) @ u / N**2
        return make_estimate(measure, R, cov, sample.n_labels, len(d), level)
