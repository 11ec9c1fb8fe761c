"""Optimal inclusion probabilities for Poisson (Bernoulli) sampling (seed 002, section 3.1).

With independent inclusion indicators ``s_n ~ Bernoulli(b_n)`` the error of
the Horvitz-Thompson-type estimator (seed 002 eq. 18) depends on ``b``
through ``sum_n h_n^2 / b_n`` (eq. 25).  Minimising it subject to
``sum_n b_n = M`` and ``0 <= b_n <= 1`` is a water-filling problem
(appendix B.1, Algorithm 3): the items with the largest deviations ``h`` are
taken with certainty (``b = 1``) and the others get ``b_n = h_n (M - k) /
(H - S_k)``, with ``k`` the number of certain items and ``S_k`` their total
deviation (eqs. 74-77).

The ``poisson`` design labels exactly ``M`` items with these inclusion
probabilities (randomised systematic sampling: a random order of the pool,
then a systematic sample on the cumulative ``b``), because annotators are
budgeted in whole labels; the items are handed out in random order, so any
prefix of ``k`` labels is a sample with inclusion probabilities
``b_n k / M`` and the Horvitz-Thompson estimate stays unbiased at every
checkpoint.
"""

from __future__ import annotations

import numpy as np

from ..estimators import Estimate, make_estimate
from ..measures import Measure
from ..oracle import score_prior
from ..pool import Pool
from .adaptive import larger_variance
from .base import Design, Draws, Sample, check_oracle
from .importance import _no_labels, prior_deviation

__all__ = ["PoissonDesign", "inclusion_probabilities", "systematic_sample"]


def inclusion_probabilities(h: np.ndarray, budget: float, counts: np.ndarray | None = None) -> np.ndarray:
    """Inclusion probabilities minimising ``sum h^2 / b`` with ``sum b = budget`` (seed 002 Algorithm 3).

    Parameters
    ----------
    h : ndarray, shape (N,)
        Non-negative deviations ``|h_n|`` (seed 002 eq. 12).
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


class PoissonDesign(Design):
    """Fixed-size optimal Poisson sampling for ratio metrics and generalized measures (seed 002, sec. 3).

    Parameters
    ----------
    budget : int, optional
        ``M``, the number of labels the inclusion probabilities are optimised
        for; by default the budget of the first :meth:`Session.run`.
    lam : float in [0, 1]
        Shrinkage of the systems' probabilities toward 1/C (seed 002 eq. 13).
    floor : float
        Every deviation is raised by ``floor`` times the mean deviation, so
        every item keeps a positive inclusion probability (sample reuse,
        wrong priors) while the largest ones still saturate at ``b = 1``.
    oracle : {"deterministic", "stochastic"}
        ``"stochastic"`` (noisy or several annotators): the estimate is of the
        measure's expectation over the oracle's labels, and its error counts
        the label noise of every sampled item, the certain ones included
        (seed 002 eq. 27, :meth:`estimate`).  Each item is still labeled once.
    """

    name = "poisson"
    with_replacement = False

    def __init__(self, budget: int | None = None, lam: float = 1.0, floor: float = 0.1,
                 oracle: str = "deterministic"):
        if budget is not None and budget < 1:
            raise ValueError(f"budget: must be at least 1, got {budget}")
        if floor <= 0:
            raise ValueError(f"floor: must be positive, got {floor}")
        self.budget, self.lam, self.floor = budget, float(lam), float(floor)
        self.oracle = check_oracle(oracle)

    def params(self) -> dict:
        return {"budget": self.budget, "lam": self.lam, "floor": self.floor, "oracle": self.oracle}

    def prepare(self, pool: Pool, measure: Measure) -> None:
        if getattr(self, "_prepared_for", (None, None)) != (pool, measure):
            self._prior = score_prior(pool, self.lam)
            h = prior_deviation(measure, pool, self._prior)
            self._h = h + self.floor * (h.mean() if h.mean() > 0 else 1.0)
            self._N = pool.n_items
            self._prepared_for = (pool, measure)
        self._M = self.budget
        self._seed: int | None = None
        self._queue: np.ndarray | None = None
        self._used = 0

    def plan(self, budget: int) -> None:
        if self._M is None:
            self._M = int(budget)

    def state(self) -> dict:
        return {"seed": self._seed, "M": self._M}

    def set_state(self, states: list[dict]) -> None:
        state = states[-1] if states else {}
        if state.get("seed") is not None:
            self._M = state["M"]
            self._build_queue(int(state["seed"]))

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        self._used += len(items)

    def _build_queue(self, seed: int) -> None:
        self._seed = seed
        self.b = inclusion_probabilities(self._h, min(self._M, self._N))
        self._queue = systematic_sample(self.b, np.random.default_rng(seed))

    def draw(self, n_new: int, labeled: np.ndarray, rng: np.random.Generator) -> Draws:
        if self._queue is None:
            if self._M is None:
                raise ValueError("poisson: give budget=M (the number of labels to plan for) or use Session.run")
            self._build_queue(int(rng.integers(2**62)))
        if self._used + n_new > self._queue.size:
            raise ValueError(
                f"poisson: the design was planned for {self._queue.size} labels and {self._used} are used; "
                f"{n_new} more were asked for. Start a session with a larger budget"
            )
        items = self._queue[self._used:self._used + n_new]
        b = self.b[items]
        return Draws(items, 1.0 / b, b, np.full(items.size, -1, dtype=np.int64))

    def estimate(self, measure: Measure, pool: Pool, sample: Sample, level: float = 0.95) -> Estimate:
        """Horvitz-Thompson estimate (seed 002 eq. 18) with the Poisson-sampling covariance (eqs. 25-28).

        The first ``k`` of the ``|S|`` planned items have inclusion
        probabilities ``pi_n = b_n k / |S|``; ``R-hat = (1/N) sum l_n / pi_n``
        and ``cov(R-hat) = (1/N^2) sum (1 - pi_n) / pi_n^2 l_n l_n^T`` (the
        unbiased variance estimator of Poisson sampling, conservative for the
        fixed-size design), mapped to G by the delta method.  Items taken with
        certainty add no variance: with every informative item labeled the
        estimate is exact.

        Under a stochastic oracle the labels are random too, and seed 002
        eq. 27 gives ``(1/N^2) sum s_n / pi_n (<u u^T> / pi_n - <u><u>^T)``
        with ``u = Dg l``: one label estimates ``<u u^T>``, and ``<u>`` is
        taken under the design's prior ``p_a(y|x)`` (eq. 13).  A prior that
        overstates ``<u>`` would understate the error, so the variance is
        never below the deterministic formula's: a certain item then still
        adds its label noise.
        """
        d = sample.draws
        if len(d) == 0:
            return _no_labels(measure, level)
        pi = np.minimum(self.b[d.items] * len(d) / self._queue.size, 1.0)
        losses = measure.loss(pool.outputs(d.items), sample.labels)
        N = pool.n_items
        R = (losses / pi[:, None]).sum(axis=0) / N
        with np.errstate(divide="ignore", invalid="ignore"):
            J = measure.jacobian(R)
            u = losses @ J.T
            cov = (u.T * ((1 - pi) / pi**2)) @ u / N**2
            if self.oracle == "stochastic":  # seed 002 eq. 27, <u> under the prior
                outputs = pool.outputs(d.items)
                mean_u = sum(self._prior[d.items, c, None] * measure.loss(outputs, np.full(len(d), c))
                             for c in range(self._prior.shape[1])) @ J.T
                noisy = ((u.T / pi**2) @ u - (mean_u.T / pi) @ mean_u) / N**2
                cov = larger_variance(noisy, cov)
        return make_estimate(measure, R, cov, sample.n_labels, len(d), level)
