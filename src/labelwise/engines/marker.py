"""What marks a session file as an engine session (checked before anything heavy is imported)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

__all__ = ["MARKER_TABLE", "is_engine_session"]

#: The table only an engine session file has.
MARKER_TABLE = "engine_session"


def is_engine_session(path: str | Path) -> bool:
    """Whether ``path`` is a session file of an engine pool (rather than one holding its pool)."""
    path = Path(path)
    if not path.is_file():
        return False
    try:
        with closing(sqlite3.connect(str(path))) as conn:  # only reads the schema
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (MARKER_TABLE,)).fetchone()
    except sqlite3.Error:
        return False
    return found is not None
