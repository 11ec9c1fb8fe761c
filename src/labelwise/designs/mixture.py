"""Importance sampling whose proposal changed during the run: every draw weighted by the mixture of the proposals.

When a system is added to an ``importance`` session
(:mod:`labelwise.session_systems`) the proposal is recomputed for the
extended measure; the draws before came from the old one.  Weighting each
draw by its own proposal is unbiased, but an old draw of an item the old
proposal barely reached (one the new system alone predicts positive) gets a
huge weight.  The deterministic-mixture ("balance heuristic") weights of
multiple importance sampling -- Veach & Guibas, "Optimally combining
sampling techniques for Monte Carlo rendering", SIGGRAPH 1995; the joint
estimator of Chaganty, Paranjape, Liang & Manning, "Importance sampling for
unbiased on-demand evaluation of knowledge base population", EMNLP 2017,
sec. 3 -- weigh every draw by ``p(x) / sum_j (n_j / n) q_j(x)`` instead,
``n_j`` draws having come from proposal ``q_j``:

    E[(1/n) sum_j sum_{i from q_j} f(x_i) p(x_i) / q_mix(x_i)]
        = sum_x f(x) p(x) sum_j (n_j / n) q_j(x) / q_mix(x) = sum_x f(x) p(x),

unbiased, and never larger than ``p / ((n_j / n) q_j)`` for the proposal
that covers an item best.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..draws import Draws, Sample
from ..estimators import Estimate
from ..measures import Measure
from ..pool import Pool
from .importance import ProposalSampler

__all__ = ["MixtureProposalSampler"]


class MixtureProposalSampler(ProposalSampler):
    """Draws from the newest of several proposals; estimates with the mixture weights of all of them.

    Parameters
    ----------
    pool, measure, oracle, rng
        As :class:`~labelwise.designs.importance.ProposalSampler`.
    phases : list of (int, ndarray)
        ``(first round, proposal)`` of every proposal used, in order, the
        first from round 0; the last is the one drawn from.
    """

    def __init__(self, pool: Pool, measure: Measure, oracle: str, rng: np.random.Generator,
                 phases: list[tuple[int, np.ndarray]]):
        super().__init__(pool, measure, oracle, rng, phases[-1][1])
        self.starts = np.array([first for first, _ in phases], dtype=np.int64)
        self.proposals = np.stack([q for _, q in phases])  # (phases, N)

    def mixture_weights(self, draws: Draws) -> np.ndarray:
        """``p(x) / sum_j (n_j / n) q_j(x)`` of every draw, ``n_j`` its draws from proposal j."""
        phase = np.searchsorted(self.starts, draws.round, side="right") - 1
        n_j = np.bincount(phase, weights=draws.count, minlength=self.starts.size)
        q_mix = (n_j / n_j.sum()) @ self.proposals[:, draws.items]
        return 1.0 / (self.pool.n_items * q_mix)

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        if len(sample.draws) == 0:
            return Estimate.undefined(measure, level)
        draws = replace(sample.draws, weight=self.mixture_weights(sample.draws))
        return super().estimate(measure, replace(sample, draws=draws), level)
