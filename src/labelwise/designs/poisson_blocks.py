"""``poisson``'s interval on score blocks: the items not labeled yet seen through the oracle model, in memory and on
engine pools alike.

The design-based variance of a Poisson sample (Yilmaz et al., "Sample
Efficient Model Evaluation", 2021, eq. 25) read off the sampled items misses
the rare heavy ones no run has labeled yet;
:func:`~labelwise.estimators.poisson_model.poisson_model_covariance` reads it
over every item of the pool instead, the items not labeled yet at the oracle
model of the score blocks (Platt-recalibrated block priors on strata of prior
bins, as ``online-poisson`` on an engine pool, under its interval's model:
:meth:`~labelwise.engines.online.BlockRounds.interval_posterior`), never
below what labels with no positive yet cannot rule out
(:func:`~labelwise.estimators.with_unseen_labels`).  The in-memory sampler
(:class:`~labelwise.designs.poisson.PoissonSampler`) and engine sessions call
the same functions, so both print the same interval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..estimators import (
    Estimate,
    make_estimate,
    model_interval_covariance,
    with_unseen_labels,
)
from ..estimators.poisson_model import poisson_model_covariance
from ..measures import Measure
from .group_model import MODEL_BASIS

if TYPE_CHECKING:
    from ..engines.blocks import BlockSummary
    from ..engines.online import BlockRounds
    from .poisson import PoissonDesign

__all__ = ["block_model", "block_model_estimate", "block_model_widening"]


def block_model(design: PoissonDesign, summary: BlockSummary, measure: Measure,
                system_names: tuple[str, ...]) -> BlockRounds:
    """The oracle model of the pool's score blocks behind the interval, with ``online-poisson``'s defaults and the
    design's ``lam``."""
    from ..engines.online import BlockRounds  # it builds on the designs
    from .online_poisson import OnlinePoissonDesign

    return BlockRounds(OnlinePoissonDesign(lam=design.lam), summary, measure, system_names)


def block_model_estimate(est: Estimate, measure: Measure, model: BlockRounds, b_blocks: np.ndarray, sample_size: int,
                         blocks: np.ndarray, labels: np.ndarray, losses: np.ndarray, pi: np.ndarray, level: float,
                         known: np.ndarray | None = None) -> Estimate:
    """``est`` (the Horvitz-Thompson estimate of the first ``k`` items of a sample on score blocks) with the design's
    covariance over every item of the pool, the items not labeled yet at the oracle model's labels
    (:func:`~labelwise.estimators.poisson_model.poisson_model_covariance`), split into its likely cases as for
    importance sampling (:func:`~labelwise.estimators.model_interval_covariance`); never below ``est``'s own.

    Parameters
    ----------
    est : Estimate
    measure : Measure
        The design's measure (the model's losses are its).
    model : BlockRounds
        The oracle model of the pool's score blocks.
    b_blocks : ndarray, shape (G,)
        The plan's inclusion probability of every block.
    sample_size : int
        ``|S|``: the first ``k`` items of the sample have inclusion probabilities ``b k / |S|``.
    blocks, labels : ndarray of int, shape (k,)
        Block and label of every labeled item.
    losses : ndarray, shape (k, d)
    pi : ndarray, shape (k,)
        Their inclusion probabilities.
    level : float
    known : ndarray of bool, shape (k,), optional
        The labels the model learns from (not those of items excluded as not judgeable); default all.

    Shared by the in-memory sampler and engine pools, so both print the same interval.
    """
    if not est.all_defined:
        return est
    known = np.ones(blocks.size, dtype=bool) if known is None else known
    J = measure.finite_jacobian(est.R)
    counts = model.summary.counts
    unlabeled = (counts - np.bincount(blocks, minlength=counts.size)).astype(float)
    inclusion = np.minimum(b_blocks * blocks.size / sample_size, 1.0)
    u = np.einsum("cgd,md->cgm", model.rep_loss, J)
    posterior, n_items = model.interval_posterior(blocks[known], labels[known]), int(counts.sum())
    covariance = poisson_model_covariance(u, posterior, unlabeled, inclusion, losses @ J.T, pi, n_items)
    cov = model_interval_covariance(est.cov, covariance, 1, level)
    # no exception labeled, and less than one expected: what the labels cannot rule out
    cov, basis = with_unseen_labels(cov, MODEL_BASIS, u, posterior, unlabeled, labels[known], covariance.exceptions,
                                    n_items)
    return make_estimate(measure, est.R, cov, est.n_labels, est.n_draws, level, basis=basis)


def block_model_widening(design: PoissonDesign, summary: BlockSummary, target: Measure, measure: Measure,
                         system_names: tuple[str, ...], budget: int, sample_size: int, blocks: np.ndarray,
                         labels: np.ndarray, level: float) -> Callable[[Estimate, np.ndarray, np.ndarray], Estimate] | None:
    """For an engine pool's ``poisson`` sample: ``widen(estimate, losses, pi)``, :func:`block_model_estimate` with the
    plan of ``budget`` labels and the oracle model of the blocks, as the in-memory sampler builds them; ``None``
    for another design or a measure other than the session's ``target`` (sample reuse keeps the design's interval).

    ``blocks`` (indices into ``summary``) and ``labels`` are those of the labeled items.
    """
    if design.name != "poisson" or measure != target:
        return None
    from .poisson import block_inclusion_probabilities  # it builds on this module

    model = block_model(design, summary, target, system_names)
    M = min(budget, int(summary.counts.sum()))
    b = block_inclusion_probabilities(summary, target, M, system_names, design.lam, design.defensive)
    return lambda est, losses, pi: block_model_estimate(est, measure, model, b, sample_size, blocks, labels, losses,
                                                        pi, level)
