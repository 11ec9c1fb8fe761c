"""What every sampling design provides: settings (:class:`Design`) and one run (:class:`Sampler`).

A design is a frozen, keyword-only dataclass of settings; its
:meth:`~Design.spec` (name and fields) is what a session file stores.
:meth:`Design.start` fits it to a pool and a target measure and returns a
:class:`Sampler`, which holds everything the run learns: it draws batches
(:meth:`Sampler.draw`), learns from labels as they arrive
(:meth:`Sampler.observe`) and turns labeled draws into an estimate
(:meth:`Sampler.estimate`).  What a sampler needs to resume is replayed from
the stored draws and labels, plus the small JSON :meth:`Sampler.state` it
keeps per batch.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from ..draws import Draws, Sample
from ..estimators import Estimate
from ..measures import Measure
from ..pool import Pool

__all__ = ["ORACLES", "Design", "Sampler", "check_oracle"]

#: How labels behave: one true label per item, or a fresh label from p(y|x) at every draw.
ORACLES = ("deterministic", "stochastic")


def check_oracle(oracle: str) -> str:
    """Validate an oracle mode."""
    if oracle not in ORACLES:
        raise ValueError(f"oracle: choose 'deterministic' or 'stochastic', got {oracle!r}")
    return oracle


@dataclass(frozen=True, kw_only=True)
class Design(ABC):
    """Settings of a sampling design; subclasses register a unique ``name``."""

    #: the name the design is registered and stored under
    name: ClassVar[str] = "design"
    #: whether the design may draw an item again (a free re-draw under a deterministic oracle)
    with_replacement: ClassVar[bool] = True

    def spec(self) -> dict:
        """JSON-able description: ``{"design": name, **settings}``."""
        return {"design": self.name, **{f.name: getattr(self, f.name) for f in fields(self)}}

    @abstractmethod
    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> Sampler:
        """A new run of this design on ``pool`` for ``measure``.

        Parameters
        ----------
        pool : Pool
        measure : Measure
            The target measure (it shapes the proposal).
        rng : numpy.random.Generator
            The run's only source of randomness.
        budget : int, optional
            Labels the run will ask for in total, for designs whose
            probabilities depend on it (``poisson``).
        oracle : {"deterministic", "stochastic"}
            ``"deterministic"``: an item has one true label, asked once.
            ``"stochastic"`` (noisy or several annotators): every draw is
            labeled afresh from ``p(y|x)`` and the measure is its expectation.
        """


class SharedCache(dict):
    """A cache that a sampler's copies (:meth:`Sampler.copy`) share and that is stored empty: for what depends
    only on the pool and the sampler's set-up."""

    def __deepcopy__(self, memo: dict) -> SharedCache:
        return self

    def __reduce__(self) -> tuple:
        return SharedCache, ()


class Sampler(ABC):
    """One run of a design: draws, learns from labels, estimates.

    Attributes
    ----------
    pool : Pool
    measure : Measure
        The target measure.
    oracle : str
    rng : numpy.random.Generator
    """

    #: Whether the design's variance is uniform sampling's less the variance between score strata (Cochran,
    #: *Sampling Techniques*, 3rd ed., 1977, sec. 5.6), a gain the labels show; a variance floor computed as for a
    #: uniform sample (:func:`labelwise.measures.auc_variance.with_prior_variance`) keeps that gain.
    stratified_gain: bool = False

    def __init__(self, pool: Pool, measure: Measure, oracle: str, rng: np.random.Generator):
        self.pool, self.measure, self.oracle, self.rng = pool, measure, check_oracle(oracle), rng

    @property
    def stochastic(self) -> bool:
        """Whether every draw is labeled afresh (noisy or several annotators)."""
        return self.oracle == "stochastic"

    def copy(self, rng: np.random.Generator) -> Sampler:
        """An independent copy drawing from ``rng`` (sharing the pool and the measure).

        A copy of a sampler that has seen no label is a new run without the
        set-up cost of :meth:`Design.start` (simulations reuse one set-up).
        """
        return copy.deepcopy(self, memo={id(self.pool): self.pool, id(self.measure): self.measure, id(self.rng): rng})

    @abstractmethod
    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        """Draw until ``n_new`` distinct items that are not yet ``labeled`` are included.

        Re-draws of labeled items (and repeats within the batch) are part of
        the returned draws; under a deterministic oracle they cost no label.
        Under a stochastic oracle every draw costs a label: return exactly
        ``n_new`` draws, each with count 1.
        """

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        """Learn from new labels (adaptive designs); static designs ignore them.

        Under a stochastic oracle ``items`` may repeat and may have been labeled before.
        """

    def state(self) -> dict:
        """JSON-able state of the batch just drawn that labels cannot replay (stored with the batch)."""
        return {}

    def set_state(self, states: list[dict]) -> None:
        """Restore every batch's :meth:`state`, in order, after the labels were replayed."""

    @abstractmethod
    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        """Estimate ``measure`` (the target or any other: sample reuse) from labeled draws of this run."""

    def losses(self, measure: Measure, sample: Sample) -> np.ndarray:
        """``measure``'s loss of every labeled draw, shape ``(n, d)``; zero for the draws of excluded items.

        An item excluded as not judgeable lies outside the population: its
        zero loss makes every total a total over the judgeable items (a
        domain estimate), exact for measures of ratios of totals
        (:attr:`~labelwise.measures.Measure.scale_free`).
        """
        if sample.answers is not None:
            # several answers to a draw (stochastic oracle): the mean of their losses, whose expectation
            # given the item is the item's expected loss, as that of one answer
            losses, rows, share = self.answer_losses(measure, sample)
            return np.stack([np.bincount(rows, weights=col * share, minlength=len(sample.draws))
                             for col in losses.T], axis=1)
        losses = measure.loss(self.pool.outputs(sample.draws.items), sample.labels)
        return losses if sample.excluded is None else np.where(sample.excluded[:, None], 0.0, losses)

    def answer_losses(self, measure: Measure, sample: Sample) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The loss of every answer, first answers then further ones (:attr:`Sample.answers`).

        Returns
        -------
        losses : ndarray, shape (m, d)
        rows : ndarray of int, shape (m,)
            The draw (row of ``sample``) each answer answers.
        share : ndarray, shape (m,)
            One over the number of answers of that draw.
        """
        rows, labels = np.arange(len(sample.draws)), sample.labels
        if sample.answers is not None:
            rows, labels = np.r_[rows, sample.answers[0]], np.r_[labels, sample.answers[1]]
        losses = measure.loss(self.pool.outputs(sample.draws.items[rows]), labels)
        if sample.excluded is not None:
            losses = np.where(sample.excluded[rows][:, None], 0.0, losses)
        return losses, rows, 1.0 / np.bincount(rows, minlength=len(sample.draws))[rows]
