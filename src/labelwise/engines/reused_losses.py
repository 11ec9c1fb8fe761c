"""A measure's mean loss of every block's items for each label on an engine pool (sample reuse).

The interval of a measure estimated from a session's labels models the
unlabeled items of every block by the block's loss for each label
(:func:`~labelwise.designs.group_losses.group_losses` in memory).  For a
measure of the predictions the blocks' representatives give it
(:meth:`~labelwise.engines.blocks.BlockSummary.representatives`).  A curve's
loss (:class:`~labelwise.measures.thresholds.ThresholdMeasure`: PR and ROC
curves, AUC) varies within a block with the number ``k`` of its thresholds at
or below an item's score; one aggregation over the pool counts the items of
every (block, ``k``) pair and keeps one score of each
(:meth:`~labelwise.engines.source.PoolSource.threshold_groups`), and the
block's mean loss is the count-weighted mean of its pairs' losses, as in
memory.  Other measures of the scores (Brier) have no such key: ``None``, the
interval rests on the labeled items.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..designs.group_losses import mean_group_losses
from ..measures import CombinedMeasure, Measure
from ..measures.thresholds import ThresholdMeasure
from ..pool import Outputs, Pool
from .blocks import BlockSummary, depends_on_predictions_only
from .columns import EngineColumns

__all__ = ["ThresholdGroups", "engine_block_losses", "threshold_column"]

#: ``groups(column, thresholds)``: one pass counting the items per block and thresholds at or below their value of
#: ``column`` (:meth:`~labelwise.engines.source.PoolSource.threshold_groups`, on the blocks of the summary).
ThresholdGroups = Callable[[str, np.ndarray], pd.DataFrame]


def threshold_column(columns: EngineColumns, measure: ThresholdMeasure) -> str | None:
    """The column ``measure`` thresholds: its system's score, else its probability (as it reads
    :class:`~labelwise.pool.Outputs`); ``None`` for a pool of predictions only."""
    named = columns.scores or columns.probs
    return named[measure.system] if named else None


def engine_block_losses(measure: Measure, summary: BlockSummary, columns: EngineColumns,
                        groups: ThresholdGroups) -> np.ndarray | None:
    """``measure``'s mean loss of every block's items for each label, ``(2, G, d)`` (module docstring).

    Parameters
    ----------
    measure : Measure
        One measure, or several combined (each part's losses in turn).
    summary : BlockSummary
        The blocks the design models.
    columns : EngineColumns
    groups : ThresholdGroups
        Called once per curve among the parts, never for measures of the predictions.

    Returns
    -------
    ndarray or None
        ``None`` when a part is neither a measure of the predictions nor a curve.
    """
    G = summary.keys.size
    rep = summary.representatives(columns.system_names).outputs()
    parts = []
    for part in measure.parts if isinstance(measure, CombinedMeasure) else [measure]:
        # a curve first: the representatives have no scores, and thresholds outside [0, 1] would cut none of
        # their probabilities (a curve of the scores would pass for one of the predictions)
        column = threshold_column(columns, part) if isinstance(part, ThresholdMeasure) else None
        if column is None:
            if isinstance(part, ThresholdMeasure) or not depends_on_predictions_only(part, rep):
                return None
            parts.append(mean_group_losses(part, rep, np.arange(G), np.ones(G), G))
            continue
        found = groups(column, part.thresholds)
        block = np.searchsorted(summary.keys, found["block"].to_numpy(np.int64))
        outputs = _valued_outputs(summary, block, found["value"].to_numpy(float), columns)
        parts.append(mean_group_losses(part, outputs, block, found["n"].to_numpy(float), G))
    return np.concatenate(parts, axis=2)


def _valued_outputs(summary: BlockSummary, block: np.ndarray, value: np.ndarray, columns: EngineColumns) -> Outputs:
    """Outputs of one item per (block, ``k``) pair: its block's predictions and ``value`` as every system's score
    (probability when the pool has no scores)."""
    S = summary.n_systems
    preds = (summary.keys[block, None] >> np.arange(S)[None, :]) & 1 if summary.has_preds else None
    values = np.repeat(value[:, None], S, axis=1)
    scored = bool(columns.scores)
    return Pool.from_arrays(np.arange(block.size), preds=preds, probs=None if scored else values,
                            scores=values if scored else None, system_names=columns.system_names, n_classes=2,
                            name="pairs").outputs()
