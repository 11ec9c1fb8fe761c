"""Passive sampling and static importance sampling (with replacement).

``importance`` draws from the asymptotically optimal proposal of Marchant & Rubinstein (KDD 2021)
Prop. 1 (eq. 5), ``q*(x) ∝ p(x) sqrt(E_pi ||Dg(R0) l(x, y)||^2)``, where the
expectation is over a prior ``pi(y|x)`` from the systems' probabilities
shrunk by ``lam`` (Yilmaz et al. (2021) eq. 13) and ``R0`` is the risk under that prior
(the pre-sampling estimate, Yilmaz et al. (2021) eq. 14).  For ratio metrics this is
Yilmaz et al. (2021)'s ``q ∝ |h_n|`` of eq. (12).  A defensive mixture with p(x)
(Marchant & Rubinstein (KDD 2021) 3.3.1) keeps every item's probability positive, which makes the
estimator valid for any other measure (sample reuse) and protects against
a wrong prior.  ``passive`` is the uniform proposal; its interval is the
posterior of the measure under a Dirichlet over the pool's loss cells
(:mod:`~labelwise.estimators.posterior`), which stays honest when few
positives have been drawn.

On a binary pool whose measure depends on the predictions only,
``importance`` plans ``q`` on score blocks and draws by the shared item hash,
as an engine pool does (:mod:`~labelwise.designs.hashed_importance`); the
per-item proposal and sampler below serve other pools and measures.

The interval of ``importance``
------------------------------
The plug-in covariance (Marchant & Rubinstein (KDD 2021) sec. 3.3.2) is the
sample variance of the weighted losses.  On imbalanced pools the heaviest
terms are the rare positives the scores call negatives (weight up to
``1 / defensive``), and a run of a few thousand draws usually meets none of
them: its variance, hence its interval, is too small exactly in the runs
whose estimate is off (coverage 0.5-0.85 on 1:1000 and over-confident pools).
The proposal is known for every item, so the variance of one draw,
``sum_x E[u_x^2] / (N^2 q(x)) - r^2``, needs only the labels of the items
not labeled yet.  They come from the oracle model the adaptive designs use
(:class:`~labelwise.designs.group_model.GroupModel`: the systems' scores
recalibrated on the labels), fitted only when an interval is asked for; the
proposal stays the static one above.  As for ``ais``, the interval covers
the model's error split into no surprise / surprises never drawn / one
drawn (:func:`~labelwise.estimators.mixture_variance`), never narrower than
the plug-in's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..draws import Draws, Sample
from ..engines.hashing import generator_seed
from ..estimators import (
    Estimate,
    ModelCovariance,
    importance_moments,
    importance_totals_covariance,
    make_estimate,
    model_interval_covariance,
    proposal_model_covariance,
    with_fieller,
)
from ..estimators.model_covariance import unlabeled_proposal_sums
from ..estimators.posterior import (
    cell_counts,
    label_posterior_draws,
    label_support,
    loss_cells,
    posterior_draws,
)
from ..measures import Measure
from ..oracle import score_prior
from ..pool import Pool
from .base import Design, Sampler
from .group_model import GroupModel
from .hashed import HashDrawn, HashOrder, hash_keys
from .sampling import draw_with_replacement, sample_from_cdf
from .tree_model import TreeModelDesign

__all__ = ["ImportanceDesign", "ImportanceSampler", "PassiveDesign", "PassiveSampler", "ProposalSampler",
           "importance_moments_estimate", "optimal_proposal", "prior_deviation", "with_posterior"]


def prior_deviation(measure: Measure, pool: Pool, label_probs: np.ndarray,
                    R: np.ndarray | None = None) -> np.ndarray:
    """``sqrt(E_pi ||Dg(R) l(x, y)||^2)`` for every item: the deviation ``|h_n|`` of Yilmaz et al. (2021) eq. (12).

    For a ratio metric ``Dg(R) l = (f - F g) / R_2``, so this is Yilmaz et al. (2021)'s
    ``h_n`` up to a constant; for a generalized measure it is the integrand of
    Marchant & Rubinstein (KDD 2021) eq. (5).

    Parameters
    ----------
    measure : Measure
    pool : Pool
    label_probs : ndarray, shape (N, C)
        Model of ``p(y|x)`` for every item.
    R : ndarray, shape (d,), optional
        Where to evaluate the Jacobian; by default the risk under the model
        (Yilmaz et al. (2021) eq. 14).
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
    """Asymptotically optimal IS proposal under a label model (Marchant & Rubinstein (KDD 2021) eq. 5, Prop. 1).

    ``q ∝ prior_deviation`` (Yilmaz et al. (2021): ``q ∝ |h_n|``), mixed with p(x) = 1/N
    with weight ``defensive`` (Marchant & Rubinstein (KDD 2021) 3.3.1).

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


@dataclass(frozen=True, kw_only=True)
class ImportanceDesign(TreeModelDesign):
    """Static importance sampling with the asymptotically optimal proposal.

    Parameters
    ----------
    lam : float in [0, 1]
        Shrinkage of the systems' probabilities toward 1/C (Yilmaz et al.
        2021, eq. 13).  The default 1 trusts calibrated probabilities: under
        extreme imbalance any ``lam < 1`` gives every item a prior positive
        rate of at least ``(1 - lam) / 2``, which inflates the prior
        prevalence by orders of magnitude.
    defensive : float in (0, 1]
        Weight of the uniform distribution in the proposal (the defensive
        mixture of Marchant & Rubinstein 2021, sec. 3.3.1): every item's
        probability is at least ``defensive / N``.
    variance : {"mixture", "model", "plugin"}
        The interval's covariance (:meth:`ImportanceSampler.estimate`):
        the oracle model's error split into its likely cases (default), its
        full variance, or the draws' plug-in alone.
    calibration : {"platt", "platt-posterior", "none"}
        The oracle model's recalibration of the scores.  The static proposal
        labels few items in the tail, so on over-confident rare pools the
        most likely map (``"platt"``, the default) can understate the
        positives there; ``"platt-posterior"`` averages the map over its
        parameters' posterior, which covers there but is far wider where the
        labels say little about the slope (``benchmarks/importance_intervals.py``).
    **model
        Further settings of the oracle model behind the interval
        (:class:`~labelwise.designs.tree_model.TreeModelDesign`); the
        proposal does not use it.
    """

    name = "importance"
    defensive: float = 0.1
    variance: str = "mixture"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 < self.defensive <= 1.0:
            raise ValueError(f"defensive: must lie in (0, 1], got {self.defensive}")
        if self.variance not in ("mixture", "model", "plugin"):
            raise ValueError(f"variance: choose 'mixture', 'model' or 'plugin', got {self.variance!r}")

    def proposal(self, pool: Pool, measure: Measure) -> np.ndarray:
        """The static proposal q over the pool (sums to one): planned on score blocks where an engine pool could
        run the design (:func:`~labelwise.designs.hashed_importance.blocks_apply`), else per item."""
        from .hashed_importance import (  # it builds on this module
            blocks_apply,
            memory_block_proposal,
        )

        if blocks_apply(self, pool, measure):
            _, block, q = memory_block_proposal(self, pool, measure)
            return q[block]
        return optimal_proposal(measure, pool, score_prior(pool, self.lam), defensive=self.defensive)

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> ProposalSampler:
        """A run: on score blocks by the shared item hash where an engine pool could run it (binary pool, measure
        of the predictions, deterministic oracle; :mod:`~labelwise.designs.hashed_importance`), else per item."""
        from .hashed_importance import (  # it builds on this module
            HashedImportanceSampler,
            runs_on_blocks,
        )

        if runs_on_blocks(self, pool, measure, oracle):
            return HashedImportanceSampler(self, pool, measure, oracle, rng, budget)
        return ImportanceSampler(self, self.group_model(pool, measure, oracle), rng, self.proposal(pool, measure))


@dataclass(frozen=True, kw_only=True)
class PassiveDesign(Design):
    """Passive sampling: uniform draws (Marchant & Rubinstein 2021, Definition 2), without replacement under a
    deterministic oracle (:class:`PassiveSampler`).

    The point estimate is the sample's plug-in; the interval is the posterior
    of :class:`PassiveSampler`.
    """

    name = "passive"

    def proposal(self, pool: Pool, measure: Measure) -> np.ndarray:
        """The uniform distribution over the pool."""
        return np.full(pool.n_items, 1.0 / pool.n_items)

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> PassiveSampler:
        return PassiveSampler(pool, measure, oracle, rng, self.proposal(pool, measure), budget)


class ProposalSampler(Sampler):
    """I.i.d. draws from a fixed proposal ``q`` over the pool, with the importance-sampling estimate."""

    def __init__(self, pool: Pool, measure: Measure, oracle: str, rng: np.random.Generator, q: np.ndarray):
        super().__init__(pool, measure, oracle, rng)
        self.q = q
        self._cdf = np.cumsum(q)

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        if self.stochastic:
            items = sample_from_cdf(self._cdf, n_new, self.rng)
        else:
            items = draw_with_replacement(self._cdf, n_new, labeled, self.rng)
        q = self.q[items]
        return Draws(items, 1.0 / (self.pool.n_items * q), q)

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        return importance_moments_estimate(measure, self.losses(measure, sample), d.weight, d.count,
                                           sample.n_labels, level)


def importance_moments_estimate(measure: Measure, losses: np.ndarray, weights: np.ndarray, counts: np.ndarray,
                                n_labels: int, level: float) -> Estimate:
    """The importance-sampling estimate (Marchant & Rubinstein (KDD 2021) eq. 1) with its plug-in covariance.

    Parameters
    ----------
    measure : Measure
    losses : ndarray, shape (n, d)
        The loss of every labeled draw.
    weights : ndarray, shape (n,)
        ``p / q`` of every draw (1 for a uniform sample).
    counts : ndarray of int, shape (n,)
        How many identical draws each row stands for.
    n_labels : int
    level : float
    """
    R, _, cov = importance_moments(measure, losses, weights, counts=counts)
    return make_estimate(measure, R, cov, n_labels, int(counts.sum()), level)


class ImportanceSampler(ProposalSampler):
    """One run of :class:`ImportanceDesign`: draws from its static proposal, an interval that also sees the
    items not labeled yet through the oracle model (module docstring)."""

    def __init__(self, design: ImportanceDesign, model: GroupModel, rng: np.random.Generator, q: np.ndarray):
        super().__init__(model.pool, model.measure, model.oracle, rng, q)
        self.design, self.gm = design, model
        of_item, G = model.groups.of_item, model.groups.n_groups
        # sums of 1/q and of q over every member of each group; the labeled members are taken out per estimate
        self._inv_q_groups = np.bincount(of_item, weights=1.0 / q, minlength=G)
        self._q_groups = np.bincount(of_item, weights=q, minlength=G)
        self._unlearned: list[tuple[np.ndarray, np.ndarray]] = []  # labels the model has not seen yet

    @property
    def uses_model(self) -> bool:
        """Whether the interval of the design's measure comes from the oracle model (deterministic oracle)."""
        return self.design.variance != "plugin" and not self.stochastic

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        if self.uses_model:  # the model steers nothing: it learns when an interval asks (:meth:`_learn`)
            self._unlearned.append((np.asarray(items, dtype=np.int64), np.asarray(labels, dtype=np.int64)))

    def _learn(self) -> None:
        """Fit the oracle model to the labels that arrived since it last learned (the same fit as one
        call per batch: the recalibration and the prior strength are refitted to every label so far)."""
        if self._unlearned:
            items, labels = (np.concatenate(parts) for parts in zip(*self._unlearned))
            self._unlearned = []
            self.gm.observe(items, labels)

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        """The importance-sampling estimate (Marchant & Rubinstein (KDD 2021) eq. 1) and its covariance.

        For the design's measure under a deterministic oracle the covariance is
        :func:`~labelwise.estimators.model_interval_covariance` of the plug-in
        and :meth:`model_covariance`; other measures (sample reuse), a
        stochastic oracle and ``variance="plugin"`` keep the plug-in.  For a
        ratio of totals the interval also holds Fieller's
        (:func:`~labelwise.estimators.with_fieller`).
        """
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        losses = self.losses(measure, sample)  # once: the estimate and Fieller's totals both need them
        est = importance_moments_estimate(measure, losses, d.weight, d.count, sample.n_labels, level)
        totals_cov = lambda: importance_totals_covariance(losses, d.weight, d.count)
        if not self.uses_model or measure != self.measure or not est.all_defined:
            return with_fieller(self.with_unseen_labels(est, measure, sample), measure, totals_cov)
        self._learn()
        n = d.n_draws
        model = self.model_covariance(est.R, n)
        cov = model_interval_covariance(est.cov, model, n, level, self.design.variance)
        # no exception labeled, and less than one expected: what the labels cannot rule out
        cov, basis = self.gm.with_unseen_labels(cov, self.gm.basis, measure.finite_jacobian(est.R), model.exceptions,
                                                sample.judged_labels)
        return with_fieller(make_estimate(measure, est.R, cov, est.n_labels, est.n_draws, level, basis=basis),
                            measure, totals_cov)

    def model_covariance(self, R: np.ndarray, n_draws: int) -> ModelCovariance:
        """The per-draw covariance of ``w Dg l`` under the oracle model, with ``Dg`` taken at ``R``
        (:func:`~labelwise.estimators.proposal_model_covariance`)."""
        gm, measure = self.gm, self.measure
        groups = gm.groups
        J = measure.finite_jacobian(R)
        lab = groups.labeled_items
        of_lab, q_lab = groups.of_item[lab], self.q[lab]
        unlabeled = groups.unlabeled.astype(float)
        inv_q, q = unlabeled_proposal_sums(self._inv_q_groups, self._q_groups, unlabeled, of_lab, q_lab)
        u = np.einsum("cgd,md->cgm", gm.rep_loss, J)
        u_lab = measure.loss(self.pool.outputs(lab), gm.labeled_y) @ J.T
        return proposal_model_covariance(u, gm.posterior(interval=True), unlabeled, inv_q, q, u_lab, q_lab, J @ R,
                                         n_draws, self.pool.n_items)


class PassiveSampler(HashDrawn, ProposalSampler):
    """Uniform draws, whose interval is the Dirichlet posterior over the pool's loss cells.

    Under a deterministic oracle the items are drawn in increasing
    ``u = H(item_id, seed)`` (:mod:`~labelwise.designs.hashed`): a simple
    random sample without replacement, the one an engine pool draws for the
    same seed (a stochastic oracle keeps i.i.d. draws).  Labeled
    items the order meets are draws that cost no label (as re-draws of the
    uniform proposal).  Measures whose losses take more values than
    :data:`~labelwise.estimators.posterior.MAX_CELLS` (continuous scores) keep
    the delta-method interval of :class:`ProposalSampler`; measures of per-label confusion rates
    (:meth:`~labelwise.measures.Measure.label_columns`: multi-label macro-F1) take every label's own posterior.
    """

    def __init__(self, pool: Pool, measure: Measure, oracle: str, rng: np.random.Generator, q: np.ndarray,
                 budget: int | None = None):
        super().__init__(pool, measure, oracle, rng, q)
        self.budget, self.hash_seed, self._order = budget, generator_seed(rng), None
        self._cells: dict[Measure, np.ndarray | None] = {}

    def new_order(self) -> HashOrder:
        order = HashOrder.in_memory(hash_keys(self.pool), self.hash_seed)
        order.reach(np.array([self.budget or 0]))
        return order

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        if self.stochastic:  # every draw is labeled afresh: i.i.d. draws, an item may be labeled twice
            return super().draw(n_new, labeled)
        items, _ = self.order.take(0, n_new, labeled.__getitem__)
        return Draws(items, np.ones(items.size), np.full(items.size, 1.0 / self.pool.n_items))

    def cells(self, measure: Measure) -> np.ndarray | None:
        """The pool's distinct loss vectors for ``measure``, or ``None``; for a measure of per-label confusion rates
        (:meth:`~labelwise.measures.Measure.label_columns`) the states each label can take
        (:func:`~labelwise.estimators.posterior.label_support`).  Computed once per measure."""
        if measure not in self._cells:
            columns = measure.label_columns()
            self._cells[measure] = (loss_cells(measure, self.pool.outputs(), self.pool.n_classes) if columns is None
                                    else label_support(measure, columns, self.pool.outputs(), self.pool.n_classes))
        return self._cells[measure]

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        est = super().estimate(measure, sample, level)
        columns, cells = measure.label_columns(), self.cells(measure)
        if cells is None or len(sample.draws) == 0:
            return est
        losses, rows, share = self.answer_losses(measure, sample)  # a draw answered k times: k cells at 1/k
        counts = sample.draws.count[rows] * share
        if columns is not None:  # items outside the population (the zero loss): true negatives of every label
            return replace(est, posterior=label_posterior_draws(measure, columns, losses, counts, support=cells),
                           basis="posterior of every label's confusion counts given a uniform sample")
        if sample.excluded is not None:  # items outside the population: a cell of their own, the zero loss
            cells = np.unique(np.vstack([cells, np.zeros((1, cells.shape[1]))]), axis=0)
        return with_posterior(est, measure, cells, losses, counts)


def with_posterior(est: Estimate, measure: Measure, cells: np.ndarray, losses: np.ndarray,
                   counts: np.ndarray) -> Estimate:
    """``est`` with the interval of the Dirichlet posterior over the pool's loss ``cells`` given a uniform sample.

    Parameters
    ----------
    est : Estimate
        The plug-in estimate of the sample.
    measure : Measure
    cells : ndarray, shape (K, d)
        :func:`~labelwise.estimators.posterior.loss_cells` of the pool.
    losses : ndarray, shape (n, d)
        The loss of every labeled draw.
    counts : ndarray, shape (n,)
        How many draws each row stands for.
    """
    return replace(est, posterior=posterior_draws(measure, cells, cell_counts(losses, cells, counts)),
                   basis="posterior of the pool's confusion counts given a uniform sample (Jeffreys prior)")
