"""The error of invalid pool input, shared by the pool's constructors and readers."""

from __future__ import annotations

__all__ = ["PoolError"]


class PoolError(ValueError):
    """Raised for invalid pool input; the message names the field and the fix."""
