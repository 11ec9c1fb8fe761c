"""Argument checks shared by the package: errors name the argument and what it must be."""

from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = ["check_int", "check_real"]


def check_int(name: str, value, minimum: int = 1) -> int:
    """``value`` as an int, or ``ValueError`` naming ``name`` if it is not a whole number >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name}: must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: must be at least {minimum}, got {value}")
    return int(value)


def check_real(name: str, value) -> float:
    """``value`` as a float, or ``ValueError`` naming ``name`` if it is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name}: must be a finite number, got {value!r}")
    return float(value)
