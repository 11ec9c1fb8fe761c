"""SQLite plumbing of the session file: connections, transactions, the write lock and one-line errors.

A writer holds the file's write lock (``BEGIN IMMEDIATE``, :class:`transaction`)
from before it reads the state it acts on until it commits, so concurrent
commands serialize; one that cannot get the lock within
``LABELWISE_BUSY_TIMEOUT`` seconds (default 30) stops with a
:class:`StoreError`.  Every SQLite failure (read-only file, full disk,
damaged file) becomes a one-line :class:`StoreError` naming the file and
the fix (:func:`operational_error`).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["StoreError", "busy_timeout", "connect", "operational_error", "set_pragmas", "set_wal", "statements",
           "transaction"]


class StoreError(RuntimeError):
    """A session file that cannot be created, read or written; the message names the file and the fix."""


def busy_timeout() -> float:
    """Seconds a command waits for another one's write lock: ``LABELWISE_BUSY_TIMEOUT``, default 30."""
    try:
        return max(float(os.environ.get("LABELWISE_BUSY_TIMEOUT", "30")), 0.0)
    except ValueError:
        return 30.0


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) that waits :func:`busy_timeout` for a lock."""
    return sqlite3.connect(str(path), isolation_level=None, timeout=busy_timeout())


def set_pragmas(conn: sqlite3.Connection) -> None:
    """Durable commits; a rollback journal keeps every committed label in the one session file.

    A file in WAL mode (``labelwise serve`` is running on it, or was killed)
    is left so: the server's connection would block the switch, and SQLite
    reads the write-ahead log of a killed server on open.
    """
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA mmap_size=1073741824")  # reads of the pool and set-up blobs without copies through the cache


def set_wal(conn: sqlite3.Connection, on: bool) -> bool:
    """Switch the file to write-ahead logging (``on``) or back to a rollback journal; whether it switched.

    In WAL mode a commit is one append and one fsync of the log (still
    durable under ``synchronous=FULL``) and readers never wait for the
    writer.  Switching back needs the file to itself: while another
    connection has it open the file stays in WAL mode (nothing is lost;
    the last connection to close folds the log into the file).
    """
    wait = busy_timeout() if on else 0.0  # the way back is tried once, at the server's exit
    conn.execute(f"PRAGMA busy_timeout={int(1000 * wait)}")
    try:
        mode = conn.execute(f"PRAGMA journal_mode={'WAL' if on else 'DELETE'}").fetchone()[0]
    except sqlite3.OperationalError:
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout={int(1000 * busy_timeout())}")
    return mode == ("wal" if on else "delete")


def statements(script: str) -> list[str]:
    """The statements of an SQL script."""
    return [s for s in script.strip().split(";") if s.strip()]


def operational_error(path: Path, exc: sqlite3.Error) -> StoreError:
    """A one-line :class:`StoreError` for an SQLite failure on ``path``: what happened and what to do."""
    text = str(exc)
    where = f"session file {str(path)!r}"
    if "readonly" in text or "read-only" in text:
        fix = "is read-only; make it and its folder writable (chmod u+w) or copy it somewhere writable"
    elif "full" in text:
        fix = "cannot grow: the disk is full; free some space and run the command again"
    elif "locked" in text or "busy" in text:
        fix = (f"is busy: another labelwise command held its write lock for {busy_timeout():g} s; run the "
               "command again when it has finished (LABELWISE_BUSY_TIMEOUT sets the wait)")
    elif "malformed" in text or "not a database" in text or "corrupt" in text:
        fix = f"is damaged ({text}); restore it from a backup (`labelwise status` checks a file)"
    else:
        fix = f"could not be used ({text}); check the file and run the command again"
    return StoreError(f"{where} {fix}. Nothing was stored")


class transaction:
    """``BEGIN IMMEDIATE`` (or ``begin``) ... ``COMMIT``, rolled back on any error; joins an open transaction."""

    def __init__(self, conn: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE"):
        self.conn, self.begin = conn, begin
        self.outer = False

    def __enter__(self) -> sqlite3.Connection:
        self.outer = not self.conn.in_transaction
        if self.outer:
            self.conn.execute(self.begin)
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> bool:
        if not self.outer:
            return False
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
                return False
            except BaseException:
                self._rollback()
                raise
        self._rollback()
        return False

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


def open_file(path: Path) -> sqlite3.Connection:
    """A connection to the session file at ``path`` with :func:`set_pragmas` applied."""
    conn = connect(path)
    set_pragmas(conn)
    return conn


class file_transaction:
    """One write transaction on the session file at ``path``, on a connection of its own.

    The connection is closed on exit; every SQLite failure, on opening,
    inside the block or on commit, becomes a one-line :class:`StoreError`
    (:func:`operational_error`) and the transaction is rolled back.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.conn = open_file(self.path)
            self.tx = transaction(self.conn)
            return self.tx.__enter__()
        except sqlite3.Error as exc:
            raise operational_error(self.path, exc) from exc

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            self.tx.__exit__(exc_type, exc, tb)
        except sqlite3.Error as err:
            raise operational_error(self.path, err) from err
        finally:
            self.conn.close()
        if isinstance(exc, sqlite3.Error):
            raise operational_error(self.path, exc) from exc
        return False
