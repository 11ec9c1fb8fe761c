"""Covariances of the ``ais`` estimate that labelwise no longer offers, kept for the benchmarks that compare them.

labelwise's ``ais`` design offers ``variance="mixture"`` (default),
``"model"`` and ``"plugin"``.  Two more are compared by the benchmarks:

* ``"max"``: per component the larger of the ``plugin`` and the ``model``
  variance (the ``ais`` default before ``mixture``);
* ``"seed"``: the covariance of Marchant & Rubinstein, "Needle in a Haystack:
  Label-Efficient Evaluation under Extreme Class Imbalance" (KDD 2021, sec.
  3.3.2), which reweights draw ``j`` by ``q_{j-1}(x_j) / q_n(x_j)`` to
  approximate the variance under the final proposal ``q_n``; it under-covers
  when the early proposals were far from the final one.

Both are computed from an :class:`~labelwise.designs.ais.AISSampler`'s
pieces (:func:`max_covariance`, :func:`seed_covariance`), and
:class:`AISVarianceModeDesign` is ``ais`` with one of them as its interval,
usable wherever a design is (``labelwise.simulate``, ``Session``).
:func:`ais_design` picks the library design or this one by the name of the
covariance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from labelwise.designs import AISDesign, make_design
from labelwise.designs.ais import AISSampler
from labelwise.draws import Sample
from labelwise.estimators import (
    Estimate,
    importance_moments,
    larger_variance,
    make_estimate,
)
from labelwise.measures import Measure
from labelwise.pool import Pool

__all__ = ["MODES", "AISVarianceModeDesign", "AISVarianceModeSampler", "ais_design", "max_covariance",
           "seed_covariance"]

#: The covariances implemented here (the library's ``ais`` has ``mixture``, ``model`` and ``plugin``).
MODES = ("max", "seed")


def seed_covariance(sampler: AISSampler, measure: Measure, sample: Sample) -> tuple[np.ndarray, np.ndarray]:
    """``(R, cov of G)`` with draw ``j`` reweighted by ``q_{j-1}(x_j) / q_n(x_j)`` (Marchant & Rubinstein sec. 3.3.2).

    ``q_{j-1}(x_j)`` is the draw's probability (``sample.draws.prob``) and
    ``q_n`` the sampler's current proposal (:meth:`AISSampler.q_of`).  Applies
    to any measure (sample reuse included).
    """
    d = sample.draws
    q_now = sampler.q_of(d.items)
    # q_n(x) = 0 only where l(x, y) = 0 (Prop. 2): such draws add nothing to the covariance
    q_ratio = np.divide(d.prob, q_now, out=np.zeros_like(q_now), where=q_now > 0)
    losses = sampler.losses(measure, sample)
    R, _, _ = importance_moments(measure, losses, d.weight, counts=d.count)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        J = measure.jacobian(R)
        u = d.weight[:, None] * (losses @ J.T)  # the projected weighted losses
        r = J @ R
        second = np.einsum("n,nm,nk->mk", d.count * q_ratio, u, u) / d.n_draws
        return R, (second - np.outer(r, r)) / d.n_draws


def max_covariance(sampler: AISSampler, measure: Measure, sample: Sample) -> tuple[np.ndarray, np.ndarray]:
    """``(R, cov of G)``: per component the larger of the plug-in and the oracle model's variance.

    The model's variance (``variance="model"`` of ``ais``) applies to the
    sampler's target measure only; other measures (sample reuse) and a
    sampler without batches drawn in this process get the plug-in.
    """
    d = sample.draws
    R, _, cov = importance_moments(measure, sampler.losses(measure, sample), d.weight, counts=d.count)
    if measure == sampler.measure and sampler._history:  # the model covariance averages over the batches drawn
        cov = larger_variance(cov, sampler._model_covariance(R).full / d.n_draws)
    return R, cov


_COVARIANCE = {"max": max_covariance, "seed": seed_covariance}


@dataclass(frozen=True, kw_only=True)
class AISVarianceModeDesign(AISDesign):
    """``ais`` whose interval uses the covariance ``mode`` (one of :data:`MODES`; ``variance`` is unused).

    Not registered: pass an instance to ``labelwise.simulate`` or ``Session``.
    """

    name = "ais-variance-mode"
    mode: str = "max"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in MODES:
            raise ValueError(f"mode: choose {' or '.join(map(repr, MODES))}, got {self.mode!r}")

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> AISVarianceModeSampler:
        return AISVarianceModeSampler(self, self.group_model(pool, measure, oracle), rng)


class AISVarianceModeSampler(AISSampler):
    """One run of :class:`AISVarianceModeDesign`: ``ais``'s draws, the design's ``mode`` for the interval."""

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        R, cov = _COVARIANCE[self.design.mode](self, measure, sample)
        return make_estimate(measure, R, cov, sample.n_labels, d.n_draws, level)


def ais_design(variance: str = "mixture", **settings) -> AISDesign:
    """``ais`` with the covariance ``variance``: the library's (``mixture``, ``model``, ``plugin``) or one of
    :data:`MODES`, with the other ``settings`` of :class:`~labelwise.designs.AISDesign`."""
    if variance in MODES:
        return AISVarianceModeDesign(mode=variance, **settings)
    return make_design("ais", variance=variance, **settings)
