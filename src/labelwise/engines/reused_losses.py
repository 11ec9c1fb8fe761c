"""A measure's mean loss of every block's items for each label on an engine pool (sample reuse).

The interval of a measure estimated from a session's labels models the
unlabeled items of every block by the block's mean loss for each label
(:func:`~labelwise.designs.group_losses.group_losses` in memory), from one
aggregation over the pool per measure of the scores:

* a measure of the predictions: the blocks' representatives give it
  (:meth:`~labelwise.engines.blocks.BlockSummary.representatives`), no pass;
* a curve (:class:`~labelwise.measures.thresholds.ThresholdMeasure`: PR and
  ROC curves, AUC), whose loss varies within a block with the number ``k`` of
  its thresholds at or below an item's score: the items of every
  (block, ``k``) pair are counted with one score of each
  (:meth:`~labelwise.engines.source.PoolSource.threshold_groups`), and the
  block's mean loss is the count-weighted mean of its pairs' losses;
* the Brier score, quadratic in the probability ``p``: a quadratic ``f`` is
  its Lagrange interpolation at 0, 1/2 and 1, so a block's mean of ``f(p)``
  is ``f(0) E[(2p - 1)(p - 1)] + f(1/2) E[4p(1 - p)] + f(1) E[p(2p - 1)]``,
  from the block's sums of ``p`` and ``p^2``
  (:meth:`~labelwise.engines.source.PoolSource.value_moments`).

Any other measure: ``None``, the interval rests on the labeled items.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..designs.group_losses import mean_group_losses
from ..measures import Brier, CombinedMeasure, Measure
from ..measures.thresholds import ThresholdMeasure
from ..pool import Outputs, Pool
from .blocks import BlockSummary, depends_on_predictions_only
from .columns import EngineColumns
from .source import PoolSource

__all__ = ["engine_block_losses"]


def engine_block_losses(measure: Measure, summary: BlockSummary, columns: EngineColumns,
                        source: Callable[[], PoolSource], strata=None) -> np.ndarray | None:
    """``measure``'s mean loss of every block's items for each label, ``(2, G, d)`` (module docstring).

    Parameters
    ----------
    measure : Measure
        One measure, or several combined (each part's losses in turn).
    summary : BlockSummary
        The blocks the design models (within the score ``strata`` if given).
    columns : EngineColumns
    source : callable
        The pool's rows, asked for a pass once per measure of the scores among the parts.
    strata : EngineStrata, optional

    Returns
    -------
    ndarray or None
        ``None`` when a part is none of the measures of the module docstring.
    """
    G = summary.keys.size
    rep = summary.representatives(columns.system_names).outputs()
    parts = []
    for part in measure.parts if isinstance(measure, CombinedMeasure) else [measure]:
        # a measure of the scores first: the representatives have no scores, and a curve's thresholds outside
        # [0, 1] would cut none of their probabilities (it would pass for a measure of the predictions)
        if isinstance(part, ThresholdMeasure) and (columns.scores or columns.probs):
            column = (columns.scores or columns.probs)[part.system]  # as the measure reads Outputs
            found = source().threshold_groups(column, part.thresholds, strata)
            block = np.searchsorted(summary.keys, found["block"].to_numpy(np.int64))
            outputs = _valued_outputs(summary, block, found["value"].to_numpy(float), columns, bool(columns.scores))
            parts.append(mean_group_losses(part, outputs, block, found["n"].to_numpy(float), G))
        elif isinstance(part, Brier) and columns.probs:
            found = source().value_moments(columns.probs[part.system], strata)
            block = np.searchsorted(summary.keys, found["block"].to_numpy(np.int64))
            n = found["n"].to_numpy(float)
            m1, m2 = found["total"].to_numpy(float) / n, found["total_sq"].to_numpy(float) / n
            # the Lagrange basis of the points 0, 1/2, 1 averaged over the block (module docstring)
            weight = np.stack([2 * m2 - 3 * m1 + 1, 4 * (m1 - m2), 2 * m2 - m1], axis=1).ravel()
            at = np.repeat(block, 3)
            outputs = _valued_outputs(summary, at, np.tile([0.0, 0.5, 1.0], block.size), columns, False)
            parts.append(mean_group_losses(part, outputs, at, weight, G))
        elif not isinstance(part, ThresholdMeasure | Brier) and depends_on_predictions_only(part, rep):
            parts.append(mean_group_losses(part, rep, np.arange(G), np.ones(G), G))
        else:
            return None
    return np.concatenate(parts, axis=2)


def _valued_outputs(summary: BlockSummary, block: np.ndarray, value: np.ndarray, columns: EngineColumns,
                    scored: bool) -> Outputs:
    """Outputs of items of the blocks ``block``: their block's predictions and ``value`` as every system's score
    (``scored``) or probability."""
    S = summary.n_systems
    preds = (summary.keys[block, None] >> np.arange(S)[None, :]) & 1 if summary.has_preds else None
    values = np.repeat(value[:, None], S, axis=1)
    return Pool.from_arrays(np.arange(block.size), preds=preds, probs=None if scored else values,
                            scores=values if scored else None, system_names=columns.system_names, n_classes=2,
                            name="values").outputs()
