"""The error of invalid pool input, shared by the pool's constructors and readers."""

from __future__ import annotations

__all__ = ["DuplicateIdsError", "PoolError"]


class PoolError(ValueError):
    """Raised for invalid pool input; the message names the field and the fix."""


class DuplicateIdsError(PoolError):
    """Raised for item ids given more than once.

    Attributes
    ----------
    positions : ndarray of int
        The positions (0-based, in the order given) of every occurrence of the first id given twice, so that a
        reader can name the rows of its file.
    n_repeated : int
        How many distinct ids are given more than once.
    """

    def __init__(self, message: str, positions, n_repeated: int):
        super().__init__(message)
        self.positions = positions
        self.n_repeated = n_repeated
