"""The SQLite file of an on-demand evaluation session: schema, loading and writes.

Holds everything :class:`~labelwise.ondemand.session.OnDemandSession` needs
to resume the process of Chaganty, Paranjape, Liang and Manning,
"Importance sampling for unbiased on-demand evaluation of knowledge base
population", EMNLP 2017, Sec. 3.3 from any later command: the corpus'
documents, the universe of instances, the systems' predictions, the draws
made for each system, the verification answers, and the documents drawn for
exhaustive annotation with the correct instances found in them.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass

import numpy as np

from ..store.sqlite import statements
from .config import OnDemandConfig
from .costs import Prices

__all__ = ["SCHEMA", "SessionState", "config_from_json", "config_to_json", "create_schema", "load_state",
           "request_documents", "set_rounds"]

SCHEMA = """
CREATE TABLE od_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE od_documents (code INTEGER PRIMARY KEY, doc_id TEXT NOT NULL UNIQUE);
CREATE TABLE od_instances (code INTEGER PRIMARY KEY, instance_id TEXT NOT NULL UNIQUE,
    doc INTEGER NOT NULL REFERENCES od_documents(code), label INTEGER, found INTEGER NOT NULL DEFAULT 0);
CREATE TABLE od_systems (pos INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, draws INTEGER NOT NULL,
    planned INTEGER NOT NULL, reason TEXT NOT NULL);
CREATE TABLE od_predictions (system INTEGER NOT NULL, instance INTEGER NOT NULL, score REAL,
    PRIMARY KEY (system, instance));
CREATE TABLE od_draws (system INTEGER NOT NULL, k INTEGER NOT NULL, instance INTEGER NOT NULL,
    PRIMARY KEY (system, k));
CREATE TABLE od_doc_requests (pos INTEGER PRIMARY KEY, doc INTEGER NOT NULL UNIQUE, done INTEGER NOT NULL DEFAULT 0,
    done_order INTEGER);
"""


def config_to_json(config: OnDemandConfig) -> str:
    """The configuration as JSON (prices nested)."""
    return json.dumps(asdict(config), sort_keys=True)


def config_from_json(text: str) -> OnDemandConfig:
    """Inverse of :func:`config_to_json`.

    A file written before the self-normalized joint precision, the combined
    recall or the post-stratified precision became the default keeps the estimators it was written with
    (``normalized=False``, ``combined_recall=False``, ``post_stratified=False``): the same point
    estimates. Their variances (the floors of the own region and of pooled
    recall, the bound on the two recall factors' covariance) follow the
    installed version, so a reopened session may print other intervals and
    plan another number of documents than when it was written.
    """
    raw = json.loads(text)
    raw["prices"] = Prices(**raw["prices"])
    raw.setdefault("normalized", False)
    raw.setdefault("combined_recall", False)
    raw.setdefault("post_stratified", False)
    return OnDemandConfig(**raw)


@dataclass
class SessionState:
    """Everything stored in a session file, as arrays (codes index the tables' rows).

    ``label`` is -1 for an instance not verified; ``found`` is 1 for an
    instance found correct in an annotated document; ``doc_done`` lists the
    annotated documents in the order they were done, ``doc_wait`` the drawn
    ones not yet annotated.
    """

    config: OnDemandConfig
    seed: int
    doc_ids: list[str]
    instance_ids: list[str]
    inst_doc: np.ndarray
    label: np.ndarray
    found: np.ndarray
    names: list[str]
    members: list[np.ndarray]
    scores: list[np.ndarray | None]
    draws: list[np.ndarray]
    planned: list[int]
    reasons: list[str]
    doc_done: np.ndarray
    doc_wait: np.ndarray
    doc_requested: int
    doc_rounds: int

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    @property
    def K(self) -> int:
        return len(self.instance_ids)

    def pending_instances(self) -> np.ndarray:
        """Codes of drawn instances without a verification answer (sorted)."""
        if not self.draws:
            return np.zeros(0, dtype=np.int64)
        drawn = np.unique(np.concatenate(self.draws))
        return drawn[self.label[drawn] < 0]

    def complete_systems(self) -> int:
        """Length of the prefix of systems whose draws are all verified."""
        s = 0
        while s < len(self.draws) and np.all(self.label[self.draws[s]] >= 0):
            s += 1
        return s


def load_state(conn: sqlite3.Connection) -> SessionState:
    """Read the whole session file."""
    meta = dict(conn.execute("SELECT key, value FROM od_meta").fetchall())
    doc_ids = [r[0] for r in conn.execute("SELECT doc_id FROM od_documents ORDER BY code")]
    rows = conn.execute("SELECT instance_id, doc, label, found FROM od_instances ORDER BY code").fetchall()
    inst_ids = [r[0] for r in rows]
    inst_doc = np.array([r[1] for r in rows], dtype=np.int64)
    label = np.array([-1 if r[2] is None else r[2] for r in rows], dtype=np.int8)
    found = np.array([r[3] for r in rows], dtype=np.int8)
    sys_rows = conn.execute("SELECT pos, name, planned, reason FROM od_systems ORDER BY pos").fetchall()
    members, scores, draws = [], [], []
    for pos, *_ in sys_rows:
        pred = conn.execute("SELECT instance, score FROM od_predictions WHERE system = ? ORDER BY instance",
                            (pos,)).fetchall()
        members.append(np.array([r[0] for r in pred], dtype=np.int64))
        scores.append(None if pred[0][1] is None else np.array([r[1] for r in pred], dtype=float))
        draws.append(np.array([r[0] for r in conn.execute(
            "SELECT instance FROM od_draws WHERE system = ? ORDER BY k", (pos,))], dtype=np.int64))
    req = conn.execute("SELECT doc, done, done_order FROM od_doc_requests ORDER BY pos").fetchall()
    done = sorted((r[2], r[0]) for r in req if r[1])
    return SessionState(
        config=config_from_json(meta["config"]), seed=int(meta["seed"]), doc_ids=doc_ids,
        instance_ids=inst_ids, inst_doc=inst_doc, label=label, found=found,
        names=[r[1] for r in sys_rows], members=members, scores=scores, draws=draws,
        planned=[r[2] for r in sys_rows], reasons=[r[3] for r in sys_rows],
        doc_done=np.array([d for _, d in done], dtype=np.int64),
        doc_wait=np.array([r[0] for r in req if not r[1]], dtype=np.int64),
        doc_requested=len(req), doc_rounds=int(meta.get("doc_rounds", "0")),
    )


def create_schema(conn: sqlite3.Connection, config: OnDemandConfig, seed: int, doc_ids: list[str]) -> None:
    """Create the tables and store the configuration and the corpus (inside the caller's transaction)."""
    for stmt in statements(SCHEMA):
        conn.execute(stmt)
    conn.executemany("INSERT INTO od_meta VALUES (?, ?)",
                     [("config", config_to_json(config)), ("seed", str(int(seed))), ("doc_rounds", "0")])
    conn.executemany("INSERT INTO od_documents VALUES (?, ?)", list(enumerate(doc_ids)))


def request_documents(conn: sqlite3.Connection, state: SessionState, codes: np.ndarray) -> None:
    """Append drawn documents to the annotation queue."""
    start = state.doc_requested
    conn.executemany("INSERT INTO od_doc_requests (pos, doc) VALUES (?, ?)",
                     [(start + j, int(c)) for j, c in enumerate(codes)])
    state.doc_requested += len(codes)
    state.doc_wait = np.concatenate([state.doc_wait, np.asarray(codes, dtype=np.int64)])


def set_rounds(conn: sqlite3.Connection, state: SessionState, rounds: int) -> None:
    """Store how many more document-planning rounds the last system may trigger."""
    conn.execute("UPDATE od_meta SET value = ? WHERE key = 'doc_rounds'", (str(rounds),))
    state.doc_rounds = rounds
