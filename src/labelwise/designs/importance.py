"""Passive sampling and static importance sampling (with replacement).

``importance`` draws from the asymptotically optimal proposal of seed 001
Prop. 1 (eq. 5), ``q*(x) ∝ p(x) sqrt(E_pi ||Dg(R0) l(x, y)||^2)``, where the
expectation is over a prior ``pi(y|x)`` from the systems' probabilities
shrunk by ``lam`` (seed 002 eq. 13) and ``R0`` is the risk under that prior
(the pre-sampling estimate, seed 002 eq. 14).  For ratio metrics this is
seed 002's ``q ∝ |h_n|`` of eq. (12).  A defensive mixture with p(x) (seed
001 3.3.1) keeps every item's probability positive, which makes the
estimator valid for any other measure (sample reuse) and protects against
a wrong prior.  ``passive`` is the uniform proposal.
"""

from __future__ import annotations

import numpy as np

from ..estimators import Estimate, importance_moments, make_estimate
from ..measures import Measure
from ..oracle import score_prior
from ..pool import Pool
from .base import Design, Draws, Sample, check_oracle
from .sampling import draw_with_replacement, sample_from_cdf

__all__ = ["ImportanceDesign", "PassiveDesign", "optimal_proposal", "prior_deviation"]


def prior_deviation(measure: Measure, pool: Pool, label_probs: np.ndarray,
                    R: np.ndarray | None = None) -> np.ndarray:
    """``sqrt(E_pi ||Dg(R) l(x, y)||^2)`` for every item: the deviation ``|h_n|`` of seed 002 eq. (12).

    For a ratio metric ``Dg(R) l = (f - F g) / R_2``, so this is seed 002's
    ``h_n`` up to a constant; for a generalized measure it is the integrand of
    seed 001 eq. (5).

    Parameters
    ----------
    measure : Measure
    pool : Pool
    label_probs : ndarray, shape (N, C)
        Model of ``p(y|x)`` for every item.
    R : ndarray, shape (d,), optional
        Where to evaluate the Jacobian; by default the risk under the model
        (seed 002 eq. 14).
    """
    N = pool.n_items
    outputs = pool.outputs()
    if R is None:
        R = measure.expected_loss_sum(outputs, label_probs) / N
    second_moment = np.zeros(N)
    for c in range(label_probs.shape[1]):
        second_moment += label_probs[:, c] * measure.influence_norm_sq(outputs, np.full(N, c), R)
    return np.nan_to_num(np.sqrt(np.maximum(second_moment, 0.0)), nan=0.0, posinf=0.0)


def optimal_proposal(measure: Measure, pool: Pool, label_probs: np.ndarray, R: np.ndarray | None = None,
                     defensive: float = 0.1) -> np.ndarray:
    """Asymptotically optimal IS proposal under a label model (seed 001 eq. 5, Prop. 1).

    ``q ∝ prior_deviation`` (seed 002: ``q ∝ |h_n|``), mixed with p(x) = 1/N
    with weight ``defensive`` (seed 001 3.3.1).

    Returns
    -------
    ndarray, shape (N,)
        A probability vector with every entry at least ``defensive / N``.
    """
    if not 0.0 < defensive <= 1.0:
        raise ValueError(f"defensive: must lie in (0, 1], got {defensive}")
    N = pool.n_items
    v = prior_deviation(measure, pool, label_probs, R)
    total = v.sum()
    q = np.full(N, 1.0 / N) if total <= 0 else v / total
    return (1.0 - defensive) * q + defensive / N


class ImportanceDesign(Design):
    """Static importance sampling with the asymptotically optimal proposal.

    Parameters
    ----------
    lam : float in [0, 1]
        Shrinkage of the systems' probabilities toward 1/C (seed 002 eq. 13).
        The default 1 trusts calibrated probabilities: under extreme
        imbalance any ``lam < 1`` gives every item a prior positive rate of at
        least ``(1 - lam) / 2``, which inflates the prior prevalence by orders
        of magnitude (on abt-buy, 1:1074, ``lam = 0.99`` raised the MSE of F1
        at 2000 labels from 4.1e-3 to 1.2e-2; see benchmarks/).
    defensive : float in (0, 1]
        Mixture weight of the uniform distribution (the defensive floor that
        keeps every item's probability at least ``defensive / N``).
    oracle : {"deterministic", "stochastic"}
        ``"stochastic"`` (noisy or several annotators): every draw is labeled
        afresh, so a batch is exactly ``n`` i.i.d. draws, and the estimate is of
        the measure's expectation over the oracle's labels.
    """

    name = "importance"

    def __init__(self, lam: float = 1.0, defensive: float = 0.1, oracle: str = "deterministic"):
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"lam: must lie in [0, 1], got {lam}")
        if not 0.0 < defensive <= 1.0:
            raise ValueError(f"defensive: must lie in (0, 1], got {defensive}")
        self.lam = float(lam)
        self.defensive = float(defensive)
        self.oracle = check_oracle(oracle)
        self.q: np.ndarray | None = None

    def params(self) -> dict:
        return {"lam": self.lam, "defensive": self.defensive, "oracle": self.oracle}

    def proposal(self, pool: Pool, measure: Measure) -> np.ndarray:
        """The static proposal q over the pool (sums to one)."""
        return optimal_proposal(measure, pool, score_prior(pool, self.lam), defensive=self.defensive)

    def prepare(self, pool: Pool, measure: Measure) -> None:
        if getattr(self, "_prepared_for", (None, None)) == (pool, measure):
            return  # the proposal is static: reuse it across runs (simulations)
        self._prepared_for = (pool, measure)
        self.q = self.proposal(pool, measure)
        self._cdf = np.cumsum(self.q)
        self._n = pool.n_items

    def draw(self, n_new: int, labeled: np.ndarray, rng: np.random.Generator) -> Draws:
        if self.oracle == "stochastic":
            items = sample_from_cdf(self._cdf, n_new, rng)
        else:
            items = draw_with_replacement(self._cdf, n_new, labeled, rng)
        q = self.q[items]
        return Draws(items, 1.0 / (self._n * q), q, np.full(items.size, -1, dtype=np.int64))

    def estimate(self, measure: Measure, pool: Pool, sample: Sample, level: float = 0.95) -> Estimate:
        d = sample.draws
        if len(d) == 0:
            return _no_labels(measure, level)
        losses = measure.loss(pool.outputs(d.items), sample.labels)
        R, _, cov = importance_moments(measure, losses, d.weight, counts=d.count)
        return make_estimate(measure, R, cov, sample.n_labels, d.n_draws, level)


class PassiveDesign(ImportanceDesign):
    """Passive sampling: uniform draws with replacement (seed 001 Definition 2).

    Parameters
    ----------
    oracle : {"deterministic", "stochastic"}
        As for :class:`ImportanceDesign`.
    """

    name = "passive"

    def __init__(self, oracle: str = "deterministic"):
        super().__init__(lam=0.0, defensive=1.0, oracle=oracle)

    def params(self) -> dict:
        return {"oracle": self.oracle}

    def proposal(self, pool: Pool, measure: Measure) -> np.ndarray:
        return np.full(pool.n_items, 1.0 / pool.n_items)


def _no_labels(measure: Measure, level: float) -> Estimate:
    nan = np.full(measure.dim, np.nan)
    return make_estimate(measure, nan, np.full((measure.size, measure.size), np.nan), 0, 0, level)
