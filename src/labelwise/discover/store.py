"""The SQLite file of a discovery session: schema, loading and writes.

It keeps the items with their attribute values (the hierarchy is rebuilt
from them), the settings, every query asked (node, configuration, exclude
list, cost) and the positives returned to it; the policy's state is
rebuilt by replaying the answered queries in order (the bootstrap of each
round is seeded by the round, so the replay is exact).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

import numpy as np

from ..store.sqlite import statements
from .costs import CostModel

__all__ = ["SCHEMA", "SessionRecord", "StoredQuery", "add_answers", "add_query", "create_schema", "load_record"]

SCHEMA = """
CREATE TABLE dc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE dc_items (code INTEGER PRIMARY KEY, item_id TEXT NOT NULL UNIQUE, attrs TEXT NOT NULL);
CREATE TABLE dc_queries (pos INTEGER PRIMARY KEY, node INTEGER NOT NULL, config INTEGER NOT NULL,
    k INTEGER NOT NULL, cost REAL NOT NULL, exclude TEXT NOT NULL, answered INTEGER NOT NULL DEFAULT 0);
CREATE TABLE dc_answers (query INTEGER NOT NULL REFERENCES dc_queries(pos), item INTEGER NOT NULL
    REFERENCES dc_items(code), PRIMARY KEY (query, item));
"""


@dataclass(frozen=True)
class StoredQuery:
    """A query of the file: its position, configuration, exclude list (item codes) and the answers."""

    pos: int
    node: int
    config: int
    k: int
    cost: float
    exclude: np.ndarray
    answered: bool
    returned: np.ndarray


@dataclass(frozen=True)
class SessionRecord:
    """Everything in a session file."""

    attributes: list[str]
    budget: float
    seed: int
    costs: CostModel
    item_ids: list[str]
    values: np.ndarray
    queries: list[StoredQuery]


def create_schema(conn: sqlite3.Connection, attributes: list[str], budget: float, seed: int, costs: CostModel,
                  item_ids: list[str], values: np.ndarray) -> None:
    """Create the tables and store the settings and the items (inside the caller's transaction)."""
    for stmt in statements(SCHEMA):
        conn.execute(stmt)
    settings = {"attributes": attributes, "budget": budget, "seed": seed, "costs": costs.to_dict()}
    conn.executemany("INSERT INTO dc_meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in settings.items()])
    conn.executemany("INSERT INTO dc_items VALUES (?, ?, ?)",
                     zip(range(len(item_ids)), item_ids, map(json.dumps, values.tolist()), strict=True))


def load_record(conn: sqlite3.Connection) -> SessionRecord:
    """Read the whole file."""
    meta = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM dc_meta")}
    items = conn.execute("SELECT item_id, attrs FROM dc_items ORDER BY code").fetchall()
    answers: dict[int, list[int]] = {}
    for query, item in conn.execute("SELECT query, item FROM dc_answers ORDER BY query, item"):
        answers.setdefault(query, []).append(item)
    queries = [StoredQuery(pos, node, config, k, cost, np.array(json.loads(exclude), dtype=np.int64), bool(done),
                           np.array(answers.get(pos, []), dtype=np.int64))
               for pos, node, config, k, cost, exclude, done in conn.execute(
                   "SELECT pos, node, config, k, cost, exclude, answered FROM dc_queries ORDER BY pos")]
    return SessionRecord(meta["attributes"], float(meta["budget"]), int(meta["seed"]),
                         CostModel(**meta["costs"]), [r[0] for r in items],
                         np.array([json.loads(r[1]) for r in items], dtype=str).reshape(len(items), -1), queries)


def add_query(conn: sqlite3.Connection, pos: int, node: int, config: int, k: int, cost: float,
              exclude: np.ndarray) -> None:
    """Store a query handed out (not answered yet)."""
    conn.execute("INSERT INTO dc_queries (pos, node, config, k, cost, exclude) VALUES (?, ?, ?, ?, ?, ?)",
                 (pos, node, config, k, cost, json.dumps([int(x) for x in exclude])))


def add_answers(conn: sqlite3.Connection, pos: int, items: np.ndarray) -> None:
    """Store the positives returned to query ``pos`` and mark it answered."""
    conn.executemany("INSERT INTO dc_answers VALUES (?, ?)", [(pos, int(i)) for i in items])
    conn.execute("UPDATE dc_queries SET answered = 1 WHERE pos = ?", (pos,))
