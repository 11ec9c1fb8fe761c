"""The estimate of an engine session from its labels so far, by design (:class:`~labelwise.engines.EngineSession`).

Horvitz-Thompson over the planned sample (:meth:`~labelwise.engines.plan.PlannedSample.estimate`; ``poisson``
widened by the oracle model of the blocks, as in memory), the rounds of ``online-poisson``, the strata of
``stratified``, and for ``importance`` the items handed out before the first unlabeled one, as an in-memory
session estimates from that prefix.  ``online-poisson`` and ``importance`` model the unlabeled items of a
measure reused from the labels by its blocks' mean losses (:meth:`~labelwise.engines.EngineSession.block_losses`),
as in memory.  A ratio at 0 with no hit labeled reaches the hits the items not labeled may hold, its numerator's
support counted on the score blocks (:mod:`~labelwise.estimators.zero_hits`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..designs.poisson_blocks import block_model_widening
from ..estimators import Estimate
from ..estimators.zero_hits import support_terms, with_zero_hits
from ..measures import Measure
from ..pool import Outputs, Pool
from .blocks import depends_on_predictions_only
from .importance import importance_estimate, labeled_prefix
from .strata import stratified_estimate, summary_slope_moments

if TYPE_CHECKING:
    from .session import EngineSession

__all__ = ["session_estimate"]


def session_estimate(session: EngineSession, measure: Measure, level: float) -> Estimate:
    """``measure``'s estimate at ``level`` from ``session``'s labels so far (module docstring).

    Parameters
    ----------
    session : EngineSession
    measure : Measure
        The session's measure or another of its pool (sample reuse).
    level : float

    Returns
    -------
    Estimate
    """
    ids, labels = session.labeled()
    if session.with_replacement:
        ids, labels = labeled_prefix(session.sample.item_ids, session.meta["handed"], ids, labels)
    if not ids.size:
        return Estimate.undefined(measure, level)
    outputs = _labeled_outputs(session, ids)
    est = _design_estimate(session, measure, level, ids, labels, outputs)
    return with_zero_hits(est, measure, lambda part: _block_support(session, part), outputs, labels, ids)


def _block_support(session: EngineSession, part: Measure) -> np.ndarray | None:
    """:func:`~labelwise.estimators.zero_hits.support_terms` of ``part`` from one item per score block, exact
    for a measure whose losses the predictions determine (``None`` for any other)."""
    rep = session.summary.representatives(session.columns.system_names).outputs()
    return support_terms(part, rep, session.summary.counts) if depends_on_predictions_only(part, rep) else None


def _design_estimate(session: EngineSession, measure: Measure, level: float, ids: np.ndarray, labels: np.ndarray,
                     outputs: Outputs) -> Estimate:
    """The design's estimate from the labeled items ``ids`` (module docstring)."""
    if session.online:
        rounds = session.rounds()
        return rounds.estimate(measure, measure.loss(outputs, labels), session.round_log(ids, labels), level,
                               rep_loss=session.block_losses(measure))
    if session.with_replacement:
        blocks = np.searchsorted(session.summary.keys, session.handed_blocks(ids))
        target = session.make_measure()
        return importance_estimate(session.design, session.summary, target, measure,
                                   session.columns.system_names, session.meta["seed"], blocks, outputs, labels,
                                   session.meta["handed"], level,
                                   None if measure == target else session.block_losses(measure))
    if session.strata is not None:
        slopes = summary_slope_moments(measure, session.stratum_summary, session.columns.system_names,
                                       session.strata.sizes.size)
        return stratified_estimate(measure, outputs, labels, session.handed_blocks(ids), session.strata.sizes,
                                   level, slopes)
    sample = session.sample
    inclusion = sample.inclusion[pd.Index(sample.item_ids).get_indexer(ids)]
    cells = session.summary.loss_cells(measure, session.columns.system_names) if sample.uniform else None
    return sample.estimate(measure, outputs, labels, inclusion, level, cells,
                           _poisson_model(session, measure, ids, labels, level))


def _labeled_outputs(session: EngineSession, ids: np.ndarray) -> Outputs:
    """The systems' outputs of the labeled items ``ids``, from the outputs stored when they were handed out."""
    rows = session.conn.execute("SELECT item_id, vals FROM outputs").fetchall()  # the items handed out
    c = session.columns
    frame = pd.DataFrame([json.loads(v) for _, v in rows], columns=list(c.outputs))
    frame.insert(0, c.id, [i for i, _ in rows])
    frame = frame.set_index(c.id).loc[ids].reset_index()
    return Pool.from_dataframe(frame, label_col=None, **c.options()).outputs()


def _poisson_model(session: EngineSession, measure: Measure, ids: np.ndarray, labels: np.ndarray,
                   level: float) -> Callable[[Estimate, np.ndarray, np.ndarray], Estimate] | None:
    """``poisson``'s view of the items not labeled yet through the oracle model of the blocks, for the
    session's own measure (:func:`~labelwise.designs.poisson_blocks.block_model_widening`, as in memory)."""
    if session.design.name != "poisson":
        return None
    blocks = np.searchsorted(session.summary.keys, session.handed_blocks(ids))
    return block_model_widening(session.design, session.summary, session.make_measure(), measure,
                                session.columns.system_names, session.meta["budget"], len(session.sample), blocks,
                                labels, level)
