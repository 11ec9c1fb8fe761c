"""Sampling designs, registered by name (``make_design("importance", lam=0.9)``).

A design is a frozen dataclass of settings; ``design.start(pool, measure, rng=...)``
returns the :class:`Sampler` of one run.  A new design is one module with a
:class:`Design` subclass and its sampler, registered with :func:`register_design`.
"""

from __future__ import annotations

from dataclasses import fields

from ..measures import Measure
from ..pool import Pool
from .ais import AISDesign
from .base import MEAN_OF_SYSTEMS, Design, Sampler
from .default import COMMON_POSITIVES, default_design, predicted_positive_share
from .importance import (
    ImportanceDesign,
    PassiveDesign,
    ProposalSampler,
    optimal_proposal,
)
from .oasis import OASISDesign
from .online_poisson import OnlinePoissonDesign
from .poisson import PoissonDesign, inclusion_probabilities, systematic_sample
from .stratified import StratifiedDesign, allocate

__all__ = [
    "COMMON_POSITIVES",
    "DEFAULT",
    "DESIGNS",
    "AISDesign",
    "Design",
    "ImportanceDesign",
    "OASISDesign",
    "OnlinePoissonDesign",
    "PassiveDesign",
    "PoissonDesign",
    "ProposalSampler",
    "Sampler",
    "StratifiedDesign",
    "allocate",
    "default_design",
    "design_from_spec",
    "inclusion_probabilities",
    "make_design",
    "optimal_proposal",
    "predicted_positive_share",
    "register_design",
    "systematic_sample",
]

DESIGNS: dict[str, type[Design]] = {}


def register_design(cls: type[Design]) -> type[Design]:
    """Make a design available by its ``name`` (to ``simulate``, the CLI and session files); usable as a decorator."""
    DESIGNS[cls.name] = cls
    return cls


for _cls in (PassiveDesign, StratifiedDesign, ImportanceDesign, AISDesign, OASISDesign, PoissonDesign,
             OnlinePoissonDesign):
    register_design(_cls)


#: The name that stands for :func:`default_design` of the pool at hand.
DEFAULT = "default"


def make_design(name: str, pool: Pool | None = None, measure: Measure | None = None, **settings) -> Design:
    """The design registered as ``name`` with ``settings``.

    Parameters
    ----------
    name : str
        A registered name, or ``"default"`` for :func:`default_design` of ``pool`` and ``measure``.
    pool : Pool, optional
        Needed for ``"default"``.
    measure : Measure, optional
        The measure to be estimated, which ``"default"`` also reads (AUC gets ``stratified``).  A design that
        reads one system's scores (a ``system`` setting) reads those of the one system ``measure`` evaluates,
        unless ``settings`` name a system: a design on another system's scores spends its labels where that
        system is uncertain.  A measure of several systems gets ``system="mean"``, the mean of every system's
        probability (:func:`~labelwise.designs.base.design_scores`).
    **settings
        The design's settings.

    Raises
    ------
    ValueError
        For an unknown name or setting (the message lists the choices), or a
        setting the design rejects.
    """
    if name == DEFAULT:
        if pool is None:
            raise ValueError("design 'default' depends on the pool: pass pool=")
        name = default_design(pool, measure)
    try:
        cls = DESIGNS[name]
    except KeyError:
        raise ValueError(f"unknown design {name!r}; choose from {', '.join(sorted(DESIGNS))} or {DEFAULT!r}") from None
    valid = sorted(f.name for f in fields(cls))
    evaluated = _evaluated_systems(measure)
    if "system" in valid and "system" not in settings and evaluated:
        settings = settings | {"system": evaluated[0] if len(evaluated) == 1 else MEAN_OF_SYSTEMS}
    unknown = sorted(set(settings) - set(valid))
    if unknown:
        listed = ", ".join(map(repr, unknown))
        known = f"its settings are {', '.join(valid)}" if valid else "it takes no settings"
        raise ValueError(f"design {name!r}: unknown setting {listed}; {known}")
    try:
        return cls(**settings)
    except ValueError as exc:  # a setting of the wrong type or out of range (Design.__post_init__): name the design
        raise ValueError(f"design {name!r}: {exc}") from None


def _evaluated_systems(measure: Measure | None) -> list[int]:
    """The systems ``measure`` evaluates (of its parts, for a combined measure), in order; empty without one."""
    parts = (getattr(measure, "parts", None) or [measure]) if measure is not None else []
    return sorted({part.system for part in parts if isinstance(getattr(part, "system", None), int)})


#: settings renamed since session files were first written: old name -> (new name, conversion)
_RENAMED = {
    "n_blocks": ("n_strata", lambda v: v),
    "proposal": ("deviation", lambda v: {"optimal": "mean"}.get(v, v)),
    "floor": ("defensive", lambda v: v / (1.0 + v)),  # h + f mean(h) is the mixture with weight f / (1 + f)
    "epsilon": ("defensive", lambda v: v),
}


def design_from_spec(spec: dict) -> Design:
    """Rebuild a design from :meth:`Design.spec` (also of files written with older setting names)."""
    settings = {}
    for key, value in spec.items():
        if key in ("design", "oracle"):  # the oracle mode is now the session's
            continue
        new, convert = _RENAMED.get(key, (key, None))
        settings[new] = value if convert is None else convert(value)
    return make_design(spec["design"], **settings)
