"""A measure over a domain of the pool: the judgeable items, when some were excluded as not judgeable.

Items an annotator cannot judge (:meth:`labelwise.Session.exclude`) lie
outside the population the measure is about.  Their losses count as zero
(:meth:`labelwise.designs.Sampler.losses`), so every estimated total is a
total over the judgeable items.  A measure of ratios of totals (precision,
recall, F-beta: :attr:`Measure.scale_free`) is then exactly the domain's
measure; any other measure needs the domain's size, and :class:`DomainMeasure`
estimates it alongside: a last loss component that is 1 for every judgeable
item, so ``R = (T, t)`` with ``t`` the judgeable share of the pool and
``G = g(T / t)``, the ratio (domain) estimator of W. G. Cochran, *Sampling
Techniques*, 3rd ed., 1977, section 2.13.
"""

from __future__ import annotations

import numpy as np

from ..pool import Outputs
from .base import Measure

__all__ = ["DomainMeasure", "over_judgeable"]


class DomainMeasure(Measure):
    """``inner`` over the judgeable items: loss ``[l(x, y), 1]``, ``g(T, t) = g_inner(T / t)``.

    Parameters
    ----------
    inner : Measure
    """

    def __init__(self, inner: Measure):
        self.inner = inner
        self.name, self.names, self.dim = inner.name, inner.names, inner.dim + 1
        self.lower, self.upper = inner.lower, inner.upper

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        losses = self.inner.loss(outputs, y)
        return np.concatenate([losses, np.ones((losses.shape[0], 1))], axis=1)

    def g(self, R: np.ndarray) -> np.ndarray:
        R = np.asarray(R, dtype=float)
        return self.inner.g(R[..., :-1] / R[..., -1:])

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """``[Dg / t, -Dg (T / t) / t]`` at ``(T / t)``, shape ``(..., m, d + 1)``."""
        R = np.asarray(R, dtype=float)
        t = R[..., -1:]
        mean = R[..., :-1] / t
        J = self.inner.jacobian(mean)
        return np.concatenate([J / t[..., None], -(J @ mean[..., None]) / t[..., None]], axis=-1)

    def loss_key(self, outputs: Outputs) -> np.ndarray | None:
        return self.inner.loss_key(outputs)

    def spec(self) -> dict | None:
        inner = self.inner.spec()
        return None if inner is None else {"domain_of": inner}


def over_judgeable(measure: Measure) -> Measure:
    """``measure`` itself when it is :attr:`~Measure.scale_free` (zero losses suffice), else its :class:`DomainMeasure`."""
    return measure if measure.scale_free else DomainMeasure(measure)
