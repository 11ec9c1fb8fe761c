"""The session file: a SQLite journal of the pool, the draws and the labels.

Every write is one transaction, committed (``synchronous=FULL``) before the
session acknowledges it, so a process killed at any point loses nothing it
acknowledged.  Writers serialize on the file's write lock and SQLite
failures become one-line :class:`StoreError` (:mod:`labelwise.store.sqlite`).
The pool is stored compressed (:mod:`labelwise.store.codec`), which makes a
session file self-contained.

Its tables and their schema versions: :mod:`labelwise.store.schema`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..draws import Draws
from .codec import decode_array, dump_state, encode_array, load_state
from .schema import READABLE_VERSIONS, SCHEMA_VERSION, TABLES, TABLES_ADDED
from .sqlite import (
    StoreError,
    connect,
    operational_error,
    set_pragmas,
    set_wal,
    statements,
    transaction,
)

if TYPE_CHECKING:  # the pool (pandas) is imported to load one, not to read a few rows
    from ..pool import Pool

__all__ = ["Store", "StoreError"]

_POOL_FIELDS = ("item_ids", "preds", "scores", "probs", "labels", "features")
#: Read in their stored type (one-byte predictions and labels, float32 scores): no whole-pool conversion on open.
_STORED_TYPE_FIELDS = ("preds", "scores", "probs", "labels")


class Store:
    """A session file on disk (see the module docstring for its tables)."""

    def __init__(self, path: str | Path, conn: sqlite3.Connection):
        self.path = Path(path)
        self.conn = conn

    @classmethod
    def create(cls, path: str | Path, pool: Pool, config: dict, rng_state: dict | None = None) -> Store:
        """Create a new session file holding ``pool``, ``config`` and the initial
        generator state ``rng_state`` (one transaction); refuses to overwrite."""
        path = cls.check_new(path)
        meta = {
            "schema_version": str(SCHEMA_VERSION),
            "revision": "0",
            "config": json.dumps(config),
            "pool_meta": json.dumps({"system_names": list(pool.system_names), "n_classes": pool.n_classes,
                                     "name": pool.name, "label_names": list(pool.label_names),
                                     "n_items": pool.n_items}),
        }
        if rng_state is not None:
            meta["rng_state"] = dump_state(rng_state)
        conn = None
        try:
            conn = connect(path)
            set_pragmas(conn)
            with transaction(conn):
                for statement in statements(TABLES) + statements(TABLES_ADDED):
                    conn.execute(statement)
                conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                conn.executemany(
                    "INSERT INTO pool_arrays VALUES (?, ?)",
                    [(f, encode_array(getattr(pool, f))) for f in _POOL_FIELDS if getattr(pool, f) is not None],
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

    @staticmethod
    def check_new(path: str | Path) -> Path:
        """``path`` if a session file can be created there, else :class:`StoreError` saying why."""
        path = Path(path)
        if path.exists():
            raise StoreError(f"session file {str(path)!r} already exists; `labelwise status {path}` shows it, "
                             "`labelwise next` continues it, or choose another path")
        if not path.parent.is_dir():
            raise StoreError(f"cannot create session file {str(path)!r}: directory {str(path.parent)!r} does not exist")
        return path

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
        # SQLite reads the header: a descriptor of our own, once closed, would release every POSIX lock this
        # process holds on the file -- the shared lock of a connection open on it (`labelwise serve`) included --
        # and another process could then checkpoint and delete the write-ahead log under that connection
        not_sqlite = StoreError(f"{str(path)!r} is not a labelwise session file (not an SQLite database)")
        if path.stat().st_size == 0:  # SQLite would take an empty file for an empty database
            raise not_sqlite
        try:
            conn = connect(path)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open session file {str(path)!r}: {exc}") from None
        try:
            version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            if str(exc) == "file is not a database":
                raise not_sqlite from None
            if "malformed" in str(exc) or "locked" in str(exc):
                raise operational_error(path, exc) from None
            from ..engines.marker import is_engine_session
            from .kinds import wrong_kind

            if is_engine_session(path):
                raise StoreError(f"{str(path)!r} is a session on an engine pool (`init --engine`): this command "
                                 "does not support it yet; use next, label, estimate, status and export") from None
            wrong = wrong_kind(path, "pool")
            if wrong is not None:
                raise wrong from None
            raise StoreError(f"{str(path)!r} is not a labelwise session file ({exc})") from None
        if version is None or not str(version[0]).isdigit() or int(version[0]) not in READABLE_VERSIONS:
            conn.close()
            found = None if version is None else version[0]
            raise StoreError(f"{str(path)!r}: unsupported session schema {found!r}; expected {SCHEMA_VERSION}")
        store = cls(path, conn)
        try:
            set_pragmas(conn)
            if int(version[0]) < SCHEMA_VERSION:
                with store.writing():
                    for statement in statements(TABLES_ADDED):
                        conn.execute(statement)
                    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        except (sqlite3.Error, StoreError) as exc:
            conn.close()
            raise exc if isinstance(exc, StoreError) else operational_error(path, exc) from None
        return store

    def close(self) -> None:
        self.conn.close()

    def has_table(self, name: str) -> bool:
        """Whether the file has table ``name`` (tables added later are created when first written)."""
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                                 (name,)).fetchone() is not None

    def int_columns(self, query: str, width: int, table: str | None = None) -> tuple[np.ndarray, ...]:
        """The ``width`` integer columns of ``query``'s rows; empty ones while ``table`` does not exist yet."""
        rows = [] if table is not None and not self.has_table(table) else self.conn.execute(query).fetchall()
        arr = np.array(rows, dtype=np.int64).reshape(-1, width)
        return tuple(arr[:, k] for k in range(width))

    def set_wal(self, on: bool) -> bool:
        """Write-ahead logging on or off (:func:`~labelwise.store.sqlite.set_wal`); whether it switched."""
        return set_wal(self.conn, on)

    # -------------------------------------------------------------- locking
    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """Hold the file's write lock: one transaction, committed on success, rolled back on any error.

        Reentrant: inside an outer :meth:`writing` it joins that transaction.
        SQLite failures become :class:`StoreError` (:func:`operational_error`).
        """
        try:
            with transaction(self.conn):
                yield self.conn
        except sqlite3.Error as exc:
            raise operational_error(self.path, exc) from None

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot: no other command's write lands between the reads inside."""
        try:
            with transaction(self.conn, "BEGIN"):
                yield self.conn
        except sqlite3.Error as exc:
            raise operational_error(self.path, exc) from None

    def revision(self) -> int:
        """Raised by every write: a session compares it with the one it read."""
        raw = self._meta("revision")
        return 0 if raw is None else int(raw)

    def _bump(self) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('revision', ?)", (str(self.revision() + 1),))

    def quick_check(self) -> str:
        """``"ok"`` or SQLite's first complaint about the file (``PRAGMA quick_check``)."""
        try:
            return str(self.conn.execute("PRAGMA quick_check(1)").fetchone()[0])
        except sqlite3.Error as exc:
            return str(exc)

    # ---------------------------------------------------------------- reads
    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def config(self) -> dict:
        return json.loads(self._meta("config"))

    def pool_meta(self) -> dict:
        """System names, number of classes, name and label names of the pool (and ``n_items`` in new files)."""
        return json.loads(self._meta("pool_meta"))

    def rng_state(self) -> dict | None:
        raw = self._meta("rng_state")
        return None if raw is None else load_state(json.loads(raw))

    def load_item_ids(self) -> np.ndarray:
        """The pool's item ids alone (no other array is read)."""
        row = self.conn.execute("SELECT data FROM pool_arrays WHERE name='item_ids'").fetchone()
        return decode_array(row[0])

    def load_pool(self) -> Pool:
        """The stored pool, as checked when the session was created (not checked again: 2 s at 10^7 items)."""
        from ..pool import Pool

        # outputs in their stored type: the pool widens the items it is asked for (Pool, Notes)
        arrays = {name: decode_array(data, stored_type=name in _STORED_TYPE_FIELDS)
                  for name, data in self.conn.execute("SELECT name, data FROM pool_arrays")}
        meta = self.pool_meta()
        # multi-label names (files written before they were stored have none: they keep their stored measure)
        return Pool(**{f: arrays.get(f) for f in _POOL_FIELDS}, system_names=tuple(meta["system_names"]),
                    n_classes=meta["n_classes"], name=meta["name"], label_names=tuple(meta.get("label_names", ())))

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
        return self.int_columns("SELECT item, label, call, draw FROM labels ORDER BY seq", 4)

    def load_relabels(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Corrections in stored order: the draw, its item and the new label."""
        return self.int_columns("SELECT draw, item, label FROM relabels ORDER BY seq", 3)

    def load_deferred(self) -> np.ndarray:
        """Items deferred by ``skip``, latest deferral last (an item deferred twice counts at its latest)."""
        return self.int_columns("SELECT item FROM deferred GROUP BY item ORDER BY MAX(seq)", 1)[0]

    def load_excluded(self) -> np.ndarray:
        """Items excluded as not judgeable, in the order they were excluded."""
        return self.int_columns("SELECT item FROM excluded ORDER BY seq", 1)[0]

    def counts(self) -> dict[str, int]:
        """Rows of the draws, labels, relabels, deferred and excluded tables."""
        return {t: int(self.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
                for t in ("draws", "labels", "relabels", "deferred", "excluded")}

    def design_states(self) -> list[dict]:
        """The design's state stored with each batch of draws, in order (batches without one left out)."""
        return [json.loads(raw) for (raw,) in self.conn.execute("SELECT state FROM design_states ORDER BY stage")]

    def cached(self, key: str) -> bytes | None:
        """What :meth:`put_cache` stored under ``key``."""
        row = self.conn.execute("SELECT data FROM cache WHERE key=?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def journal_rows(self) -> list[tuple]:
        """Every label, correction and exclusion: (draw, item, label, weight, created, source, event), oldest
        first, ``event`` being ``"label"``, ``"relabel"`` or ``"exclude"`` (whose label is ``None``): the
        export of ``labelwise export``."""
        return self.conn.execute(
            "SELECT draw, item, label, weight, created, source, 'label' AS event, seq, 0 AS kind FROM labels "
            "UNION ALL SELECT r.draw, r.item, r.label, l.weight, r.created, r.source, 'relabel', r.seq, 1 "
            "FROM relabels r JOIN labels l ON l.draw = r.draw "
            "UNION ALL SELECT e.draw, e.item, NULL, d.weight, e.created, e.source, 'exclude', e.seq, 2 "
            "FROM excluded e JOIN draws d ON d.seq = e.draw + 1 ORDER BY created, kind, seq"
        ).fetchall()

    # --------------------------------------------------------------- writes
    def put_cache(self, key: str, data: bytes, replacing: str | None = None) -> None:
        """Store ``data`` under ``key`` (not a change of the session: the revision stays); with ``replacing`` (a
        prefix of ``key``) the other entries whose key starts with it go in the same transaction: a family of
        entries of which only the newest is read."""
        with self.writing():
            if replacing is not None:
                self.conn.execute("DELETE FROM cache WHERE substr(key, 1, ?) = ? AND key != ?",
                                  (len(replacing), replacing, key))
            self.conn.execute("INSERT OR REPLACE INTO cache VALUES (?, ?)", (key, data))

    def keep_budget(self, budget: int, setup: bytes, rng_state: dict) -> None:
        """Store the budget a session's design was planned for, with that set-up and the generator state after it
        (one transaction): a session created without a budget and then run with one reopens as the one that ran."""
        with self.writing():
            config = {**self.config(), "budget": int(budget)}
            self.conn.execute("UPDATE meta SET value=? WHERE key='config'", (json.dumps(config),))
            self.conn.execute("INSERT OR REPLACE INTO cache VALUES ('sampler', ?)", (setup,))
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('rng_state', ?)", (dump_state(rng_state),))
            self._bump()

    def append_draws(self, stage: int, draws: Draws, rng_state: dict, design_state: dict | None = None) -> None:
        """Store a batch of draws, the generator state after it and the design's state, atomically."""
        now = time.time()
        rows = [
            (stage, int(i), float(w), float(p), int(s), int(c), now)
            for i, w, p, s, c in zip(draws.items, draws.weight, draws.prob, draws.stratum, draws.count)
        ]
        with self.writing():
            self.conn.executemany(
                "INSERT INTO draws (stage, item, weight, prob, stratum, count, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", rows,
            )
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('rng_state', ?)", (dump_state(rng_state),))
            if design_state:
                self.conn.execute("INSERT INTO design_states VALUES (?, ?)", (stage, json.dumps(design_state)))
            self._bump()

    def add_labels(self, items: np.ndarray, labels: np.ndarray, draw: np.ndarray, stage: np.ndarray,
                   weight: np.ndarray, prob: np.ndarray, source: str) -> None:
        """Store new labels atomically (all or none); ``draw`` is the index of the draw each answers.

        Raises
        ------
        StoreError
            If a draw already has a label (nothing is stored).
        """
        now = time.time()
        rows = [
            (int(d), int(i), int(y), int(s), float(w), float(p), now, source)
            for d, i, y, s, w, p in zip(draw, items, labels, stage, weight, prob)
        ]
        with self.writing():
            # calls grow with seq: the last row's call is the largest (found by rowid, not by a scan)
            last = self.conn.execute("SELECT call FROM labels ORDER BY seq DESC LIMIT 1").fetchone()
            call = 1 if last is None else last[0] + 1
            rows = [row + (call,) for row in rows]
            self.conn.executemany(
                "INSERT INTO labels (draw, item, label, stage, weight, prob, created, source, call) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._bump()

    def relabel(self, draw: np.ndarray, items: np.ndarray, old: np.ndarray, labels: np.ndarray, source: str) -> None:
        """Store corrections of labeled draws (the first answers stay in ``labels``)."""
        now = time.time()
        with self.writing():
            self.conn.executemany(
                "INSERT INTO relabels (draw, item, old, label, created, source) VALUES (?, ?, ?, ?, ?, ?)",
                [(int(d), int(i), int(o), int(y), now, source) for d, i, o, y in zip(draw, items, old, labels)],
            )
            self._bump()

    def exclude(self, items: np.ndarray, draws: np.ndarray, source: str) -> None:
        """Record that ``items`` (first drawn at ``draws``) are excluded as not judgeable."""
        now = time.time()
        with self.writing():
            self.conn.executemany("INSERT INTO excluded (item, draw, created, source) VALUES (?, ?, ?, ?)",
                                  [(int(i), int(d), now, source) for i, d in zip(items, draws)])
            self._bump()

    def defer(self, items: np.ndarray) -> None:
        """Record that ``items`` were skipped (handed out again after the other pending items)."""
        now = time.time()
        with self.writing():
            self.conn.executemany("INSERT INTO deferred (item, created) VALUES (?, ?)",
                                  [(int(i), now) for i in items])
            self._bump()

