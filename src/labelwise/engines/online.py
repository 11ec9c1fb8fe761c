"""``online-poisson`` on score blocks: each round planned from the block summary and drawn by the shared hash.

The in-memory design (:mod:`labelwise.designs.online_poisson`, Yilmaz et
al., "Sample Efficient Model Evaluation", 2021, appendix E, with the
oracle model of Marchant & Rubinstein, "Needle in a Haystack", KDD 2021,
sec. 4) needs items only to group them and to draw members: a round's
inclusion probability is the same for every unlabeled item of a group, and
it follows from the groups' sizes, unlabeled counts and the model's
posterior.  On an engine pool

* the model's leaves are the in-memory design's: the strata of the score of
  ``design.system`` by the cumulative square-root frequency rule (Dalenius &
  Hodges, "Minimum variance stratification", JASA 1959) on equal-width fine
  bins, computed exactly in two passes (:func:`~labelwise.engines.strata.score_strata`);
  scores too concentrated for the rule, which the in-memory design refines
  by rank (every distinct score), take strata of whole prior bins by the same
  rule on the bins' counts instead (:func:`bin_strata`; sessions written
  before the score strata have these too);
* the groups are the blocks (:mod:`labelwise.engines.blocks`: prior bin and
  predictions) within the leaves (:meth:`EnginePool.stratum_summary`), finer
  than the in-memory (stratum, loss key) groups for the measures whose loss
  depends on the items through the predictions, with the same plan: every
  block of a (stratum, predictions) group has its posterior and influence;
* the model is the flat
  (``depth=1``) Dirichlet-tree model, whose EM fixed point is the leaf's
  posterior mean ``r = (lam s + O) / (lam + L)`` (``s`` the leaf's mean
  prior, ``O`` its positive labels, ``L`` its labels;
  :class:`labelwise.oracle.DirichletTreeModel`), with the blocks' priors
  recalibrated by a Platt map on the labels (each label standing for the
  items of its (leaf, predictions) group per label, as the per-item design
  weighs them) and ``lam`` chosen by the labels' marginal likelihood;
* round ``r`` draws as the in-memory design does: how many items each block
  gives by randomised systematic sampling of the blocks in the order of their
  mean prior, which stratifies the round implicitly over the scores (exactly
  the batch in all, :func:`~labelwise.designs.poisson_rounds.systematic_counts`, from a
  generator seeded by :func:`~labelwise.engines.round_plan.round_seed`), then the first ``k_g`` items of
  block ``g`` not handed out yet in increasing ``u = H(item_id, seed_r)``, a
  simple random sample without replacement (:mod:`labelwise.designs.hashed`;
  one pass under covering bounds, :meth:`EnginePool.hash_order`), handed out in
  increasing ``H(item_id, round_seed(seed_r, 1))``, a uniformly random order
  (:func:`~labelwise.engines.round_plan.plan_round`).  Every
  unlabeled item of block ``g`` is drawn with probability ``b_g`` exactly, so
  the items the design takes with certainty (``b_g = 1``) are all drawn.

The water-filling, the hedge and the round-weighted Horvitz-Thompson estimate
are the per-item design's, on these groups; so is its interval (labeled items
design-based, unlabeled ones through the model; where the rounds are expected
to have drawn many exceptions, :data:`NORMAL_HITS`, the unlabeled items'
variance is the larger under the weighted map and under the map fitted to the
labels each counted once); ``variance="hindsight"``
reads the mixture's cases in hindsight: an exception left unlabeled can only
be missed, at a rate the leaf's Beta posterior and the recalibration's
posterior leave uncertain (the latter's weighted likelihood counting Kish's
effective number of labels, :meth:`~labelwise.engines.block_leaves.BlockLeaves.model`;
:func:`~labelwise.designs.unlabeled_covariance.missed_in_hindsight`);
``variance="conditional"`` reads them leaf by leaf on what the rounds drew
(:func:`~labelwise.designs.unlabeled_covariance.drawn_variance`).  Labels with no positive yet identify no
recalibration: where the model then expects less than one positive left, the interval holds those they cannot rule out
(:mod:`~labelwise.estimators.unseen_positives`).  An
in-memory binary pool runs these rounds itself (:mod:`labelwise.designs.hashed_online`), so both
hand out the same items and give the same estimates for the same seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..designs import OnlinePoissonDesign
from ..designs.count_interval import label_coefficients
from ..designs.group_model import model_basis
from ..designs.online_poisson import (
    BLOCK_VARIANCES,
    HINDSIGHT_VARIANCES,
    PLUGIN_BASIS,
    unlabeled_covariance,
    with_unlabeled,
)
from ..designs.poisson_rounds import round_inclusion
from ..designs.unlabeled_covariance import (
    DrawnExceptions,
    LeafModel,
    missed_in_hindsight,
)
from ..estimators import (
    Estimate,
    JumpBound,
    MissedErrors,
    larger_variance,
    make_estimate,
    missed_errors,
    rounds_moments,
    rounds_plugin_covariance,
    with_unseen_labels,
)
from ..measures import Measure
from ..oracle import score_prior
from ..pool import Outputs
from .block_leaves import BlockLeaves
from .blocks import N_BINS, BlockSummary, depends_on_predictions_only
from .plan import PlannedSample
from .pool import EnginePool
from .round_plan import plan_round
from .strata import EngineStrata, primary_column, score_strata

__all__ = ["BlockRounds", "RoundLog", "bin_strata", "block_rounds", "model_strata", "next_round", "rounds_refusal",
           "simulate_rounds"]

#: Exceptions the rounds are expected to have drawn from which the mixture interval is its normal case (every case
#: but the third, a surprise drawn, has probability ``exp(-hits)``) and the sum of their jumps near normal (a
#: Poisson count of 30 and more, the usual rule).  Its variance then needs the rates of the exceptions left, which
#: the map weighted by the items each label stands for sets low in the very runs whose estimate is too high (few
#: tail positives drawn, a steep tail fitted); the map given the labels each counted once does not depend on the
#: weights, and the larger of the two variances is taken (``benchmarks/robustness.py``: the 5% pools; and
#: ``benchmarks/design_variants.py`` on 1% and 0.3% pools outside the grid).  With few hits the jumps are
#: heavy-tailed and the full variance already overstates a typical run's error; the counted-once map there would
#: widen intervals that cover.
NORMAL_HITS = 30.0


def bin_strata(per_bin: np.ndarray, n_strata: int) -> np.ndarray:
    """Stratum of every prior bin by the cumulative square-root frequency rule on the bins' counts.

    The cumulative ``sqrt(count)`` is cut into ``n_strata`` equal parts and a
    bin goes to the part its cumulative value before it falls in; strata are
    numbered 0, 1, ... in prior order, empty ones dropped.
    """
    root = np.sqrt(per_bin.astype(float))
    before = np.cumsum(root) - root
    part = np.minimum((before * n_strata / root.sum()).astype(np.int64), n_strata - 1)
    return np.unique(part, return_inverse=True)[1]


def rounds_refusal(design: OnlinePoissonDesign) -> str | None:
    """Why ``design`` does not run on score blocks (``None`` when it does): the settings that need items in memory."""
    only = {"depth": (design.depth, 1), "partition": (design.partition, "score"),
            "estimator": (design.estimator, "horvitz-thompson"), "calibration": (design.calibration, "platt", "none"),
            "interval_prior_strength": (design.interval_prior_strength, None),
            "variance": (design.variance, *BLOCK_VARIANCES)}
    for name, (value, *allowed) in only.items():
        if value not in allowed:
            runs = " or ".join(f"{name}={a!r}" for a in allowed)
            return f"{name}={value!r} needs the pool in memory; drop the setting (engine pools run {runs})"
    return None


def model_strata(strata: EngineStrata, n_strata: int) -> EngineStrata | None:
    """The score strata as the model's leaves, or ``None`` (strata of prior bins, :func:`bin_strata`) when the scores
    are too concentrated for ``n_strata`` strata by the square-root rule (module docstring)."""
    return strata if strata.sizes.size >= n_strata else None


@dataclass(frozen=True)
class RoundLog:
    """What the rounds drew: the labeled items and, per round, the plan and the sample size.

    Attributes
    ----------
    blocks : ndarray of int, shape (n,)
        Block (index into the summary's keys) of each labeled item.
    labels : ndarray of int, shape (n,)
    rounds : ndarray of int, shape (n,)
        Round each labeled item was handed out in.
    inclusion : ndarray, shape (rounds, G)
        Each round's ``b`` per block.
    drawn : ndarray of int, shape (rounds,)
        ``n_r``, the items each round drew (sessions written before the draw of the module docstring:
        ``|S_r|``, the items of a round's Poisson sample, of which the first ones were handed out).
    """

    blocks: np.ndarray
    labels: np.ndarray
    rounds: np.ndarray
    inclusion: np.ndarray
    drawn: np.ndarray


class BlockRounds:
    """:class:`~labelwise.designs.OnlinePoissonDesign` on the blocks of an engine pool (module docstring).

    Parameters
    ----------
    design : OnlinePoissonDesign
        ``depth=1``, ``partition="score"``, ``estimator="horvitz-thompson"``.
    summary : BlockSummary
        The blocks, within ``strata`` if given.
    measure : Measure
        The target measure (it shapes the rounds).
    system_names : tuple of str
    strata : EngineStrata, optional
        The model's leaves; by default strata of whole prior bins (:func:`bin_strata`).

    Raises
    ------
    ValueError
        For settings that need items in memory.
    """

    def __init__(self, design: OnlinePoissonDesign, summary: BlockSummary, measure: Measure,
                 system_names: tuple[str, ...], strata: EngineStrata | None = None):
        why = rounds_refusal(design)
        if why is not None:
            raise ValueError(f"online-poisson on an engine pool: {why}")
        self.design, self.summary, self.measure, self.strata = design, summary, measure, strata
        rep = summary.representatives(system_names)
        self.rep_out: Outputs = rep.outputs()
        self.prior = score_prior(rep, design.lam)[:, 1]  # each block's mean prior (shrunk by lam)
        if strata is not None:
            self.leaf = np.unique(summary.keys >> summary.key_bits, return_inverse=True)[1]
        else:
            bins = summary.keys >> summary.n_systems if summary.has_preds else summary.keys
            per_bin = np.bincount(bins, weights=summary.counts, minlength=N_BINS)
            self.leaf = bin_strata(per_bin, design.n_strata)[bins]
        self.leaves = BlockLeaves(self.design, summary, self.prior, self.leaf)
        self.n_leaves = self.leaves.n_leaves
        self.rep_loss = self._group_losses(measure)

    def _group_losses(self, measure: Measure) -> np.ndarray:
        """``measure``'s loss of each block's items for each label, ``(2, G, d)``."""
        G = self.summary.keys.size
        return np.stack([measure.loss(self.rep_out, np.full(G, c)) for c in range(2)])

    def posterior(self, blocks: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """The model's label distribution of an unlabeled item of each block after the labels, ``(G, 2)``."""
        return self.leaves.model(blocks, labels).posterior()[self.leaf]

    def interval_posterior(self, blocks: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """:meth:`posterior` under the interval's model (:meth:`~labelwise.engines.block_leaves.BlockLeaves.model`
        with ``interval=True``), ``(G, 2)``."""
        return self.leaves.model(blocks, labels, interval=True).posterior()[self.leaf]

    def inclusion(self, blocks: np.ndarray, labels: np.ndarray, handed: np.ndarray, n_new: int) -> np.ndarray:
        """The next round's ``b`` per block for ``n_new`` expected items (:func:`~labelwise.designs.poisson_rounds.round_inclusion`).

        Parameters
        ----------
        blocks, labels : ndarray of int
            Blocks and labels of the labeled items.
        handed : ndarray of int
            Blocks of every item handed out so far (labeled or not): none is drawn again.
        n_new : int
        """
        pi = self.posterior(blocks, labels)
        U = (self.summary.counts - np.bincount(handed, minlength=self.summary.keys.size)).astype(float)
        expected = np.einsum("g,gc,cgd->d", U, pi, self.rep_loss) + self.rep_loss[labels, blocks].sum(axis=0)
        R = expected / self.summary.n_items
        G = U.size
        influence = np.stack([self.measure.influence_norm_sq(self.rep_out, np.full(G, c), R) for c in (0, 1)])
        return round_inclusion(self.design, pi, influence, U, min(n_new, int(U.sum())))

    def block_losses(self, measure: Measure) -> np.ndarray | None:
        """``measure``'s loss of every block's items for each label, ``(2, G, d)``, from the blocks'
        representatives; ``None`` for a measure of more than the predictions (the blocks do not fix its loss)."""
        if not depends_on_predictions_only(measure, self.rep_out):
            return None
        return self.rep_loss if measure == self.measure else self._group_losses(measure)

    def estimate(self, measure: Measure, losses: np.ndarray, log: RoundLog, level: float = 0.95,
                 rep_loss: np.ndarray | None = None, judged: np.ndarray | None = None) -> Estimate:
        """Round-weighted Horvitz-Thompson estimate of ``measure`` from the ``losses`` ``(n, d)`` of the labeled
        items of ``log``, and its interval (module docstring); a census is exact.

        Rounds without a label are left out: their weight is 0.
        ``rep_loss``: the measure's loss per block and label
        (:meth:`block_losses`); without it the interval is design-based only.
        ``judged`` (default all): which items of ``log`` have a label; in
        memory, items excluded as not judgeable are in ``log`` with zero
        losses, but neither counted as labels nor learned from.
        """
        n = log.labels.size
        if n == 0:
            return Estimate.undefined(measure, level)
        N = self.summary.n_items
        judged = np.ones(n, dtype=bool) if judged is None else judged
        n_labels = int(judged.sum())
        if n == N:
            return make_estimate(measure, losses.sum(axis=0) / N, np.zeros((measure.size, measure.size)), n_labels,
                                 n, level)
        used, rounds = np.unique(log.rounds, return_inverse=True)
        labeled_per_round = np.bincount(rounds, minlength=used.size)
        # the first k_r of the n_r items a round drew: a uniformly random subset of them
        b_rounds = np.minimum(log.inclusion[used] * (labeled_per_round / log.drawn[used])[:, None], 1.0)
        g = log.blocks
        R, cov, w, J = rounds_moments(measure, losses, rounds, b_rounds[:, g].T, N, self.design.gamma)
        plugin = rounds_plugin_covariance(losses @ J.T / N, rounds, b_rounds[rounds, g], w)
        if rep_loss is None:
            return make_estimate(measure, R, larger_variance(cov, plugin), n_labels, n, level, basis=PLUGIN_BASIS)
        U = (self.summary.counts - np.bincount(g, minlength=self.summary.keys.size)).astype(float)
        u = np.einsum("cgd,md->cgm", rep_loss, J)
        coef = w[:, None] ** 2 * (1.0 / b_rounds - 1.0)
        model = self.leaves.model(g[judged], log.labels[judged], interval=True)
        pi = model.posterior()[self.leaf]
        bound, b_seen = JumpBound(b_rounds.T, w, measure.upper - measure.lower), b_rounds.sum(axis=0)
        unlabeled = unlabeled_covariance(u, pi, U, coef, b_seen, N, bound=bound)
        if self.design.variance == "mixture" and self.design.calibration == "platt" and model.rate_spread is None \
                and unlabeled.hits >= NORMAL_HITS:
            # the normal case: its full variance at the larger of the weighted map's rates and the counted-once map's
            once = self.leaves.model(g[judged], log.labels[judged], interval=True, counted_once=True)
            full = unlabeled_covariance(u, once.posterior()[self.leaf], U, coef, b_seen, N, bound=bound).full
            unlabeled = unlabeled._replace(full=larger_variance(unlabeled.full, full))
        # the exceptions left can only be missed (read so for the mixture too where its weighted map overstates them)
        if self.design.variance in HINDSIGHT_VARIANCES or model.rate_spread is not None:
            drawn = None
            if self.design.variance == "conditional":  # the third case read on what the rounds drew
                drawn = DrawnExceptions(g[judged], log.labels[judged],
                                        label_coefficients(w, rounds, b_rounds[rounds, g])[judged], coef.sum(axis=0),
                                        np.prod(1.0 - b_rounds, axis=0))
            unlabeled = missed_in_hindsight(unlabeled, u, pi, U, N, self.leaf, model, drawn)
        missed = None
        if model.point_rates is not None:  # the count of exceptions left over the recalibration's posterior
            missed = self._missed(measure, R, rep_loss, pi, U, model)
        cov = with_unlabeled(cov, plugin, unlabeled, self.design.variance == "model", level, missed=missed)
        # the leaves' priors are recalibrated under "platt" only (:meth:`BlockLeaves.model`)
        basis = model_basis("platt" if self.design.calibration == "platt" else "none")
        # the model expects less than one positive left, which labels holding none cannot check (whatever the level)
        cov, basis = with_unseen_labels(cov, basis, u, pi, U, log.labels[judged], unlabeled.exceptions, N)
        return make_estimate(measure, R, cov, n_labels, n, level, basis=basis)

    def _missed(self, measure: Measure, R: np.ndarray, rep_loss: np.ndarray, pi: np.ndarray, U: np.ndarray,
                model: LeafModel) -> MissedErrors:
        """The exceptions left unlabeled: their count under each point of the recalibration's posterior and the
        measure's error for each count (:func:`~labelwise.estimators.missed_errors`)."""
        G = pi.shape[0]
        mode = np.argmax(pi, axis=1)
        change = rep_loss[1 - mode, np.arange(G)] - rep_loss[mode, np.arange(G)]  # (G, d): one exception's
        left = U * np.any(change != 0, axis=1)  # items whose exception moves the estimate
        rates = model.point_rates[:, self.leaf]  # (k, G)
        # each leaf's count, its rate shared by its blocks: Beta-binomial over the leaf's items left, variance
        # E (1 + d) with d = (U - 1) / (lam + L + 1) for rare exceptions (GroupModel.count_spread)
        by_leaf = sparse.csr_matrix((left, (np.arange(G), self.leaf)), shape=(G, self.n_leaves))
        means = np.asarray(np.where(mode == 1, 1.0 - rates, rates) @ by_leaf)  # (k, L)
        left_leaf = np.asarray(by_leaf.sum(axis=0)).ravel()
        overdispersion = np.maximum(left_leaf - 1.0, 0.0) / (model.positive + model.negative + 1.0)
        expected = left * pi[np.arange(G), 1 - mode]
        delta = expected @ change / max(expected.sum(), 1e-300)
        return missed_errors(measure.value, R, delta, self.summary.n_items, means, model.point_weights,
                             overdispersion)


def block_rounds(pool: EnginePool, design: OnlinePoissonDesign, measure: Measure) -> BlockRounds:
    """The rounds of ``design`` on ``pool``: its score strata (two passes) and the blocks within them (one pass),
    or the pool's blocks under strata of prior bins when the scores are too concentrated (module docstring).

    Raises
    ------
    ValueError
        For settings that need items in memory.
    """
    why = rounds_refusal(design)
    if why is not None:  # before any pass
        raise ValueError(f"online-poisson on an engine pool: {why}")
    strata = model_strata(score_strata(pool.source, primary_column(pool.source.columns, design.system),
                                       design.n_strata, design.name), design.n_strata)
    if strata is None:
        return BlockRounds(design, pool.summary, measure, pool.system_names)
    return BlockRounds(design, pool.stratum_summary(strata), measure, pool.system_names, strata)


def next_round(pool: EnginePool, rounds: BlockRounds, seed: int, round_: int, labeled: RoundLog,
               handed_ids: np.ndarray, handed_blocks: np.ndarray, n_new: int) -> tuple[np.ndarray, PlannedSample]:
    """Plan round ``round_`` from the labels so far and draw it (one pass); returns its ``b`` per block and sample.

    ``labeled`` holds the labeled items' blocks and labels; the items handed out so far (``handed_ids``,
    their blocks ``handed_blocks``) are not drawn again.  The round's sample holds ``n_new`` items (one more or
    less only by rounding), in hand-out order (module docstring).
    """
    keys = rounds.summary.keys

    def members(wanted: np.ndarray, unhanded: np.ndarray, seed_r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # one pass keeps the items under covering bounds of each block's need (EnginePool.hash_order)
        ids, blocks = pool.hash_order(seed_r, keys, unhanded, handed_ids, rounds.strata).first(wanted)
        return ids, ids, blocks

    b, ids, blocks = plan_round(rounds, labeled.blocks, labeled.labels, handed_blocks, n_new, seed, round_, members)
    return b, PlannedSample(ids, b[blocks], pool.n_items, keys[blocks])


def simulate_rounds(pool: EnginePool, rounds: BlockRounds, seed: int, batch_size: int, marks: list[int],
                    level: float = 0.95) -> list[Estimate]:
    """One simulated run: rounds of ``batch_size`` labeled from the pool's label column, an estimate at each mark.

    Every round's handed-out items are labeled before the next round is planned.
    """
    ids, estimates = np.empty(0, np.int64), []
    log = RoundLog(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64),
                   np.empty((0, rounds.summary.keys.size)), np.empty(0, np.int64))
    tried = 0
    while len(estimates) < len(marks):
        n_new = min(batch_size, marks[-1] - ids.size)
        b, sample = next_round(pool, rounds, seed, tried, log, ids, log.blocks, n_new)
        tried += 1
        if len(sample) == 0:  # a round may draw nothing when the batch is tiny: the next one draws anew
            continue
        new = sample.item_ids[:n_new]
        blocks = np.searchsorted(rounds.summary.keys, sample.keys[:n_new])
        log = RoundLog(np.r_[log.blocks, blocks], np.r_[log.labels, pool.source.labels(new)],
                       np.r_[log.rounds, np.full(new.size, log.drawn.size)], np.vstack([log.inclusion, b]),
                       np.r_[log.drawn, len(sample)])
        ids = np.r_[ids, new]
        while len(estimates) < len(marks) and ids.size >= marks[len(estimates)]:
            k = marks[len(estimates)]
            part = RoundLog(log.blocks[:k], log.labels[:k], log.rounds[:k], log.inclusion, log.drawn)
            losses = rounds.measure.loss(pool.source.outputs(ids[:k]), part.labels)
            estimates.append(rounds.estimate(rounds.measure, losses, part, level,
                                             rep_loss=rounds.block_losses(rounds.measure)))
    return estimates
