"""Sampling designs, registered by name (``get_design("importance", lam=0.9)``)."""

from __future__ import annotations

from .adaptive import AISDesign
from .base import Design, Draws, Sample
from .importance import ImportanceDesign, PassiveDesign, optimal_proposal
from .oasis import OASISDesign
from .online_poisson import OnlinePoissonDesign
from .poisson import PoissonDesign, inclusion_probabilities, systematic_sample
from .sampling import draw_batch, draw_until_new, draw_with_replacement
from .stratified import StratifiedDesign, allocate

__all__ = [
    "DESIGNS",
    "AISDesign",
    "Design",
    "Draws",
    "ImportanceDesign",
    "OASISDesign",
    "OnlinePoissonDesign",
    "PassiveDesign",
    "PoissonDesign",
    "Sample",
    "StratifiedDesign",
    "allocate",
    "design_from_spec",
    "draw_batch",
    "draw_until_new",
    "draw_with_replacement",
    "get_design",
    "inclusion_probabilities",
    "optimal_proposal",
    "register_design",
    "systematic_sample",
]

DESIGNS: dict[str, type[Design]] = {}


def register_design(cls: type[Design]) -> type[Design]:
    """Make a design available by its ``name`` (to ``simulate``, the CLI and session files)."""
    DESIGNS[cls.name] = cls
    return cls


for _cls in (PassiveDesign, StratifiedDesign, ImportanceDesign, AISDesign, OASISDesign, PoissonDesign,
             OnlinePoissonDesign):
    register_design(_cls)


def get_design(name: str, **params) -> Design:
    """Instantiate the design registered as ``name`` with ``params``."""
    try:
        cls = DESIGNS[name]
    except KeyError:
        raise ValueError(f"unknown design {name!r}; choose from {', '.join(sorted(DESIGNS))}") from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"design {name!r}: {exc}") from None


def design_from_spec(spec: dict) -> Design:
    """Rebuild a design from :meth:`Design.spec`."""
    params = {k: v for k, v in spec.items() if k != "design"}
    return get_design(spec["design"], **params)
