"""Sampling designs on score blocks: per-block inclusion probabilities, a hashed sample, its estimate.

A design decides an inclusion probability ``b`` per block from the block
summary (:mod:`labelwise.engines.blocks`); every engine then keeps the items
with ``u = H(item_id, seed) < b`` (:mod:`labelwise.engines.hashing`).  The
inclusions are independent (Poisson sampling), so the Horvitz-Thompson
estimate (Yilmaz et al., "Sample Efficient Model Evaluation", 2021, eq. 18)
with its Poisson-sampling covariance (eqs. 25-28) applies with ``pi = b``.
The sample is handed out in increasing ``u / b``: given inclusion ``u / b``
is uniform on [0, 1) and independent across items, so this is a uniformly
random order, and the first ``k`` of ``|S|`` sampled items have inclusion
probabilities ``b k / |S|`` (as in :class:`labelwise.designs.PoissonSampler`).

* ``passive``: the same ``b`` for every item, a little above ``M / N``
  (:func:`~labelwise.designs.hashed.covering_bound`), so the sample holds the
  ``M`` items of smallest ``u`` but with probability about 1e-9.  Its first
  ``k`` items are then the ``k`` smallest ``u`` of the pool: a simple random
  sample of ``k`` items, the one the in-memory ``passive`` design draws for
  the same seed (:mod:`labelwise.designs.hashed`), estimated as it does
  (the sample's plug-in, the Dirichlet posterior over the loss cells).
* ``poisson``: Yilmaz et al. (2021) Algorithm 3
  (:func:`labelwise.designs.inclusion_probabilities`) on the blocks'
  deviations ``h`` (eq. 12) under the systems' prior shrunk by ``lam``
  (eq. 13), mixed with a uniform share ``defensive``, for a fixed size: the
  ``M`` sampled items of smallest ``u / b`` (:attr:`Plan.size`, sequential
  Poisson sampling), the sample the in-memory ``poisson`` design draws for
  the same seed, with ``|S| = M``.

``stratified`` draws batch by batch on the in-memory design's strata
(:mod:`labelwise.engines.strata`); ``importance`` draws with replacement
from its block proposal as in memory (:mod:`labelwise.engines.importance`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..designs import Design
from ..designs.hashed import covering_bound, hand_out_order
from ..designs.importance import importance_moments_estimate, with_posterior
from ..designs.poisson import POISSON_BASIS, block_inclusion_probabilities
from ..estimators import (
    Estimate,
    horvitz_thompson_moments,
    horvitz_thompson_totals_covariance,
    make_estimate,
    with_fieller,
)
from ..measures import Measure
from .blocks import BlockSummary

__all__ = ["ENGINE_DESIGNS", "IMPORTANCE", "ONLINE", "PER_BATCH", "PLANNED_DESIGNS", "STRATIFIED", "Plan", "PlannedSample",
           "block_inclusion", "check_engine_design", "hand_out_order"]

#: Designs planned once per pool (:func:`block_inclusion`).
PLANNED_DESIGNS = ("passive", "poisson")
#: The design drawing with replacement from a block proposal (:mod:`labelwise.engines.importance`).
IMPORTANCE = "importance"
#: The design planned anew for every batch (:mod:`labelwise.engines.online`).
ONLINE = "online-poisson"
#: The design allocating every batch over its strata (:mod:`labelwise.engines.strata`).
STRATIFIED = "stratified"
#: Designs that draw at every batch rather than once at ``init``.
PER_BATCH = (ONLINE, STRATIFIED)
#: Designs an engine pool runs (by name).
ENGINE_DESIGNS = (*PLANNED_DESIGNS, IMPORTANCE, *PER_BATCH)
#: Why the adaptive designs drawing with replacement do not run on blocks.
_WITH_REPLACEMENT = ("it draws items one at a time with replacement from a proposal that adapts after every batch, "
                     "which a one-pass hashed Poisson draw cannot reproduce; online-poisson is its counterpart on "
                     "engine pools (the same oracle model, without replacement)")


def block_inclusion(design: Design, summary: BlockSummary, measure: Measure, budget: int,
                    system_names: tuple[str, ...]) -> np.ndarray:
    """Inclusion probability ``b`` of the items of every block (module docstring).

    Parameters
    ----------
    design : Design
        One of :data:`PLANNED_DESIGNS`.
    summary : BlockSummary
    measure : Measure
        The target measure (shapes ``poisson``).
    budget : int
        ``M``, the expected number of labels.
    system_names : tuple of str

    Returns
    -------
    ndarray, shape (G,)
        ``b`` in [0, 1], with ``sum counts b = min(M, N)``.

    Raises
    ------
    ValueError
        For a design an engine pool does not run.
    """
    check_engine_design(design.name)
    if design.name not in PLANNED_DESIGNS:
        raise ValueError(f"{design.name} has no per-block inclusion plan: run it with EngineSession or "
                         "labelwise.engines.simulate.simulate_engine")
    counts = summary.counts.astype(float)
    N = counts.sum()
    M = float(min(budget, N))
    if design.name == "passive":
        return np.full(counts.size, float(covering_bound(M, N)))
    return block_inclusion_probabilities(summary, measure, M, system_names, design.lam, design.defensive)


def check_engine_design(name: str) -> None:
    """Refuse a design that does not run on engine pools, saying why and what to use.

    Raises
    ------
    ValueError
    """
    if name in ENGINE_DESIGNS:
        return
    why = _WITH_REPLACEMENT if name in ("ais", "oasis") else "it has no per-block plan"
    raise ValueError(f"design {name!r} does not run on engine pools: {why}. Choose from {', '.join(ENGINE_DESIGNS)} "
                     "(or load the pool in memory)")


@dataclass(frozen=True)
class Plan:
    """A design's inclusion probability per block of a pool.

    Attributes
    ----------
    blocks : ndarray of int64, shape (G,)
        Block keys.
    inclusion : ndarray, shape (G,)
        ``b`` of the items of each block.
    uniform : bool
        Whether the sample's first ``k`` items are a simple random sample (``passive``).
    size : int, optional
        A fixed sample size ``M``: the ``M`` items of smallest ``u / b`` (``poisson``,
        :func:`~labelwise.designs.hashed.first_by_ratio`); else every item with ``u < b``.
    """

    blocks: np.ndarray
    inclusion: np.ndarray
    uniform: bool = False
    size: int | None = None


@dataclass(frozen=True)
class PlannedSample:
    """The items a design samples from an engine pool, in hand-out order.

    Attributes
    ----------
    item_ids : ndarray of int64, shape (|S|,)
    inclusion : ndarray, shape (|S|,)
        Their ``b`` (``importance``: the proposal ``q`` of their block, :mod:`labelwise.engines.importance`).
    n_items : int
        Pool size ``N``.
    keys : ndarray of int64, shape (|S|,), optional
        Their block keys (``None`` for a sample read back from a session file).
    uniform : bool
        :attr:`Plan.uniform`.
    """

    item_ids: np.ndarray
    inclusion: np.ndarray
    n_items: int
    keys: np.ndarray | None = None
    uniform: bool = False

    def __len__(self) -> int:
        return int(self.item_ids.size)

    def estimate(self, measure: Measure, outputs, labels: np.ndarray, inclusion: np.ndarray,
                 level: float = 0.95, cells: np.ndarray | None = None,
                 widen: Callable[[Estimate, np.ndarray, np.ndarray], Estimate] | None = None) -> Estimate:
        """Horvitz-Thompson estimate (Yilmaz et al. (2021) eq. 18, covariance eqs. 25-28) from labeled items.

        Parameters
        ----------
        measure : Measure
        outputs : Outputs
            The systems' outputs of the labeled items.
        labels : ndarray of int
            Their labels.
        inclusion : ndarray
            Their ``b``.
        level : float
        cells : ndarray, optional
            The pool's loss cells (:meth:`~labelwise.engines.blocks.BlockSummary.loss_cells`): a
            :attr:`uniform` sample's interval is their posterior.
        widen : callable, optional
            ``widen(estimate, losses, pi)``: the estimate with the items not labeled yet seen through the
            oracle model (``poisson``'s :func:`~labelwise.designs.poisson_blocks.block_model_estimate`), before Fieller's.

        The ``k`` labeled items are taken as the first ``k`` handed out, a
        uniformly random subset of the sample: ``pi = b k / |S|``.  A
        :attr:`uniform` sample is estimated as the in-memory ``passive`` design does.
        """
        k = labels.size
        if k == 0:
            return Estimate.undefined(measure, level)
        losses = measure.loss(outputs, labels)
        if self.uniform:
            est = importance_moments_estimate(measure, losses, np.ones(k), np.ones(k, dtype=np.int64), k, level)
            return est if cells is None else with_posterior(est, measure, cells, losses, np.ones(k))
        pi = np.minimum(inclusion * k / len(self), 1.0)
        R, cov = horvitz_thompson_moments(measure, losses, pi, self.n_items)
        est = make_estimate(measure, R, cov, k, k, level, basis=POISSON_BASIS)
        if widen is not None:
            est = widen(est, losses, pi)
        return with_fieller(est, measure, lambda: horvitz_thompson_totals_covariance(losses, pi, self.n_items))
