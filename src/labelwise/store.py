"""The session file: a SQLite journal of the pool, the draws and the labels.

Every write is one transaction, committed (``synchronous=FULL``) before the
session acknowledges it, so a process killed at any point loses nothing it
acknowledged.  The pool is stored as ``.npy`` blobs, which makes a session
file self-contained.

Tables
------
meta(key, value)
    ``schema_version``, ``config`` (measure, design, seed, level as JSON) and
    ``rng_state`` (the generator state after the last stored draw).
pool_arrays(name, data)
    The pool's arrays.
draws(seq, stage, item, weight, prob, stratum, created)
    Every draw in order, with the design weight ``p/q`` and probability.
labels(item, label, stage, weight, prob, created, source)
    One row per labeled item, with the weight, probability and stage of its
    first draw and the time it was stored.
"""

from __future__ import annotations

import io
import json
import sqlite3
import time
from pathlib import Path

import numpy as np

from .designs import Draws
from .pool import Pool

__all__ = ["Store", "StoreError"]

SCHEMA_VERSION = 1
_POOL_FIELDS = ("item_ids", "preds", "scores", "probs", "labels", "features")

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pool_arrays (name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE draws (
    seq INTEGER PRIMARY KEY, stage INTEGER NOT NULL, item INTEGER NOT NULL,
    weight REAL NOT NULL, prob REAL NOT NULL, stratum INTEGER NOT NULL, created REAL NOT NULL
);
CREATE TABLE labels (
    item INTEGER PRIMARY KEY, label INTEGER NOT NULL, stage INTEGER NOT NULL,
    weight REAL NOT NULL, prob REAL NOT NULL, created REAL NOT NULL, source TEXT NOT NULL
);
"""


class StoreError(RuntimeError):
    """A session file that cannot be created or read."""


def _to_blob(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _from_blob(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


class Store:
    """A session file on disk (see the module docstring for its tables)."""

    def __init__(self, path: str | Path, conn: sqlite3.Connection):
        self.path = Path(path)
        self.conn = conn

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(str(path), isolation_level=None, timeout=30.0)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        return conn

    @classmethod
    def create(cls, path: str | Path, pool: Pool, config: dict) -> "Store":
        """Create a new session file holding ``pool`` and ``config``; refuses to overwrite."""
        path = Path(path)
        if path.exists():
            raise StoreError(f"session file {str(path)!r} already exists; open it to resume or choose another path")
        conn = cls._connect(path)
        try:
            conn.executescript("BEGIN;\n" + _SCHEMA + "COMMIT;\n")
        except sqlite3.Error:
            conn.close()
            path.unlink(missing_ok=True)
            raise
        store = cls(path, conn)
        meta = {
            "schema_version": str(SCHEMA_VERSION),
            "config": json.dumps(config),
            "pool_meta": json.dumps({"system_names": list(pool.system_names), "n_classes": pool.n_classes,
                                     "name": pool.name}),
        }
        with _transaction(conn):
            conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            conn.executemany(
                "INSERT INTO pool_arrays VALUES (?, ?)",
                [(f, _to_blob(getattr(pool, f))) for f in _POOL_FIELDS if getattr(pool, f) is not None],
            )
        return store

    @classmethod
    def open(cls, path: str | Path) -> "Store":
        """Open an existing session file."""
        path = Path(path)
        if not path.exists():
            raise StoreError(f"session file {str(path)!r} does not exist; create it with `labelwise init`")
        conn = cls._connect(path)
        try:
            version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{str(path)!r} is not a labelwise session file ({exc})") from None
        if version is None or int(version[0]) != SCHEMA_VERSION:
            conn.close()
            raise StoreError(f"{str(path)!r}: unsupported session schema {version}; expected {SCHEMA_VERSION}")
        return cls(path, conn)

    def close(self) -> None:
        self.conn.close()

    # ---------------------------------------------------------------- reads
    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def config(self) -> dict:
        return json.loads(self._meta("config"))

    def rng_state(self) -> dict | None:
        raw = self._meta("rng_state")
        return None if raw is None else json.loads(raw)

    def load_pool(self) -> Pool:
        arrays = {name: _from_blob(data) for name, data in self.conn.execute("SELECT name, data FROM pool_arrays")}
        meta = json.loads(self._meta("pool_meta"))
        return Pool.from_arrays(
            arrays["item_ids"], preds=arrays.get("preds"), scores=arrays.get("scores"), probs=arrays.get("probs"),
            labels=arrays.get("labels"), features=arrays.get("features"), system_names=meta["system_names"],
            n_classes=meta["n_classes"], name=meta["name"],
        )

    def load_draws(self) -> tuple[Draws, np.ndarray]:
        """All draws in order and the stage of each."""
        rows = self.conn.execute("SELECT stage, item, weight, prob, stratum FROM draws ORDER BY seq").fetchall()
        if not rows:
            return Draws.empty(), np.empty(0, dtype=np.int64)
        arr = np.array(rows, dtype=float)
        draws = Draws(arr[:, 1].astype(np.int64), arr[:, 2], arr[:, 3], arr[:, 4].astype(np.int64))
        return draws, arr[:, 0].astype(np.int64)

    def load_labels(self) -> tuple[np.ndarray, np.ndarray]:
        """Labeled items and their labels, in the order they were stored."""
        rows = self.conn.execute("SELECT item, label FROM labels ORDER BY created, rowid").fetchall()
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        arr = np.array(rows, dtype=np.int64)
        return arr[:, 0], arr[:, 1]

    # --------------------------------------------------------------- writes
    def append_draws(self, stage: int, draws: Draws, rng_state: dict) -> None:
        """Store a batch of draws and the generator state after it, atomically."""
        now = time.time()
        rows = [
            (stage, int(i), float(w), float(p), int(s), now)
            for i, w, p, s in zip(draws.items, draws.weight, draws.prob, draws.stratum)
        ]
        with _transaction(self.conn):
            self.conn.executemany(
                "INSERT INTO draws (stage, item, weight, prob, stratum, created) VALUES (?, ?, ?, ?, ?, ?)", rows
            )
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('rng_state', ?)", (json.dumps(rng_state),))

    def add_labels(self, items: np.ndarray, labels: np.ndarray, stage: np.ndarray, weight: np.ndarray,
                   prob: np.ndarray, source: str) -> None:
        """Store new labels atomically (all or none)."""
        now = time.time()
        rows = [
            (int(i), int(y), int(s), float(w), float(p), now, source)
            for i, y, s, w, p in zip(items, labels, stage, weight, prob)
        ]
        with _transaction(self.conn):
            self.conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
        return False
