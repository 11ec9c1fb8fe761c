"""Which command made a session file, read from its tables, so that a file given to the wrong command is named.

labelwise writes four kinds of SQLite files: a labeling session (``labelwise
init``), the same on an engine pool (``init --engine``), an on-demand
evaluation (``labelwise ondemand init``) and a discovery session
(``labelwise discover init``).  Each has a table only it has.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from .sqlite import StoreError

__all__ = ["file_kind", "wrong_kind"]

#: kind -> (the table only it has, what the file is, the command that reads it, ``{}`` for the file)
_KINDS = {
    "engine": ("engine_session", "a labeling session on an engine pool", "labelwise estimate {}"),
    "ondemand": ("od_meta", "an on-demand evaluation file", "labelwise ondemand report {}"),
    "discover": ("dc_meta", "a discovery session file", "labelwise discover report {}"),
    "pool": ("meta", "a labeling session file", "labelwise estimate {}"),
}


def file_kind(path: str | Path) -> str | None:
    """``"pool"``, ``"engine"``, ``"ondemand"`` or ``"discover"``: the kind of session file ``path`` is, else ``None``."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        with closing(sqlite3.connect(str(path))) as conn:  # only reads the schema
            names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error:
        return None
    return next((kind for kind, (table, _, _) in _KINDS.items() if table in names), None)


def wrong_kind(path: str | Path, expected: str) -> StoreError | None:
    """The error for a session file of another kind than ``expected`` (``"pool"`` takes engine sessions too),
    naming what it is and the command that reads it; ``None`` when it is of that kind or none known."""
    kind = file_kind(path)
    if kind is None or kind == expected or {kind, expected} == {"pool", "engine"}:
        return None
    _, what, command = _KINDS[kind]
    return StoreError(f"{str(path)!r} is {what}; use `{command.format(path)}`")
