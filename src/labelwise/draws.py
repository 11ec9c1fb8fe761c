"""What a design draws and what an estimator is handed: :class:`Draws` and :class:`Sample`."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = ["Draws", "Sample"]


@dataclass(frozen=True)
class Draws:
    """Draws in the order they were drawn.

    Attributes
    ----------
    items : ndarray of int
        Pool positions (an item may appear more than once under with-replacement designs).
    weight : ndarray of float
        ``p(x) / q(x)`` at draw time (Marchant & Rubinstein, KDD 2021, Algorithm 1); 1 for designs without weights.
    prob : ndarray of float
        Probability of the draw (``q(x)``), or the inclusion probability for
        designs without replacement.
    stratum : ndarray of int, optional
        Stratum of each draw (-1, the default, where the design has no strata).
    count : ndarray of int, optional
        How many identical draws a row stands for (default 1).  With-replacement
        designs aggregate the free re-draws of already labeled items of one
        batch into one row per item, so a proposal that keeps most of its mass
        on labeled items costs no more memory than the labels.
    round : ndarray of int, optional
        The batch (0, 1, 2, ...) each draw belongs to (default 0).
    """

    items: np.ndarray
    weight: np.ndarray
    prob: np.ndarray
    stratum: np.ndarray | None = None
    count: np.ndarray | None = None
    round: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.items)
        for name, fill in (("stratum", -1), ("count", 1), ("round", 0)):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.full(n, fill, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.items.shape[0])

    @property
    def n_draws(self) -> int:
        """Number of draws (rows weighted by their counts)."""
        return int(self.count.sum())

    @classmethod
    def empty(cls) -> Draws:
        """No draws."""
        return cls(np.empty(0, np.int64), np.empty(0), np.empty(0))

    @classmethod
    def concat(cls, parts: list[Draws]) -> Draws:
        """The draws of ``parts`` one after another."""
        if not parts:
            return cls.empty()
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)))

    def head(self, n: int) -> Draws:
        """The first ``n`` rows."""
        return Draws(*(getattr(self, f.name)[:n] for f in fields(self)))

    def in_round(self, r: int) -> Draws:
        """The same draws, every one marked as drawn in round ``r``."""
        return Draws(self.items, self.weight, self.prob, self.stratum, self.count,
                     np.full(len(self), r, dtype=np.int64))


@dataclass(frozen=True)
class Sample:
    """Labeled draws handed to an estimator: the draws, each draw's label and the labels counted.

    ``excluded`` marks the draws of items excluded from the population as not
    judgeable (:meth:`labelwise.Session.exclude`); their labels are
    placeholders and their losses count as zero (:meth:`Sampler.losses`).
    ``answers`` holds further answers to labeled draws under a stochastic
    oracle, as (draw index, label) arrays: a draw's loss is then the mean
    over its answers.
    """

    draws: Draws
    labels: np.ndarray
    n_labels: int
    excluded: np.ndarray | None = None
    answers: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def judged_labels(self) -> np.ndarray:
        """Every answer given to a draw not excluded: the labels without the placeholders, with further answers."""
        judged = np.ones(len(self.labels), dtype=bool) if self.excluded is None else ~self.excluded
        if self.answers is None:
            return self.labels[judged]
        rows, further = self.answers
        return np.concatenate([self.labels[judged], further[judged[rows]]])
