"""``importance`` on score blocks, drawn by the shared item hash: the same draws and estimate in memory and on engines.

On a binary pool whose measure depends on the items only through the
systems' predictions, the static proposal of Marchant & Rubinstein
("Needle in a Haystack: Label-Efficient Evaluation under Extreme Class
Imbalance", KDD 2021, eq. 5, defensive mixture sec. 3.3.1) is planned on the
score blocks of :mod:`labelwise.engines.blocks` (:func:`~labelwise.designs.block_draws.block_proposal`)
and drawn with replacement by :class:`~labelwise.designs.block_draws.BlockDraws`:
exactly i.i.d. draws from that proposal, which an engine pool reproduces for
the same seed (:mod:`labelwise.engines.importance`).  A batch of ``n`` new
items takes the draws up to the one completing ``n`` items not drawn before
in the run; the draws of items drawn before cost no label.

The estimate is the importance-sampling one (eq. 1) with Hansen-Hurwitz
weights ``1 / (N q)``; for a ratio of totals (F1, precision, recall) its
interval also holds Fieller's (:mod:`labelwise.estimators.fieller`).  The
interval adds the items not labeled yet through the oracle model of the blocks (:func:`block_model`: Platt-recalibrated
block priors, a flat Dirichlet model over square-root strata of the prior
bins, as engine ``online-poisson`` runs where the scores are too concentrated
for its score strata; the interval's model of ``online-poisson``, whose
recalibration strength is held where labels with no positive cannot fit it),
as the per-item design does with its strata
(:mod:`labelwise.designs.importance`), and holds what labels with no positive
yet cannot rule out (:func:`~labelwise.estimators.with_unseen_labels`).  Everything the interval needs is a
block count, the proposal of a block and the labeled items: engine pools
compute it with no pass over the pool, and memory computes the same numbers.
"""

from __future__ import annotations

import numpy as np

from ..draws import Draws, Sample
from ..engines.blocks import (
    BlockSummary,
    blocks_fit,
    depends_on_predictions_only,
    memory_blocks,
)
from ..engines.hashing import generator_seed
from ..engines.online import BlockRounds
from ..estimators import (
    Estimate,
    importance_totals_covariance,
    make_estimate,
    model_interval_covariance,
    proposal_model_covariance,
    with_fieller,
    with_unseen_labels,
)
from ..estimators.ratio_score import (
    jeffreys_leaf_variance,
    ratio_score_draws,
    with_score_interval,
)
from ..measures import Measure
from ..measures.base import RatioOfTotals
from ..oracle.calibration import label_surprise
from ..pool import Pool
from .block_draws import BlockDraws, block_proposal
from .group_losses import BlockLosses
from .group_model import model_basis
from .hashed import HashDrawn, HashOrder, hash_keys
from .importance import ImportanceDesign, ProposalSampler, importance_moments_estimate
from .online_poisson import OnlinePoissonDesign

__all__ = [
    "HashedImportanceSampler",
    "block_model",
    "blocks_apply",
    "blocks_refusal",
    "hashed_importance_estimate",
    "memory_block_proposal",
    "runs_on_blocks",
]


def blocks_refusal(design: ImportanceDesign) -> str | None:
    """Why ``design``'s interval model does not run on score blocks (``None`` when it does)."""
    settings = {"partition": (design.partition, "score"), "depth": (design.depth, 1),
                "interval_prior_strength": (design.interval_prior_strength, None)}
    for name, (value, only) in settings.items():
        if value != only:
            return f"importance: {name}={value!r} needs the pool in memory (score blocks run {name}={only!r})"
    if design.calibration not in ("platt", "none"):
        return (f"importance: calibration={design.calibration!r} needs the pool in memory (score blocks run "
                "calibration='platt' or 'none')")
    return None


def block_model(design: ImportanceDesign, summary: BlockSummary, measure: Measure,
                system_names: tuple[str, ...]) -> BlockRounds:
    """The oracle model of the pool's blocks behind the interval (``online-poisson``'s on score blocks,
    :class:`~labelwise.engines.online.BlockRounds`, on strata of prior bins) with the importance design's model
    settings."""
    settings = OnlinePoissonDesign(n_strata=design.n_strata, prior_strength=design.prior_strength,
                                   calibration=design.calibration, lam=design.lam)
    return BlockRounds(settings, summary, measure, system_names)


def hashed_importance_estimate(measure: Measure, design: ImportanceDesign, model: BlockRounds,
                               q: np.ndarray, draw_losses: np.ndarray, draw_weights: np.ndarray,
                               draw_counts: np.ndarray, labeled_blocks: np.ndarray, labels: np.ndarray,
                               labeled_losses: np.ndarray, n_labels: int, level: float,
                               reused_loss: np.ndarray | None = None) -> Estimate:
    """The importance-sampling estimate of block-proposal draws and its interval (module docstring).

    Parameters
    ----------
    measure : Measure
    design : ImportanceDesign
    model : BlockRounds
        :func:`block_model` of the pool's blocks.
    q : ndarray, shape (G,)
        The proposal per item of each block.
    draw_losses, draw_weights, draw_counts : ndarray
        Loss ``(n, d)``, ``1 / (N q)`` and count of every labeled draw.
    labeled_blocks, labels : ndarray of int, shape (L,)
        Block (index into the summary) and label of each distinct labeled item, in order of first draw.
    labeled_losses : ndarray, shape (L, d)
    n_labels : int
        Labels counted (those of items excluded from the population are not).
    level : float
    reused_loss : ndarray, shape (2, G, d), optional
        For another measure than the design's (sample reuse): its loss of each block's items for each label
        (:func:`~labelwise.designs.group_losses.group_losses`), which gives it the model's part too.

    The design's measure and a reused measure with ``reused_loss`` get the
    model's part; other reused measures and ``variance="plugin"`` keep the
    plug-in covariance.
    """
    est = importance_moments_estimate(measure, draw_losses, draw_weights, draw_counts, n_labels, level)
    totals_cov = lambda: importance_totals_covariance(draw_losses, draw_weights, draw_counts)
    own = measure == model.measure
    rep_loss = model.rep_loss if own else reused_loss
    if (design.variance == "plugin" or rep_loss is None or not est.all_defined
            or own and not depends_on_predictions_only(measure, model.rep_out)):  # a block's loss must be one value
        return with_fieller(est, measure, totals_cov)
    counts, N = model.summary.counts, model.summary.n_items
    n = est.n_draws
    J = measure.finite_jacobian(est.R)
    unlabeled = (counts - np.bincount(labeled_blocks, minlength=counts.size)).astype(float)
    u = np.einsum("cgd,md->cgm", rep_loss, J)
    # the interval's leaves (the recalibration held where labels showing no positive cannot fit it), fitted once
    # for both intervals
    leaves = model.leaves.model(labeled_blocks, labels, interval=True)
    pi = leaves.posterior()[model.leaf]
    covariance = proposal_model_covariance(u, pi, unlabeled, unlabeled / q, unlabeled * q, labeled_losses @ J.T,
                                           q[labeled_blocks], J @ est.R, n, N)
    cov = model_interval_covariance(est.cov, covariance, n, level, design.variance)
    # no exception labeled, and less than one expected: what the labels cannot rule out
    cov, basis = with_unseen_labels(cov, model_basis(design.calibration), u, pi, unlabeled, labels,
                                    covariance.exceptions, N)
    est = with_fieller(make_estimate(measure, est.R, cov, est.n_labels, n, level, basis=basis), measure, totals_cov)
    if not isinstance(measure, RatioOfTotals) or not contradicted(model.prior[labeled_blocks], labels):
        return est
    draws = ratio_score_draws(est.R, float(est.std[0]), float(measure.lower[0]), float(measure.upper[0]),
                              labeled_losses=labeled_losses, labeled_factor=1.0 / (n * N**2 * q[labeled_blocks]),
                              unlabeled=unlabeled, unlabeled_factor=1.0 / (n * N**2 * q), group_losses=rep_loss,
                              leaf=model.leaf, rate=leaves.posterior()[:, 1],
                              rate_var=jeffreys_leaf_variance(leaves.positive, leaves.negative))
    return with_score_interval(est, draws)


def contradicted(positive: np.ndarray, labels: np.ndarray) -> bool:
    """Whether the labels contradict the probabilities ``positive`` of their items (their standardized surprise,
    :func:`~labelwise.oracle.calibration.label_surprise`, beyond the cut-off the planner uses,
    :data:`~labelwise.planning.MISCALIBRATED`): then the oracle model, whose rates start from those
    probabilities, does not set the interval's level alone (module docstring)."""
    from ..planning import (  # planning builds on the designs
        MISCALIBRATED,
        MISCALIBRATION_EFFECT,
    )

    prior = np.stack([1.0 - positive, positive], axis=1)
    return label_surprise(prior, labels, MISCALIBRATION_EFFECT) > MISCALIBRATED


class HashedImportanceSampler(HashDrawn, ProposalSampler):
    """One in-memory run of :class:`~labelwise.designs.ImportanceDesign` on score blocks (module docstring).

    Sessions written before this draw (their batches' state has no
    ``"distinct"``) go on with i.i.d. draws from the block proposal by the
    session's generator.
    """

    def __init__(self, design: ImportanceDesign, pool: Pool, measure: Measure, oracle: str,
                 rng: np.random.Generator, budget: int | None = None):
        self.summary, self.block, self.q_blocks = memory_block_proposal(design, pool, measure)
        super().__init__(pool, measure, oracle, rng, self.q_blocks[self.block])
        self.design, self.budget, self.model = design, budget, block_model(design, self.summary, measure,
                                                                             pool.system_names)
        self.hash_seed, self._order, self._draws = generator_seed(rng), None, None
        self._items = np.empty(0, dtype=np.int64)  # the run's distinct items found so far, in order of first draw
        self.distinct, self.hashed = 0, True
        self.reused_loss = BlockLosses(self.block)  # other measures' block losses (sample reuse)

    def new_order(self) -> HashOrder:
        """The hash order of every score block's items (the ranks of :class:`BlockDraws` land on it)."""
        return HashOrder.in_memory(hash_keys(self.pool), self.hash_seed, self.block)

    @property
    def sequence(self) -> BlockDraws:
        """The run's draw sequence (made anew when the hash seed changes: copies, reopened sessions)."""
        if self._draws is None or self._draws.seed != self.hash_seed:
            self._draws = BlockDraws(self.hash_seed, self.q_blocks, self.summary.counts)
            self._items = np.empty(0, dtype=np.int64)
        return self._draws

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        """The draws of the sequence up to the one that completes ``n_new`` more distinct items (all draws count,
        repeats included); ``labeled`` is not needed: the sequence's distinct items are new by construction."""
        if not self.hashed:
            return super().draw(n_new, labeled)
        seq, total = self.sequence, min(self.distinct + n_new, self.pool.n_items)
        start, stop = seq.draws_for(self.distinct), seq.draws_for(total)
        if self._items.size < total:  # the budget's items at once: one hashing of the pool for the whole run
            blocks, ranks = seq.ranks(max(total, min(self.budget or 0, self.pool.n_items)))
            self._items = self.order.items_at(blocks, ranks)
        items = self._items[seq.appearance(stop)[start:]]
        self.distinct = total
        q = self.q[items]
        return Draws(items, 1.0 / (self.pool.n_items * q), q)

    def state(self) -> dict:
        """The hash seed and the distinct items drawn so far (the sequence replays from them)."""
        return {"seed": self.hash_seed, "distinct": self.distinct}

    def set_state(self, states: list[dict]) -> None:
        """Restore the last batch's :meth:`state`; a state without ``"distinct"`` (an older session) goes on with
        the base class's i.i.d. draws."""
        if not states:
            return
        self.hashed = "distinct" in states[-1]
        if self.hashed:
            self.hash_seed, self.distinct = int(states[-1]["seed"]), int(states[-1]["distinct"])

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        """The importance-sampling estimate with the interval of :func:`hashed_importance_estimate` (the block
        model's covariance, as an engine pool computes it) instead of the base class's."""
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        items, first = np.unique(d.items, return_index=True)
        items = items[np.argsort(first)]  # in order of first draw, as an engine pool lists them
        labels = sample.labels[np.sort(first)]
        outputs = self.pool.outputs(items)
        return hashed_importance_estimate(measure, self.design, self.model, self.q_blocks,
                                          self.losses(measure, sample), d.weight, d.count, self.block[items], labels,
                                          measure.loss(outputs, labels), sample.n_labels, level,
                                          None if measure == self.measure else self.reused_loss(measure, self.pool))



def blocks_apply(design: ImportanceDesign, pool: Pool, measure: Measure) -> bool:
    """Whether the proposal is planned on score blocks (a binary pool, a measure of the predictions, model
    settings the blocks run)."""
    return blocks_refusal(design) is None and blocks_fit(pool, measure)


def runs_on_blocks(design: ImportanceDesign, pool: Pool, measure: Measure, oracle: str) -> bool:
    """Whether the in-memory ``importance`` draws on score blocks as an engine pool does (module docstring): where
    :func:`blocks_apply`, under a deterministic oracle (a stochastic one labels every draw afresh)."""
    return oracle == "deterministic" and blocks_apply(design, pool, measure)


def memory_block_proposal(design: ImportanceDesign, pool: Pool,
                          measure: Measure) -> tuple[BlockSummary, np.ndarray, np.ndarray]:
    """The score blocks of an in-memory pool, the block of every item and the proposal per item of each block
    (:func:`~labelwise.designs.block_draws.block_proposal`)."""
    keys, summary = memory_blocks(pool)
    q = block_proposal(summary, measure, pool.system_names, design.lam, design.defensive)
    return summary, np.searchsorted(summary.keys, keys), q
