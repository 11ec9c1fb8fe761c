"""Values computed once per pool and key (a pass over the pool that every estimate of a session would repeat)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ..pool import Pool

__all__ = ["per_pool"]

T = TypeVar("T")

_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def per_pool(pool: Pool, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, kept while ``pool`` lives and returned again for the same ``key`` (e.g. a measure)."""
    entries = _cache.setdefault(pool, {})
    if key not in entries:
        entries[key] = compute()
    return entries[key]
