"""The session file: a SQLite journal of the pool, the draws and the labels.

Every write is one transaction, committed (``synchronous=FULL``) before the
session acknowledges it, so a process killed at any point loses nothing it
acknowledged.  The pool is stored as ``.npy`` blobs, which makes a session
file self-contained.

Tables
------
meta(key, value)
    ``schema_version``, ``config`` (measure, design, level as JSON),
    ``pool_meta`` and ``rng_state`` (the generator state at creation, then
    after the last stored draw; arrays of MT19937/Philox states are encoded).
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
"""

from __future__ import annotations

import io
import json
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..draws import Draws
from ..pool import Pool

__all__ = ["Store", "StoreError"]

SCHEMA_VERSION = 2
_POOL_FIELDS = ("item_ids", "preds", "scores", "probs", "labels", "features")

_SCHEMA = """
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

_SQLITE_HEADER = b"SQLite format 3\x00"


def _set_pragmas(conn: sqlite3.Connection) -> None:
    # a rollback journal (not WAL) keeps every committed label in the one session file
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA synchronous=FULL")


class StoreError(RuntimeError):
    """A session file that cannot be created or read."""


def _to_blob(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _from_blob(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def _dump_state(state: dict) -> str:
    """JSON of a bit generator's state (MT19937 and Philox states hold arrays)."""

    def enc(v):
        if isinstance(v, np.ndarray):
            return {"__ndarray__": v.tolist(), "dtype": str(v.dtype)}
        if isinstance(v, dict):
            return {k: enc(x) for k, x in v.items()}
        if isinstance(v, np.integer):
            return int(v)
        return v

    return json.dumps(enc(state))


def _load_state(obj):
    if isinstance(obj, dict):
        if "__ndarray__" in obj:
            return np.asarray(obj["__ndarray__"], dtype=obj["dtype"])
        return {k: _load_state(v) for k, v in obj.items()}
    return obj


class Store:
    """A session file on disk (see the module docstring for its tables)."""

    def __init__(self, path: str | Path, conn: sqlite3.Connection):
        self.path = Path(path)
        self.conn = conn

    @classmethod
    def create(cls, path: str | Path, pool: Pool, config: dict, rng_state: dict | None = None) -> Store:
        """Create a new session file holding ``pool``, ``config`` and the initial
        generator state ``rng_state`` (one transaction); refuses to overwrite."""
        path = Path(path)
        if path.exists():
            raise StoreError(f"session file {str(path)!r} already exists; open it to resume or choose another path")
        if not path.parent.is_dir():
            raise StoreError(f"cannot create session file {str(path)!r}: directory {str(path.parent)!r} does not exist")
        meta = {
            "schema_version": str(SCHEMA_VERSION),
            "config": json.dumps(config),
            "pool_meta": json.dumps({"system_names": list(pool.system_names), "n_classes": pool.n_classes,
                                     "name": pool.name, "label_names": list(pool.label_names)}),
        }
        if rng_state is not None:
            meta["rng_state"] = _dump_state(rng_state)
        conn = None
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=30.0)
            _set_pragmas(conn)
            with _transaction(conn):
                for statement in _SCHEMA.strip().split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                conn.executemany(
                    "INSERT INTO pool_arrays VALUES (?, ?)",
                    [(f, _to_blob(getattr(pool, f))) for f in _POOL_FIELDS if getattr(pool, f) is not None],
                )
        except BaseException as exc:
            if conn is not None:
                conn.close()
            for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
                leftover.unlink(missing_ok=True)
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"cannot create session file {str(path)!r}: {exc}") from None
            raise
        return cls(path, conn)

    @classmethod
    def open(cls, path: str | Path) -> Store:
        """Open an existing session file.

        Raises
        ------
        StoreError
            If ``path`` does not exist or is not a labelwise session file (the
            file is then left untouched).
        """
        path = Path(path)
        if not path.exists():
            raise StoreError(f"session file {str(path)!r} does not exist; create it with `labelwise init`")
        if not path.is_file():
            raise StoreError(f"{str(path)!r} is not a labelwise session file (it is not a regular file)")
        try:
            with open(path, "rb") as fh:
                header = fh.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(f"cannot read session file {str(path)!r}: {exc}") from None
        if header != _SQLITE_HEADER:
            raise StoreError(f"{str(path)!r} is not a labelwise session file (not an SQLite database)")
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=30.0)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open session file {str(path)!r}: {exc}") from None
        try:
            version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{str(path)!r} is not a labelwise session file ({exc})") from None
        if version is None or not str(version[0]).isdigit() or int(version[0]) != SCHEMA_VERSION:
            conn.close()
            found = None if version is None else version[0]
            raise StoreError(f"{str(path)!r}: unsupported session schema {found!r}; expected {SCHEMA_VERSION}")
        try:
            _set_pragmas(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(f"cannot open session file {str(path)!r}: {exc}") from None
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
        return None if raw is None else _load_state(json.loads(raw))

    def load_pool(self) -> Pool:
        arrays = {name: _from_blob(data) for name, data in self.conn.execute("SELECT name, data FROM pool_arrays")}
        meta = json.loads(self._meta("pool_meta"))
        pool = Pool.from_arrays(
            arrays["item_ids"], preds=arrays.get("preds"), scores=arrays.get("scores"), probs=arrays.get("probs"),
            labels=arrays.get("labels"), features=arrays.get("features"), system_names=meta["system_names"],
            n_classes=meta["n_classes"], name=meta["name"],
        )
        # multi-label names (files written before they were stored have none: measures count 2^C codes)
        return replace(pool, label_names=tuple(meta.get("label_names", ())))

    def load_draws(self) -> Draws:
        """All draws in order (a draw's ``round`` is its batch's stage less one)."""
        rows = self.conn.execute("SELECT stage, item, weight, prob, stratum, count FROM draws ORDER BY seq").fetchall()
        if not rows:
            return Draws.empty()
        arr = np.array(rows, dtype=float)
        return Draws(arr[:, 1].astype(np.int64), arr[:, 2], arr[:, 3], stratum=arr[:, 4].astype(np.int64),
                     count=arr[:, 5].astype(np.int64), round=arr[:, 0].astype(np.int64) - 1)

    def load_labels(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Labeled items, their labels, the number of the call that stored them and the draw
        each answers (its index in draw order), in stored order."""
        rows = self.conn.execute("SELECT item, label, call, draw FROM labels ORDER BY seq").fetchall()
        arr = np.array(rows, dtype=np.int64).reshape(-1, 4)
        return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]

    # --------------------------------------------------------------- writes
    def design_states(self) -> list[dict]:
        """The design's state stored with each batch of draws, in order (batches without one left out)."""
        return [json.loads(raw) for (raw,) in self.conn.execute("SELECT state FROM design_states ORDER BY stage")]

    def append_draws(self, stage: int, draws: Draws, rng_state: dict, design_state: dict | None = None) -> None:
        """Store a batch of draws, the generator state after it and the design's state, atomically."""
        now = time.time()
        rows = [
            (stage, int(i), float(w), float(p), int(s), int(c), now)
            for i, w, p, s, c in zip(draws.items, draws.weight, draws.prob, draws.stratum, draws.count)
        ]
        with _transaction(self.conn):
            self.conn.executemany(
                "INSERT INTO draws (stage, item, weight, prob, stratum, count, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", rows,
            )
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('rng_state', ?)", (_dump_state(rng_state),))
            if design_state:
                self.conn.execute("INSERT INTO design_states VALUES (?, ?)", (stage, json.dumps(design_state)))

    def add_labels(self, items: np.ndarray, labels: np.ndarray, draw: np.ndarray, stage: np.ndarray,
                   weight: np.ndarray, prob: np.ndarray, source: str) -> None:
        """Store new labels atomically (all or none); ``draw`` is the index of the draw each answers.

        Raises
        ------
        sqlite3.IntegrityError
            If a draw already has a label (nothing is stored).
        """
        now = time.time()
        rows = [
            (int(d), int(i), int(y), int(s), float(w), float(p), now, source)
            for d, i, y, s, w, p in zip(draw, items, labels, stage, weight, prob)
        ]
        with _transaction(self.conn):
            call = self.conn.execute("SELECT COALESCE(MAX(call), 0) + 1 FROM labels").fetchone()[0]
            rows = [row + (call,) for row in rows]
            self.conn.executemany(
                "INSERT INTO labels (draw, item, label, stage, weight, prob, created, source, call) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )


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
