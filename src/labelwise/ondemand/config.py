"""What an on-demand evaluation is run with: its configuration and its fixed inputs.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3: the
target half-width, the estimators' options and the prices
(:class:`OnDemandConfig`), and the universe of instances with the systems'
sampling distributions in submission order (:class:`Problem`); the per-run
state is :class:`~labelwise.ondemand.process.Process`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .costs import Prices
from .universe import Universe

__all__ = ["OnDemandConfig", "Problem"]


@dataclass(frozen=True)
class OnDemandConfig:
    """Configuration of on-demand evaluation (no per-run state).

    Parameters
    ----------
    half_width : float
        Target half-width of the intervals for precision and recall.
    level : float
        Interval level.
    scheme : {'overlap', 'size', 'uniform'}
        Mixture weights of the joint estimator.
    control_variate : bool
        The unnormalized joint precision with the control variate of known
        expectation (jackknife variance, Wilson interval); not the default:
        its intervals under-covered one system of the benchmark.
    normalized : bool
        Self-normalized joint precision with capped mixture weights
        (:mod:`~labelwise.ondemand.normalized`; the default): its variance is never above that of
        the system's own draws alone. False: the paper's unnormalized Eq. 2. Ignored with
        ``control_variate`` or ``composite``, which adjust the unnormalized estimator.
    composite : bool
        Combine the joint precision with the simple estimate from the system's
        own draws at their minimum-variance weight
        (:mod:`~labelwise.ondemand.composite`): a lower MSE than the simple
        estimator at equal cost on every benchmark system, but not the default:
        its intervals under-covered the two high-precision systems (the plug-in
        weight leans on the simple estimate when its few draws are all correct).
    prices : Prices
        Price of a verification and of an annotated document.
    prior : float
        Plug-in probability of being correct for unverified instances when
        planning, before any label of the new system is known (1/2 is the worst case).
    prior_strength : float
        Pseudo-count of each level of shrinkage of the labels already known on the new system (a stratum's
        rate toward the system's, the system's toward the prior; :mod:`~labelwise.ondemand.plug_in`).
    pilot : int
        Verifications drawn from a new system before planning when fewer of its
        instances are labeled (0: plan from the prior, as in the paper).
    initial_documents : int
        Documents annotated at launch.
    post_stratified : bool
        The self-normalized joint precision post-stratified on the system's own stratum (the instances no
        other sampled system predicts, of known mass; :mod:`~labelwise.ondemand.normalized`; the default):
        the share of the own draws landing there no longer moves the estimate. False: one ratio over all
        of the system's output.
    combined_recall : bool
        Recall as pool recall x pooled recall combined with the annotated documents' direct ratio at the
        minimum-variance weight (:mod:`~labelwise.ondemand.recall`; the default). False: the paper's
        product alone.
    """

    half_width: float = 0.05
    level: float = 0.95
    scheme: str = "overlap"
    control_variate: bool = False
    normalized: bool = True
    composite: bool = False
    prices: Prices = field(default_factory=Prices)
    prior: float = 0.5
    prior_strength: float = 2.0
    pilot: int = 0
    initial_documents: int = 10
    post_stratified: bool = True
    combined_recall: bool = True


@dataclass(frozen=True)
class Problem:
    """Fixed inputs: universe, systems (in submission order) and, for simulation, the truth."""

    universe: Universe
    P: np.ndarray
    truth: np.ndarray
    names: tuple[str, ...]

    @property
    def m(self) -> int:
        return self.P.shape[0]

    def members(self, i: int) -> np.ndarray:
        return np.flatnonzero(self.P[i] > 0)
