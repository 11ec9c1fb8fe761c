"""``importance`` on engine pools: the in-memory design's draws and estimate, the items found by one pass.

The draws are those of :mod:`labelwise.designs.hashed_importance`: the
block of every draw and its hash rank within the block follow from the seed
and the block summary alone (:class:`~labelwise.designs.block_draws.BlockDraws`),
so only the items of the ranks drawn are read from the pool, in one pass
keeping each block's smallest ``u = H(item_id, seed)``
(:class:`~labelwise.designs.hashed.HashOrder` on the blocks).  A session
draws at ``init`` until its budget of distinct items is in and hands them
out in order of first draw; the draws of the first ``k`` items are
re-made from the seed whenever an estimate asks, with no pass over the pool.
"""

from __future__ import annotations

import numpy as np

from ..designs import ImportanceDesign
from ..designs.block_draws import BlockDraws, block_proposal
from ..designs.hashed_importance import (
    block_model,
    blocks_refusal,
    hashed_importance_estimate,
)
from ..estimators import Estimate
from ..measures import Measure
from ..pool import Outputs
from .blocks import BlockSummary
from .plan import PlannedSample
from .pool import EnginePool

__all__ = ["check_importance", "importance_estimate", "importance_sample", "labeled_prefix", "simulate_importance"]


def check_importance(design: ImportanceDesign) -> None:
    """Refuse settings of ``importance`` whose interval needs the pool in memory, saying why.

    Raises
    ------
    ValueError
    """
    why = blocks_refusal(design)
    if why is not None:
        raise ValueError(f"{why}; drop the setting, or load the pool in memory")


def importance_sample(pool: EnginePool, design: ImportanceDesign, measure: Measure, budget: int,
                      seed: int) -> PlannedSample:
    """The first ``budget`` distinct items the design draws with ``seed``, in order of first draw (one pass).

    Their :attr:`~labelwise.engines.plan.PlannedSample.inclusion` is the proposal ``q`` of their block.
    """
    check_importance(design)
    q = block_proposal(pool.summary, measure, pool.system_names, design.lam, design.defensive)
    blocks, ranks = BlockDraws(seed, q, pool.summary.counts).ranks(min(budget, pool.n_items))
    ids = pool.hash_order(seed).items_at(blocks, ranks)
    return PlannedSample(ids, q[blocks], pool.n_items, pool.summary.keys[blocks])


def labeled_prefix(sample_ids: np.ndarray, handed: int, ids: np.ndarray,
                   labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The items handed out before the first one without a label, and their labels: the labeled prefix of the
    draws an in-memory session estimates from (labels out of order never bias an estimate)."""
    handed_ids = sample_ids[:handed]
    at = np.searchsorted(ids, handed_ids)  # ids are sorted
    known = (at < ids.size) & (ids[np.minimum(at, ids.size - 1)] == handed_ids)
    k = int(np.argmin(known)) if not known.all() else handed
    return handed_ids[:k], labels[at[:k]]


def importance_estimate(design: ImportanceDesign, summary: BlockSummary, target: Measure, measure: Measure,
                        system_names: tuple[str, ...], seed: int, blocks: np.ndarray, outputs: Outputs,
                        labels: np.ndarray, handed: int, level: float = 0.95,
                        reused_loss: np.ndarray | None = None) -> Estimate:
    """The estimate of the in-memory design from the labeled prefix of an engine session's items.

    Parameters
    ----------
    design : ImportanceDesign
    summary : BlockSummary
    target : Measure
        The session's measure (it shaped the proposal and the model).
    measure : Measure
        The measure to estimate (the target or another: sample reuse).
    system_names : tuple of str
    seed : int
    blocks : ndarray of int, shape (k,)
        Block (index into the summary) of the first ``k`` items handed out, all labeled.
    outputs : Outputs
        Their systems' outputs.
    labels : ndarray of int, shape (k,)
    handed : int
        Items handed out: when it is ``k`` every draw so far counts, else the draws before the first of item ``k``.
    level : float
    reused_loss : ndarray, shape (2, G, d), optional
        Another measure's mean loss of every block's items for each label: the model's part of its interval
        (:func:`~labelwise.designs.hashed_importance.hashed_importance_estimate`).

    Returns
    -------
    Estimate
        The importance-sampling estimate of the draws and its interval, undefined without labels.
    """
    k = labels.size
    if k == 0:
        return Estimate.undefined(measure, level)
    q = block_proposal(summary, target, system_names, design.lam, design.defensive)
    draws = BlockDraws(seed, q, summary.counts)
    n_draws = draws.draws_for(handed) if k == handed else draws.draws_for(k + 1) - 1
    item = draws.appearance(n_draws)
    losses = measure.loss(outputs, labels)
    return hashed_importance_estimate(measure, design, block_model(design, summary, target, system_names), q,
                                      losses[item], 1.0 / (summary.n_items * q[blocks[item]]),
                                      np.ones(n_draws, dtype=np.int64), blocks, labels, losses, k, level, reused_loss)


def simulate_importance(pool: EnginePool, design: ImportanceDesign, measure: Measure, seed: int, marks: list[int],
                        level: float) -> list[Estimate]:
    """One simulated run: the draws of ``marks[-1]`` distinct items, labeled from the label column, an estimate
    after the first ``k`` at every mark."""
    sample = importance_sample(pool, design, measure, marks[-1], seed)
    labels = pool.source.labels(sample.item_ids)
    blocks = np.searchsorted(pool.summary.keys, sample.keys)
    return [importance_estimate(design, pool.summary, measure, measure, pool.system_names, seed, blocks[:k],
                                pool.source.outputs(sample.item_ids[:k]), labels[:k], k, level) for k in marks]
