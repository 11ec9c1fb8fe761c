"""Pilot runs kept in the session file, so that ``labelwise plan SESSION`` does not redo them on every call.

:func:`~labelwise.planning_pilots.pilot_curves` keeps a design's pilot curves in memory, per pool object; a
command-line call opens the session afresh and would run them again (up to 32 sessions of the design).
:func:`session_pilot_curves` stores them in the session's SQLite file under a key that digests everything
they depend on -- labelwise's code, the pool's arrays, the measure, the design, the budget, the pilot
seed and the recalibration their labels are drawn from (which changes with the labels where the pool's
probabilities are off) -- so a changed pool (``add_system``), design, measure, recalibration or code reads
another key and runs them anew: a stale entry is never read.  Nor is it kept: the key is the family (measure,
design, budget, seed: what a session plans for) then the variant (code, pool, recalibration), and storing a
variant drops the family's others, so a session file holds one entry per family it was planned for.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from typing import TYPE_CHECKING

import numpy as np

from .measures import Measure
from .oracle.calibration import PlattPosterior
from .planning_pilots import (
    pilot_curves,
    pilot_marks,
    recalibration_key,
    remember_pilot_curves,
)
from .pool import Pool
from .session_file import _setup_tag
from .store import StoreError
from .store.codec import decode_array, encode_array

if TYPE_CHECKING:
    from .session import Session

__all__ = ["FAMILY_DIGITS", "PILOT_KEY_PREFIX", "pilot_cache_key", "pilot_family", "pool_digest",
           "session_pilot_curves"]

#: Prefix of the session-file cache keys of pilot curves.
PILOT_KEY_PREFIX = "pilots "
#: Hexadecimal digits of a key's family digest (:func:`pilot_family`): a handful of families per session file.
FAMILY_DIGITS = 16

# digest per pool object: a pool's arrays are not changed in place (``add_system`` makes a new pool)
_digests: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pool_digest(pool: Pool) -> str:
    """SHA-256 over the pool's arrays (ids, outputs, features: what a design and the pilot labels read) and
    its class and system names; computed once per pool object (a plan asks for it on every pilot read, the
    ``serve`` dashboard on every poll)."""
    if pool not in _digests:
        _digests[pool] = _hash_pool(pool)
    return _digests[pool]


def _hash_pool(pool: Pool) -> str:
    digest = hashlib.sha256(json.dumps([pool.n_classes, list(pool.system_names)]).encode())
    for name in ("item_ids", "preds", "scores", "probs", "features"):
        arr = getattr(pool, name)
        digest.update(name.encode() + (b"-" if arr is None else f"{arr.dtype.str}{arr.shape}".encode()))
        if arr is not None:  # object ids as their joined text, numbers as their bytes
            digest.update(encode_array(arr) if arr.dtype == object else np.ascontiguousarray(arr).tobytes())
    return digest.hexdigest()


def pilot_family(session: Session, measure: Measure, seed: int) -> str | None:
    """The prefix of the cache keys of the session's pilot curves toward ``measure`` drawn with ``seed``, whatever
    the code, pool and recalibration (:func:`pilot_cache_key`); ``None`` for a user-defined measure (no spec to
    digest)."""
    spec = measure.spec()
    if spec is None:
        return None
    parts = json.dumps([spec, session.design.spec(), session.budget, seed], sort_keys=True, default=str)
    return f"{PILOT_KEY_PREFIX}{hashlib.sha256(parts.encode()).hexdigest()[:FAMILY_DIGITS]} "


def pilot_cache_key(session: Session, measure: Measure, seed: int,
                    recalibrated: PlattPosterior | None = None) -> str | None:
    """The cache key of the session's pilot curves toward ``measure`` drawn with ``seed`` (from the pool's
    probabilities recalibrated by ``recalibrated``, :func:`~labelwise.planning_pilots.pilot_prior`): their
    :func:`pilot_family`, then a digest of the code, the pool and the recalibration; ``None`` for a user-defined
    measure."""
    family = pilot_family(session, measure, seed)
    if family is None:
        return None
    variant = _setup_tag() + pool_digest(session.pool).encode() + (recalibration_key(recalibrated) or "").encode()
    return family + hashlib.sha256(variant).hexdigest()


def _stored_curves(raw: bytes | None, n_items: int) -> np.ndarray | None:
    """The pilot curves an entry holds; ``None`` for none, or for an entry that does not decode to a float
    ``(runs, marks)`` array with the pool's marks (a damaged file): the pilots are then run again and the entry
    rewritten."""
    if raw is None:
        return None
    try:
        curves = decode_array(raw)
    except Exception:  # noqa: BLE001 - an unreadable entry is only a lost shortcut
        return None
    fits = curves.ndim == 2 and curves.shape[0] > 0 and curves.shape[1] == len(pilot_marks(n_items))
    return curves if fits and curves.dtype.kind == "f" else None


def session_pilot_curves(session: Session, measure: Measure, seed: int, runs: int,
                         recalibrated: PlattPosterior | None = None) -> np.ndarray:
    """:func:`~labelwise.planning_pilots.pilot_curves` of the session's design (their labels drawn from the
    pool's probabilities recalibrated by ``recalibrated``), read from its file when stored there
    (:func:`pilot_cache_key`) and stored when more runs were made."""
    key = None if session.store is None else pilot_cache_key(session, measure, seed, recalibrated)
    args = (session.pool, measure, session.design, session.budget, seed)
    stored = None if key is None else _stored_curves(session.store.cached(key), session.pool.n_items)
    if stored is not None:
        remember_pilot_curves(*args, stored, recalibrated)
    curves = pilot_curves(*args, runs, recalibrated)
    if key is not None and (stored is None or len(curves) > len(stored)):
        try:
            session.store.put_cache(key, encode_array(curves), replacing=pilot_family(session, measure, seed))
        except StoreError:  # a file this process may not write (read-only, busy): the plan stands, not kept
            pass
    return curves
