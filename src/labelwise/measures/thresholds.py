"""Measures of one system's score cut at a grid of thresholds (PR and ROC curves, AUC).

An item's score enters only through ``k(x)``, the number of thresholds at or
below it: ``score >= tau_i`` iff ``i < k(x)`` (thresholds sorted, 0-based).
Items with equal ``k`` share their losses for every label, which is the
:meth:`~labelwise.measures.Measure.loss_key` grouped designs work with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..oracle import score_prior
from ..pool import Outputs
from .binary import BinaryMeasure
from .registry import Options

if TYPE_CHECKING:
    from ..pool import Pool

__all__ = ["ThresholdMeasure", "grid_option"]


def _quantile_grid(scores: np.ndarray, positive_weight: np.ndarray, n: int) -> np.ndarray:
    """The distinct ``scores`` when at most ``n``; else ``n - n // 2`` quantiles of ``scores`` and ``n // 2``
    of ``scores`` weighted by ``positive_weight`` (all scores again when that weight is zero)."""
    distinct = np.unique(scores)
    if distinct.size <= n:
        return distinct
    n_pos = n // 2
    weight = positive_weight if positive_weight.sum() > 0 else np.ones_like(positive_weight)
    levels = lambda k: np.arange(1, k + 1) / (k + 1)
    return np.concatenate([np.quantile(scores, levels(n - n_pos), method="inverted_cdf"),
                           np.quantile(scores, levels(n_pos), weights=weight, method="inverted_cdf")])


class ThresholdMeasure(BinaryMeasure):
    """A binary measure of one system's score at the thresholds ``tau_1 < ... < tau_L``.

    Parameters
    ----------
    thresholds : array-like, shape (L,)
        Thresholds on the system's score (sorted and de-duplicated).
    system : int
        Which system's scores to threshold.
    positive : int
        The positive class.
    system_name : str, optional
        Used in component names.
    """

    spec_fields = ("thresholds", *BinaryMeasure.spec_fields)

    def __init__(self, thresholds: Sequence[float] | np.ndarray, system: int = 0, positive: int = 1,
                 system_name: str | None = None):
        tau = np.unique(np.asarray(thresholds, dtype=float))
        if tau.size == 0 or not np.all(np.isfinite(tau)):
            raise ValueError("thresholds: give at least one finite threshold")
        self.thresholds = tau
        self.L = tau.size
        super().__init__(system, positive, system_name)

    @classmethod
    def grid(cls, pool: Pool, n_thresholds: int = 50, system: int = 0, positive: int = 1,
             system_name: str | None = None, quantiles: bool = False) -> ThresholdMeasure:
        """The measure at ``n_thresholds`` thresholds spread over the scores of ``system`` in ``pool``.

        Parameters
        ----------
        pool : Pool
            Supplies the system's scores (or probabilities of ``positive``).
        n_thresholds : int
            Number of thresholds (fewer when the scores take fewer values).
        system, positive, system_name
            As for the constructor.
        quantiles : bool
            ``False``: evenly spaced from the smallest to the largest score.
            ``True``: half the thresholds at evenly spaced quantiles of the
            scores, half at those of the scores weighted by the system's
            probability of ``positive`` (:func:`~labelwise.oracle.score_prior`:
            the expected positives), so that no bin holds more than about
            ``2 / n`` of the items nor, with roughly calibrated probabilities,
            of the positives; each threshold is a score of the pool, so tied
            scores never straddle one.  The distinct scores themselves when
            there are at most ``n_thresholds`` of them.

        Returns
        -------
        ThresholdMeasure
            Of the class it is called on.
        """
        if n_thresholds < 1:
            raise ValueError(f"n_thresholds: must be at least 1, got {n_thresholds}")
        probe = cls([0.0], system=system, positive=positive, system_name=system_name)
        scores = probe._scores(pool.outputs())
        if quantiles:
            tau = _quantile_grid(scores, score_prior(pool, systems=[system])[:, positive], n_thresholds)
        else:
            lo, hi = float(np.min(scores)), float(np.max(scores))
            tau = np.linspace(lo, hi, n_thresholds) if hi > lo else [lo]
        return cls(tau, system=system, positive=positive, system_name=system_name)

    def _scores(self, outputs: Outputs) -> np.ndarray:
        """The system's score per item, or its probability of ``positive`` when it has no scores."""
        if outputs.scores is not None:
            return outputs.scores[:, self.system]
        p = outputs.require("probs", self.kind)[:, self.system]
        return p if p.ndim == 1 else p[:, self.positive]

    def _k(self, outputs: Outputs) -> np.ndarray:
        """Number of thresholds ``<= score`` per item: ``1{f >= tau_i}`` iff ``i < k``."""
        return np.searchsorted(self.thresholds, self._scores(outputs), side="right")

    def loss_key(self, outputs: Outputs) -> np.ndarray:
        """The loss depends on x only through the number of thresholds below its score."""
        return self._k(outputs).astype(np.int64)


def grid_option(cls: type[ThresholdMeasure], default: int, quantiles: bool) -> Options:
    """Registry options of ``<name>:<n_thresholds>``: ``thresholds`` of :meth:`ThresholdMeasure.grid`.

    Parameters
    ----------
    cls : type
        The measure class.
    default : int
        Thresholds when the name has no argument.
    quantiles : bool
        Passed to :meth:`ThresholdMeasure.grid`.

    Returns
    -------
    callable
        ``options(pool, system, arg) -> {"thresholds": ...}``.
    """

    def options(pool: Pool, system: int, arg: str) -> dict:
        try:
            n = int(arg) if arg else default
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"measure '{cls.kind}:{arg}': write {cls.kind}:<n_thresholds> with a positive "
                             f"integer, e.g. {cls.kind}:{default}")
        return {"thresholds": cls.grid(pool, n, system=system, quantiles=quantiles).thresholds}

    return options
