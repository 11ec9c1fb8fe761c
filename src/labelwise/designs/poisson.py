"""Optimal inclusion probabilities for Poisson (Bernoulli) sampling (Yilmaz et al. (2021), section 3.1).

With independent inclusion indicators ``s_n ~ Bernoulli(b_n)`` the error of
the Horvitz-Thompson-type estimator (Yilmaz et al. (2021) eq. 18) depends on ``b``
through ``sum_n h_n^2 / b_n`` (eq. 25).  Minimising it subject to
``sum_n b_n = M`` and ``0 <= b_n <= 1`` is a water-filling problem
(appendix B.1, Algorithm 3): the items with the largest deviations ``h`` are
taken with certainty (``b = 1``) and the others get ``b_n = h_n (M - k) /
(H - S_k)``, with ``k`` the number of certain items and ``S_k`` their total
deviation (eqs. 74-77).

The ``poisson`` design labels exactly ``M`` items, because annotators are
budgeted in whole labels: the ``M`` items of smallest ``u / b`` with
``u = H(item_id, seed)`` the shared item hash (sequential Poisson sampling,
Ohlsson, J. Official Statistics 14, 1998;
:func:`~labelwise.designs.hashed.first_by_ratio`), handed out in increasing
``u / b``, a uniformly random order, so any prefix of ``k`` labels is a
sample with inclusion probabilities ``b_n k / M`` and the Horvitz-Thompson
estimate stays unbiased at every checkpoint (up to the sequential scheme's
small departure from ``b``).  On a binary pool whose measure depends on the
predictions only, ``b`` is planned on score blocks
(:func:`block_inclusion_probabilities`), as on an engine pool, so both draw
the same items for the same seed; other pools plan ``b`` per item.  Sessions
written before this draw keep their randomised systematic sample
(:func:`systematic_sample`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..draws import Draws, Sample
from ..engines.blocks import BlockSummary, depends_on_predictions_only, memory_blocks
from ..engines.hashing import generator_seed, uniforms_below
from ..estimators import (
    Estimate,
    horvitz_thompson_moments,
    horvitz_thompson_totals_covariance,
    make_estimate,
    with_fieller,
)
from ..measures import Measure
from ..oracle import score_prior
from ..pool import Pool
from .base import Design, Sampler, check_share
from .hashed import first_by_ratio, hash_keys
from .importance import prior_deviation
from .poisson_blocks import block_model, block_model_estimate

if TYPE_CHECKING:
    from ..engines.online import BlockRounds

__all__ = ["POISSON_BASIS", "PoissonDesign", "PoissonSampler", "block_deviations", "block_inclusion_probabilities",
           "defensive_deviations", "inclusion_probabilities", "systematic_sample"]

#: What the interval of a sample drawn by the shared item hash assumes, shown with every estimate.
POISSON_BASIS = ("design-based: Horvitz-Thompson over independent (Poisson) inclusions drawn by the shared item hash; "
                 "the normal approximation needs enough labeled positives")


def inclusion_probabilities(h: np.ndarray, budget: float, counts: np.ndarray | None = None) -> np.ndarray:
    """Inclusion probabilities minimising ``sum h^2 / b`` with ``sum b = budget`` (Yilmaz et al. (2021) Algorithm 3).

    Parameters
    ----------
    h : ndarray, shape (N,)
        Non-negative deviations ``|h_n|`` (Yilmaz et al. (2021) eq. 12).
    budget : float
        Expected number of items to label, ``M``.
    counts : ndarray, shape (N,), optional
        ``h[g]`` stands for ``counts[g]`` items with that deviation (groups
        of interchangeable items): the sums become ``sum counts h^2 / b`` and
        ``sum counts b``, and the result is per group.

    Returns
    -------
    ndarray, shape (N,)
        ``b`` in [0, 1].  ``b`` sums to ``min(budget, N)`` unless fewer than
        ``budget`` items have ``h > 0``: items with ``h = 0`` carry no error
        and get ``b = 0``, so then every item with ``h > 0`` is taken with
        certainty and the sum falls short.

    Notes
    -----
    With ``h`` sorted in decreasing order and ``S_k`` the sum of the ``k``
    largest, the optimum takes the smallest ``k`` with
    ``h_(k+1) (M - k) <= H - S_k`` (eq. 77 with the largest uncertain
    ``b <= 1``), found for every ``k`` at once from cumulative sums.  Only
    the ``ceil(M)`` largest deviations can be certain, so they are found by
    partitioning and only they are sorted: O(N + M log M), vectorised.
    """
    h = np.asarray(h, dtype=float)
    if h.ndim != 1:
        raise ValueError(f"h: expected a 1-d array, got shape {h.shape}")
    if not np.all(np.isfinite(h)) or np.any(h < 0):
        raise ValueError("h: deviations must be finite and non-negative")
    if not budget > 0:
        raise ValueError(f"budget: must be positive, got {budget}")
    if counts is not None:
        return _grouped_inclusion_probabilities(h, budget, np.asarray(counts, dtype=float))
    N = h.size
    positive = int(np.count_nonzero(h))
    if budget >= positive:
        return (h > 0).astype(float)
    # only the ceil(M) largest deviations can saturate (k < M): partition, then sort just those
    K = min(N, int(np.ceil(budget)))
    top = np.argpartition(-h, K - 1)[:K] if K < N else np.arange(N)
    top = top[np.argsort(-h[top], kind="stable")]
    hs = h[top]
    total = h.sum()
    taken = np.concatenate([[0.0], np.cumsum(hs)[:-1]])  # S_k for k = 0..K-1
    k = np.arange(K)
    ok = hs * (budget - k) <= total - taken
    # ok holds at k = ceil(M) - 1 at the latest: there M - k <= 1 and h_(k+1) <= H - S_k
    first = int(np.argmax(ok))
    b = np.minimum(h * (budget - first) / (total - taken[first]), 1.0)
    b[top[:first]] = 1.0
    return b


def _grouped_inclusion_probabilities(h: np.ndarray, budget: float, counts: np.ndarray) -> np.ndarray:
    """:func:`inclusion_probabilities` for ``counts[g]`` items of deviation ``h[g]`` each.

    The saturated items are whole groups, so the condition of Algorithm 3
    is checked at group boundaries: with groups in decreasing ``h``, ``k``
    items in the groups before ``j`` and ``S`` their deviations, the first
    group ``j`` with ``k < M`` and ``h_j (M - k) <= H - S`` starts the
    unsaturated ones.  It exists: the group holding item ``ceil(M)`` passes.
    """
    if counts.shape != h.shape or np.any(counts < 0):
        raise ValueError(f"counts: expected {h.shape[0]} non-negative counts, got shape {counts.shape}")
    if budget >= counts[h > 0].sum():
        return (h > 0).astype(float)
    order = np.argsort(-h, kind="stable")
    hs, cs = h[order], counts[order]
    before = np.concatenate([[0.0], np.cumsum(cs)[:-1]])  # k for each group
    taken = np.concatenate([[0.0], np.cumsum(cs * hs)[:-1]])  # S_k
    total = float(counts @ h)
    ok = (before < budget) & (hs * (budget - before) <= total - taken)
    first = int(np.argmax(ok))
    b = np.minimum(h * (budget - before[first]) / (total - taken[first]), 1.0)
    b[order[:first]] = 1.0
    return b


def defensive_deviations(h: np.ndarray, defensive: float, counts: np.ndarray | None = None) -> np.ndarray:
    """Deviations mixed with a constant: ``(1 - defensive) h / mean(h) + defensive``.

    Inclusion probabilities proportional to the result put the share
    ``defensive`` of the budget uniformly (before water-filling saturates
    the largest), so every item keeps a positive probability: the defensive
    mixture of Marchant & Rubinstein (KDD 2021, sec. 3.3.1) for Poisson
    sampling.  ``counts`` weights the mean (groups of items, see
    :func:`inclusion_probabilities`); groups with no item get 0.
    """
    weight = np.ones_like(h) if counts is None else np.asarray(counts, dtype=float)
    mean = float(weight @ h) / weight.sum()
    mixed = (1.0 - defensive) * h / mean + defensive if mean > 0 else np.ones_like(h)
    return np.where(weight > 0, mixed, 0.0)


def block_inclusion_probabilities(summary: BlockSummary, measure: Measure, budget: float,
                                  system_names: tuple[str, ...], lam: float, defensive: float) -> np.ndarray:
    """:func:`inclusion_probabilities` of the score blocks of a binary pool, one ``b`` per block.

    Each block stands for its items by one representative
    (:meth:`~labelwise.engines.blocks.BlockSummary.representatives`): the
    deviations ``h`` (Yilmaz et al. (2021) eq. 12) under the prior shrunk by
    ``lam`` (eq. 13), at the risk the prior expects over the pool (eq. 14),
    mixed with the uniform share ``defensive`` (:func:`defensive_deviations`).

    Parameters
    ----------
    summary : BlockSummary
    measure : Measure
    budget : float
        ``M``, at most the pool's size.
    system_names : tuple of str
    lam, defensive : float

    Returns
    -------
    ndarray, shape (G,)
        ``b`` in [0, 1] with ``sum counts b = M``.
    """
    counts = summary.counts.astype(float)
    h = block_deviations(summary, measure, system_names, lam)
    return inclusion_probabilities(defensive_deviations(h, defensive, counts), budget, counts=counts)


def block_deviations(summary: BlockSummary, measure: Measure, system_names: tuple[str, ...],
                     lam: float) -> np.ndarray:
    """The deviation ``h`` (Yilmaz et al. (2021) eq. 12) of every score block's items, from one representative
    per block under the prior shrunk by ``lam`` (eq. 13), at the risk the prior expects over the pool (eq. 14)."""
    counts = summary.counts.astype(float)
    rep = summary.representatives(system_names)
    prior = score_prior(rep, lam)
    R = measure.expected_loss_sum(rep.outputs(), prior * counts[:, None]) / counts.sum()
    return prior_deviation(measure, rep, prior, R)


def systematic_sample(b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Randomised systematic sample: item n is included with probability ``b_n`` exactly.

    The pool is put in random order and the items whose cumulative ``b``
    crosses ``u, u + 1, u + 2, ...`` (``u`` uniform on [0, 1)) are taken, so the
    sample size is ``sum b`` (rounded) with no variance.  Returns positions in
    random order.
    """
    order = rng.permutation(b.size)
    cum = np.cumsum(b[order])
    u = rng.random()
    hits = np.floor(cum - u) - np.floor(np.concatenate([[0.0], cum[:-1]]) - u)
    chosen = order[hits > 0]
    return rng.permutation(chosen)


@dataclass(frozen=True, kw_only=True)
class PoissonDesign(Design):
    """Fixed-size optimal Poisson sampling for ratio metrics and generalized measures.

    Yilmaz et al., "Sample Efficient Model Evaluation" (2021), sec. 3.

    Parameters
    ----------
    budget : int, optional
        ``M``, the number of labels the inclusion probabilities are optimised
        for; by default the budget the run is started with
        (:meth:`Session.run`).
    lam : float in [0, 1]
        Shrinkage of the systems' probabilities toward 1/C (eq. 13).
    defensive : float in (0, 1)
        Share of the budget spread uniformly (:func:`defensive_deviations`),
        so every item keeps a positive inclusion probability (sample reuse,
        wrong priors) while the largest ones still saturate at ``b = 1``.

    Under a stochastic oracle (noisy or several annotators) the estimate is
    of the measure's expectation over the oracle's labels, and its error
    counts the label noise of every sampled item, the certain ones included
    (eq. 27).  Each item is still labeled once.
    """

    name = "poisson"
    with_replacement = False
    budget: int | None = None
    lam: float = 1.0
    defensive: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        check_share("lam", self.lam)
        if self.budget is not None and self.budget < 1:
            raise ValueError(f"budget: must be at least 1, got {self.budget}")
        if not 0.0 < self.defensive < 1.0:
            raise ValueError(f"defensive: must lie in (0, 1), got {self.defensive}")

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> PoissonSampler:
        return PoissonSampler(pool, measure, oracle, rng, score_prior(pool, self.lam), self, self.budget or budget)


class PoissonSampler(Sampler):
    """One run of :class:`PoissonDesign`: a fixed-size sample planned at the first draw, handed out in order.

    The hash seed is :func:`~labelwise.engines.hashing.generator_seed` of the
    run's generator (the session's seed, as an engine session hashes with),
    taken when the run starts and anew by :meth:`copy`.
    """

    #: What :meth:`state` records of the draw (sessions without it drew a systematic sample).
    HASHED = "first by u/b"

    def __init__(self, pool: Pool, measure: Measure, oracle: str, rng: np.random.Generator, prior: np.ndarray,
                 design: PoissonDesign, budget: int | None):
        super().__init__(pool, measure, oracle, rng)
        self.prior, self.design, self.budget = prior, design, budget
        self._seed = generator_seed(rng)
        self._hashed = True
        self._queue: np.ndarray | None = None
        self._used = 0
        # the plan of the budget M, made once and shared by the copies of a simulation
        self._planned: tuple[float, tuple[np.ndarray, np.ndarray | None, np.ndarray | None]] | None = None
        # the oracle model of the score blocks behind the interval (:func:`.poisson_blocks.block_model_estimate`)
        self._model: BlockRounds | None = None
        if budget is not None:
            self._plan(min(budget, pool.n_items))

    def copy(self, rng: np.random.Generator) -> PoissonSampler:
        new = super().copy(rng)
        new._seed = generator_seed(rng)
        return new

    def state(self) -> dict:
        return {"seed": self._seed, "M": self.budget, **({"draw": self.HASHED} if self._hashed else {})}

    def set_state(self, states: list[dict]) -> None:
        state = states[-1] if states else {}
        if state.get("seed") is not None:
            self.budget = state["M"]
            self._build_queue(int(state["seed"]), hashed=state.get("draw") == self.HASHED)

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        self._used += len(items)

    def _item_deviations(self) -> np.ndarray:
        """Defensive deviations of every item (the per-item plan)."""
        h = prior_deviation(self.measure, self.pool, score_prior(self.pool, self.design.lam))
        return defensive_deviations(h, self.design.defensive)

    def _plan(self, M: float) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """``b`` per group, items per group and the group of every item (``None``: one item per group)."""
        if self._planned is None or self._planned[0] != M:
            self._planned = M, self._new_plan(M)
        return self._planned[1]

    def _new_plan(self, M: float) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """:meth:`_plan`: on score blocks when they stand for their items' losses, else per item."""
        pool = self.pool
        if pool.n_classes == 2 and depends_on_predictions_only(self.measure, pool.outputs()):
            keys, summary = memory_blocks(pool)
            b = block_inclusion_probabilities(summary, self.measure, M, pool.system_names, self.design.lam,
                                              self.design.defensive)
            self._model = block_model(self.design, summary, self.measure, pool.system_names)
            return b, summary.counts, np.searchsorted(summary.keys, keys)
        return inclusion_probabilities(self._item_deviations(), M), None, None

    def _build_queue(self, seed: int, hashed: bool = True) -> None:
        self._seed, self._hashed = seed, hashed
        M = min(self.budget, self.pool.n_items)
        if not hashed:
            self.b = inclusion_probabilities(self._item_deviations(), M)
            self._queue = systematic_sample(self.b, np.random.default_rng(seed))
            return
        b, counts, group = self._plan(M)
        self.b = b if group is None else b[group]
        keys = hash_keys(self.pool)

        def find(bound: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            at, _ = uniforms_below(keys, seed, bound if group is None else bound[group])
            return at, self.b[at], keys[at]

        self._queue = first_by_ratio(find, seed, b, M, counts)[0]

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        if self._queue is None:
            if self.budget is None:
                raise ValueError("poisson: give budget=M (the number of labels to plan for) or use Session.run")
            self._build_queue(self._seed)
        if self._used + n_new > self._queue.size:
            raise ValueError(
                f"poisson: the design was planned for {self._queue.size} labels and {self._used} are used; "
                f"{n_new} more were asked for. Start a session with a larger budget"
            )
        items = self._queue[self._used:self._used + n_new]
        b = self.b[items]
        return Draws(items, 1.0 / b, b)

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        """Horvitz-Thompson estimate (eq. 18) with the Poisson-sampling covariance (eqs. 25-28).

        The first ``k`` of the ``|S|`` planned items have inclusion
        probabilities ``pi_n = b_n k / |S|``
        (:func:`~labelwise.estimators.horvitz_thompson_moments`).  Under a
        stochastic oracle ``<u>`` is taken under the design's prior.  For the
        design's measure on score blocks under a deterministic oracle, the
        items not labeled yet enter through the oracle model
        (:func:`block_model_estimate`).  For a ratio of totals the interval
        also holds Fieller's (:func:`~labelwise.estimators.with_fieller`).
        """
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        pi = np.minimum(self.b[d.items] * len(d) / self._queue.size, 1.0)
        expected = None
        if self.stochastic:
            outputs = self.pool.outputs(d.items)
            expected = sum(self.prior[d.items, c, None] * measure.loss(outputs, np.full(len(d), c))
                           for c in range(self.prior.shape[1]))
        losses = self.losses(measure, sample)
        R, cov = horvitz_thompson_moments(measure, losses, pi, self.pool.n_items, expected)
        est = make_estimate(measure, R, cov, sample.n_labels, len(d), level, basis=POISSON_BASIS if self._hashed else "")
        if self._model is not None and self._hashed and measure == self.measure and not self.stochastic:
            b_blocks, _, group = self._plan(min(self.budget, self.pool.n_items))
            known = None if sample.excluded is None else ~sample.excluded
            est = block_model_estimate(est, measure, self._model, b_blocks, self._queue.size, group[d.items],
                                       sample.labels, losses, pi, level, known)
        else:
            est = self.with_unseen_labels(est, measure, sample)
        return with_fieller(est, measure, lambda: horvitz_thompson_totals_covariance(losses, pi, self.pool.n_items))
