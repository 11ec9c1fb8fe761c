"""The tables of a session file (:mod:`labelwise.store.journal`) and its schema version.

Tables
------
meta(key, value)
    ``schema_version``, ``config`` (measure, design, level as JSON),
    ``pool_meta``, ``rng_state`` (the generator state at creation, then
    after the last stored draw; arrays of MT19937/Philox states are encoded)
    and ``revision`` (raised by every write: a session whose revision is
    older re-reads the file before it writes).
design_states(stage, state)
    The design's state for each batch of draws (JSON), when it has one.
pool_arrays(name, data)
    The pool's arrays.
draws(seq, stage, item, weight, prob, stratum, count, created)
    Every draw in order, with the design weight ``p/q`` and probability.
labels(seq, draw, item, label, stage, weight, prob, created, source, call)
    One row per label: ``draw`` is the index (0-based, in draw order) of the
    draw the label answers, unique, with that draw's stage, weight and
    probability and the time the label was stored.  Under a deterministic
    oracle an item is labeled once, at its first draw; under a stochastic
    oracle every draw gets its own label, so an item may have several.
relabels(seq, draw, item, old, label, created, source)
    Corrections: the label of ``draw`` changed from ``old`` to ``label``
    (the labels row keeps the first answer; estimates use the latest).
deferred(seq, item, created)
    Items an annotator skipped: handed out again after the other pending items.
excluded(seq, item, draw, created, source)
    Items excluded from the population as not judgeable, with the item's
    first draw (schema 4).
cache(key, data)
    What saves work when a session is opened: the design's set-up
    (``sampler``) and the latest estimate (``estimate``).
"""

from __future__ import annotations

__all__ = ["READABLE_VERSIONS", "SCHEMA_VERSION", "TABLES", "TABLES_ADDED"]

#: The schema version of a new session file.
SCHEMA_VERSION = 4
#: Versions a session file may have: older files gain the newer tables when opened.
READABLE_VERSIONS = (2, 3, 4)

#: The tables of every session file (those of schema 2).
TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pool_arrays (name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE draws (
    seq INTEGER PRIMARY KEY, stage INTEGER NOT NULL, item INTEGER NOT NULL,
    weight REAL NOT NULL, prob REAL NOT NULL, stratum INTEGER NOT NULL, count INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE labels (
    seq INTEGER PRIMARY KEY, draw INTEGER NOT NULL UNIQUE, item INTEGER NOT NULL, label INTEGER NOT NULL,
    stage INTEGER NOT NULL, weight REAL NOT NULL, prob REAL NOT NULL, created REAL NOT NULL,
    source TEXT NOT NULL, call INTEGER NOT NULL
);
CREATE TABLE design_states (stage INTEGER PRIMARY KEY, state TEXT NOT NULL);
"""

#: Tables added after schema 2 (IF NOT EXISTS: an older file gains them when opened).
TABLES_ADDED = """
CREATE TABLE IF NOT EXISTS relabels (
    seq INTEGER PRIMARY KEY, draw INTEGER NOT NULL, item INTEGER NOT NULL, old INTEGER NOT NULL,
    label INTEGER NOT NULL, created REAL NOT NULL, source TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS deferred (seq INTEGER PRIMARY KEY, item INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS excluded (
    seq INTEGER PRIMARY KEY, item INTEGER NOT NULL UNIQUE, draw INTEGER NOT NULL, created REAL NOT NULL,
    source TEXT NOT NULL
);
"""
