"""The settings of the oracle model that the adaptive designs share (:class:`TreeModelDesign`): the tree over
score (or feature) strata, the prior's strength and the scores' recalibration.

The model itself, built from these settings for a pool and a measure, is
:class:`~labelwise.designs.group_model.GroupModel` (Marchant & Rubinstein,
"Needle in a Haystack: Label-Efficient Evaluation under Extreme Class
Imbalance", KDD 2021, sec. 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..measures import Measure
from ..partition import Hierarchy, feature_hierarchy, score_hierarchy
from ..pool import Pool
from ..validation import check_int
from .base import Design, check_share, check_system, design_scores
from .group_model import CALIBRATIONS, GroupModel

__all__ = ["TreeModelDesign"]


@dataclass(frozen=True, kw_only=True)
class TreeModelDesign(Design):
    """Settings of the Dirichlet-tree oracle model shared by the adaptive designs.

    Parameters
    ----------
    depth, branching : int
        Shape of the tree over the strata (depth 1 with branching K is the
        flat per-stratum model, Marchant & Rubinstein's "Ours-1"; depth 8 x
        branching 2 is "Ours-8").
    n_strata : int
        Number of CSF score strata (the tree's leaves), at most ``branching ** depth``.
    prior_strength : float or "auto"
        Weight of the systems' scores in the tree's hyperparameters (1 in
        Marchant & Rubinstein sec. 5.2).  ``"auto"`` (default) chooses it
        after every batch by the labels' marginal likelihood
        (:func:`~labelwise.oracle.calibration.marginal_strength`; 10 before
        any label).
    interval_prior_strength : float, optional
        Prior strength of a separate model behind the interval, fitted only
        when an estimate asks; ``None`` (default) uses the proposal's model.
    calibration : {"platt", "platt-posterior", "none"}
        ``"platt"`` (default): binary pools' probabilities are recalibrated
        after every batch by a monotone Platt map fitted to the labels
        (:mod:`labelwise.oracle.calibration`), so over- or under-confident
        scores are corrected before they steer the design or the interval;
        ``"platt-posterior"``: the map averaged over the posterior of its
        parameters (:func:`~labelwise.oracle.calibration.platt_posterior`),
        which keeps their uncertainty; ``"none"`` takes the scores at face value.
        Multi-class pools' probabilities are temperature-scaled instead
        (:mod:`labelwise.oracle.temperature`) unless ``"none"``, and so are
        multi-label pools' label-set probabilities, softened only (a
        temperature of at least 1): the tempered product of the labels'
        marginals is the product of the marginals with every logit divided by
        the one temperature.
    lam : float
        Shrinkage of the systems' probabilities used as scores (Yilmaz et al. 2021, eq. 13).
    partition : {"score", "features"}
        Strata from CSF bins of the score, or a k-d tree on the pool's features.
    system : int or "mean"
        Whose scores define the score strata; ``"mean"``: the mean of every system's probability
        (:func:`~labelwise.designs.base.design_scores`).
    """

    depth: int = 1
    branching: int = 256
    n_strata: int = 256
    prior_strength: float | str = "auto"
    interval_prior_strength: float | None = None
    calibration: str = "platt"
    lam: float = 1.0
    partition: str = "score"
    system: int | str = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("depth", self.depth, 1)
        check_int("branching", self.branching, 2)
        check_int("n_strata", self.n_strata, 1)
        check_system(self.system)
        check_share("lam", self.lam)
        if not isinstance(self.prior_strength, str) and self.prior_strength < 0:
            raise ValueError(f"prior_strength: must be non-negative, got {self.prior_strength}")
        if self.partition not in ("score", "features"):
            raise ValueError(f"partition: choose 'score' or 'features', got {self.partition!r}")
        if self.calibration not in CALIBRATIONS:
            raise ValueError(f"calibration: choose {', '.join(map(repr, CALIBRATIONS))}, got {self.calibration!r}")
        if isinstance(self.prior_strength, str) and self.prior_strength != "auto":
            raise ValueError(f"prior_strength: a number >= 0 or 'auto', got {self.prior_strength!r}")
        if self.interval_prior_strength is not None and self.interval_prior_strength < 0:
            raise ValueError(f"interval_prior_strength: must be non-negative, got {self.interval_prior_strength}")

    def hierarchy(self, pool: Pool) -> Hierarchy:
        """The tree over the pool's strata."""
        if self.partition == "features":
            if pool.features is None:
                raise ValueError("partition='features' needs a pool with features")
            return feature_hierarchy(pool.features, depth=self.depth, branching=self.branching)
        return score_hierarchy(design_scores(pool, self.system), n_blocks=self.n_strata, depth=self.depth,
                               branching=self.branching)

    def group_model(self, pool: Pool, measure: Measure, oracle: str, within: np.ndarray | None = None) -> GroupModel:
        """A fresh model (no labels) of ``pool`` for ``measure``; its groups within the item classes ``within``
        if given."""
        return GroupModel(pool, measure, oracle, self.hierarchy(pool), self.lam, self.prior_strength, self.interval_prior_strength,
                          calibrate=self.calibration != "none" and pool.n_classes == 2,
                          calibration_uncertainty=self.calibration == "platt-posterior", within=within,
                          temper=self.calibration != "none" and pool.n_classes > 2)
