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
import math
import types
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from functools import cache
from numbers import Integral, Real
from typing import ClassVar, get_type_hints

import numpy as np

from ..draws import Draws, Sample
from ..estimators import Estimate, make_estimate, with_unseen_labels
from ..measures import Measure
from ..pool import Pool

__all__ = ["MEAN_OF_SYSTEMS", "ORACLES", "Design", "Sampler", "check_oracle", "check_share", "check_system",
           "design_scores"]

#: How labels behave: one true label per item, or a fresh label from p(y|x) at every draw.
ORACLES = ("deterministic", "stochastic")


def check_oracle(oracle: str) -> str:
    """Validate an oracle mode."""
    if oracle not in ORACLES:
        raise ValueError(f"oracle: choose 'deterministic' or 'stochastic', got {oracle!r}")
    return oracle


#: The ``system`` setting that ranks items by the mean of every system's probability (the oracle model's prior).
MEAN_OF_SYSTEMS = "mean"


def check_system(value: int | str) -> None:
    """``ValueError`` unless ``system`` is a system's number (0, 1, ...) or :data:`MEAN_OF_SYSTEMS`."""
    if isinstance(value, str) and value != MEAN_OF_SYSTEMS:
        raise ValueError(f"system: a system's number (0, 1, ...) or {MEAN_OF_SYSTEMS!r}, got {value!r}")
    if isinstance(value, int) and value < 0:
        raise ValueError(f"system: must be at least 0, got {value}")


def design_scores(pool: Pool, system: int | str) -> np.ndarray:
    """The score a design ranks and blocks the items by: one system's (:meth:`Pool.primary_scores`), or with
    :data:`MEAN_OF_SYSTEMS` the positive probability of :func:`~labelwise.oracle.score_prior`, the mean of every
    system's probability, as the oracle model's prior reads the systems.

    A measure of several systems needs labels where any of them is uncertain.  The mean of their probabilities
    hedges between their rankings: never far behind the better system's scores, where the other system's can
    be far behind (``benchmarks/system_scores.py`` measures both).
    """
    if system != MEAN_OF_SYSTEMS:
        if system >= pool.n_systems:
            raise ValueError(f"system: the pool has {pool.n_systems} system(s), numbered from 0, got {system}")
        return pool.primary_scores(system)
    from ..oracle.prior import (
        score_prior,  # the oracle package imports the designs' base
    )

    return 1.0 - score_prior(pool)[:, 0]


def check_share(name: str, value: float) -> None:
    """``ValueError`` naming the setting unless ``0 <= value <= 1`` (``lam``, the trust in the systems' scores)."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}: must lie in [0, 1], got {value}")


@dataclass(frozen=True, kw_only=True)
class Design(ABC):
    """Settings of a sampling design; subclasses register a unique ``name``."""

    #: the name the design is registered and stored under
    name: ClassVar[str] = "design"
    #: whether the design may draw an item again (a free re-draw under a deterministic oracle)
    with_replacement: ClassVar[bool] = True

    def __post_init__(self) -> None:
        """Check every setting against its field's type (subclasses call this before their own checks).

        A whole number where a float belongs becomes a float, and NumPy scalars become Python ones, so the
        settings stay JSON-able; anything else of the wrong type (a string where a number belongs, ``1.5`` for
        an int, a string for a bool) raises ``ValueError`` naming the setting.
        """
        for name, kinds in _field_kinds(type(self)).items():
            object.__setattr__(self, name, _as_kind(name, getattr(self, name), kinds))

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


#: What each type a setting may have accepts, and how it is described in an error
_KIND_TEXT = {bool: "true or false", int: "an integer", float: "a number", str: "text", type(None): "none"}


@cache
def _field_kinds(cls: type[Design]) -> dict[str, tuple[type, ...]]:
    """The types each field of a design class may hold (``float | None`` -> ``(float, NoneType)``)."""
    hints = get_type_hints(cls)
    kinds = {}
    for f in fields(cls):
        hint = hints[f.name]
        kinds[f.name] = tuple(hint.__args__) if isinstance(hint, types.UnionType) else (hint,)
    return kinds


def _as_kind(name: str, value, kinds: tuple[type, ...]):
    """``value`` as the first of ``kinds`` it fits (bool, int, float, str or None), or ``ValueError``."""
    for kind in kinds:
        if kind is bool and isinstance(value, bool | np.bool_):
            return bool(value)
        if kind is int and isinstance(value, Integral) and not isinstance(value, bool | np.bool_):
            return int(value)
        if kind is float and isinstance(value, Real) and not isinstance(value, bool | np.bool_) \
                and not math.isnan(value):
            return float(value)
        if kind is str and isinstance(value, str):
            return value
        if kind is type(None) and value is None:
            return None
    wanted = " or ".join(_KIND_TEXT[k] for k in kinds)
    raise ValueError(f"{name}: must be {wanted}, got {value!r}")


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

    def in_hindsight(self) -> Sampler | None:
        """This run with its interval read in hindsight (on what the rounds drew), for a second reading of the
        same labels' variance; ``None`` for a design without such a reading (all but ``online-poisson``'s mixture,
        :meth:`~labelwise.designs.hashed_online.HashedOnlineSampler.in_hindsight`)."""
        return None

    def with_unseen_labels(self, est: Estimate, measure: Measure, sample: Sample) -> Estimate:
        """``est`` with its covariance raised to what labels that all hold one class cannot rule out among the
        items not labeled yet (:func:`~labelwise.estimators.with_unseen_labels`), item by item.

        For the intervals no oracle model stands behind (a stochastic oracle, sample reuse, the plug-in): from
        labels that are all negative the plug-in sees no variance in the positives left, and an accuracy interval
        on a rare pool is a point.  With no model to expect positives the floor always applies there.
        """
        labels = sample.judged_labels
        if not est.all_defined or labels.size == 0 or np.any(labels != labels[0]):
            return est
        unlabeled = np.ones(self.pool.n_items, dtype=bool)
        unlabeled[sample.draws.items] = False
        items = np.flatnonzero(unlabeled)
        outputs, J = self.pool.outputs(items), measure.finite_jacobian(est.R)
        u = np.stack([measure.loss(outputs, np.full(items.size, c)) @ J.T for c in range(self.pool.n_classes)])
        pi = np.zeros((items.size, self.pool.n_classes))
        pi[:, labels[0]] = 1.0  # each item its own group, expected to hold the labels' class
        cov, basis = with_unseen_labels(est.cov, est.basis, u, pi, np.ones(items.size), labels, 0.0,
                                        self.pool.n_items, self.pool.n_items - items.size)
        if basis == est.basis:
            return est
        return make_estimate(measure, est.R, cov, est.n_labels, est.n_draws, est.level, basis=basis)
