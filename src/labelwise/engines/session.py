"""A labeling session on an engine pool: the session file references the pool instead of copying it.

The file (SQLite) stores the pool's files, row count and content fingerprint
(:func:`~labelwise.engines.files.fingerprint`), the block summary and plan,
the planned sample (ids and inclusion probabilities, in hand-out order), the
systems' outputs of the items handed out, and the labels.  ``online-poisson``
plans no sample at ``init`` (after the summary pass, its score strata in two
passes and the blocks within them in one):
every ``next`` that needs new items plans a round from the labels so far and
draws it (one pass, :mod:`labelwise.engines.online`); the file keeps the
strata, the blocks within them, and each round's plan and sample size.  ``importance`` draws at
``init`` until the budget's distinct items are in, as in memory
(:mod:`labelwise.engines.importance`); its draws are re-made from the seed
for every estimate.  ``stratified`` computes
its strata at ``init`` (two passes) and draws every batch in one pass
(:mod:`labelwise.engines.strata`); the file keeps the strata, the blocks
within them (one more pass at ``init``: the label floor's slope moments of
every estimate) and the stratum of every item handed out.  Reopening checks
the fingerprint and refuses a changed pool; ``next`` reads the rows of the
batch (content columns included) out of the engine; ``estimate`` needs no
pass over the pool, but for a measure of the scores reused from the labels
(one pass for its blocks' losses, :mod:`labelwise.engines.reused_losses`).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Self

import numpy as np
import pandas as pd

from ..designs import Design, design_from_spec
from ..estimators import Estimate
from ..measures import Measure
from ..store import StoreError
from ..store.sqlite import connect, operational_error, statements, transaction
from .blocks import BlockSummary
from .columns import EngineColumns
from .files import fingerprint
from .importance import importance_sample
from .labels import new_labels
from .marker import MARKER_TABLE
from .online import block_rounds
from .plan import (
    IMPORTANCE,
    ONLINE,
    PER_BATCH,
    STRATIFIED,
    PlannedSample,
    check_engine_design,
)
from .pool import EnginePool, measure_on_blocks
from .reused_losses import engine_block_losses
from .session_draws import BatchDraws
from .session_estimate import session_estimate
from .strata import engine_strata

__all__ = ["EngineSession"]

_SCHEMA = f"""
CREATE TABLE {MARKER_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE blocks (block INTEGER PRIMARY KEY, n INTEGER NOT NULL, prior_sum REAL NOT NULL);
CREATE TABLE sample (position INTEGER PRIMARY KEY, item_id INTEGER NOT NULL UNIQUE, b REAL NOT NULL, block INTEGER,
                     round INTEGER NOT NULL DEFAULT 0);
CREATE TABLE rounds (round INTEGER PRIMARY KEY, drawn INTEGER NOT NULL, b TEXT NOT NULL);
CREATE TABLE outputs (item_id INTEGER PRIMARY KEY, vals TEXT NOT NULL);
CREATE TABLE labels (item_id INTEGER PRIMARY KEY, label INTEGER NOT NULL, source TEXT, stored_at TEXT NOT NULL)
"""

#: The marker table's key of the blocks within the ``stratified`` strata (:meth:`EngineSession.stratum_summary`).
_STRATUM_SUMMARY = "stratum_summary"
#: The meta key saying where a curve's thresholds come from (:meth:`EngineSession.make_measure`).
_CURVE_THRESHOLDS = "curve_thresholds"
#: The meta key of the checksum of the systems' outputs (:meth:`EngineSession.pool`; sessions written before: none).
#: Sessions whose checksum coded scores by ``s / (1 + |s|)`` (key ``outputs_checksum``, written on one day of
#: development only) are checked by their footers alone, as those written before the checksum.
_CHECKSUM = "outputs_checksum_2"


class EngineSession(BatchDraws):
    """Labels for the planned sample of an engine pool; create with :meth:`create`, reopen with :meth:`open`."""

    def __init__(self, path: Path, conn: sqlite3.Connection, meta: dict, pool: EnginePool | None):
        self.path, self.conn, self.meta, self._pool = path, conn, meta, pool
        self._block_losses: dict[Measure, np.ndarray | None] = {}

    # ------------------------------------------------------------------ files
    @classmethod
    def create(cls, path: str | Path, pool: EnginePool, *, measure: str, systems: str | int | list[int],
               design: Design, budget: int, seed: int, level: float = 0.95) -> EngineSession:
        """Summarise the pool (one pass), plan, draw the sample (one pass) and write a new session file.

        Raises
        ------
        StoreError
            When ``path`` exists.
        ValueError
            For a design without a block plan or a measure the pool cannot serve.
        """
        path = Path(path)
        if path.exists():
            raise StoreError(f"session file {str(path)!r} already exists; `labelwise next` continues it, or "
                             "choose another path")
        check_engine_design(design.name)
        pool.check_items()
        target = pool.measure(measure, systems)
        s = pool.summary
        strata = engine_strata(pool.source, design) if design.name == STRATIFIED else None
        if design.name == ONLINE:  # the blocks within the model's leaves (the file's blocks table)
            rounds = block_rounds(pool, design, target)
            s, strata = rounds.summary, rounds.strata
        if design.name in PER_BATCH:
            sample = PlannedSample(np.empty(0, np.int64), np.empty(0), pool.n_items, np.empty(0, np.int64))
        elif design.name == IMPORTANCE:
            sample = importance_sample(pool, design, target, budget, seed)
        else:
            sample = pool.sample(pool.plan(design, target, budget), seed)
        meta = {"engine": pool.source.engine, "files": [str(f) for f in pool.files], "name": pool.name,
                "n_items": pool.n_items, "fingerprint": pool.fingerprint(), _CHECKSUM: pool.source.checksum(),
                "columns": pool.source.columns.to_json(),
                "measure": measure, "systems": systems, "design": design.spec(), "budget": budget, "seed": seed,
                "level": level, "handed": 0, "spark_master": getattr(pool.source, "master", None),
                _CURVE_THRESHOLDS: "sampled rows",
                "strata": None if strata is None else strata.to_json()}
        if design.name == STRATIFIED:
            meta[_STRATUM_SUMMARY] = pool.stratum_summary(strata).to_json()
        try:
            conn = connect(path)
            with transaction(conn):
                for statement in statements(_SCHEMA):
                    conn.execute(statement)
                conn.executemany(f"INSERT INTO {MARKER_TABLE} VALUES (?, ?)",
                                 [(k, json.dumps(v)) for k, v in meta.items()])
                conn.executemany("INSERT INTO blocks VALUES (?, ?, ?)",
                                 zip(s.keys.tolist(), s.counts.tolist(), s.prior_sums.tolist()))
                conn.executemany("INSERT INTO sample VALUES (?, ?, ?, ?, 0)",
                                 zip(range(len(sample)), sample.item_ids.tolist(), sample.inclusion.tolist(),
                                     sample.keys.tolist()))
        except sqlite3.Error as exc:
            raise operational_error(path, exc) from None
        return cls(path, conn, meta, pool)

    @classmethod
    def open(cls, path: str | Path) -> EngineSession:
        """Reopen a session file, refusing it if the pool's files changed since ``init``."""
        path = Path(path)
        try:
            conn = connect(path)
            meta = {k: json.loads(v) for k, v in conn.execute(f"SELECT key, value FROM {MARKER_TABLE}")}
        except sqlite3.Error as exc:
            raise operational_error(path, exc) from None
        files = [Path(f) for f in meta["files"]]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise StoreError(f"session file {str(path)!r}: its pool file {missing[0]!r} is gone; restore it "
                             "(the session references the pool, it does not copy it)")
        if fingerprint(files) != meta["fingerprint"]:
            raise StoreError(f"session file {str(path)!r}: the pool files ({meta['files'][0]!r}, ...) changed since "
                             "init (content fingerprint differs); restore them or start a new session")
        return cls(path, conn, meta, None)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ state
    @property
    def columns(self) -> EngineColumns:
        return EngineColumns.from_json(self.meta["columns"])

    @property
    def pool(self) -> EnginePool:
        """The pool through its engine (opened on first use: ``next`` needs it, ``estimate`` does not), refused
        when the systems' outputs changed since ``init`` though the files' footers did not (one pass; sessions
        written before the checksum was stored are checked by their footers alone)."""
        if self._pool is None:
            c = self.columns
            pool = EnginePool.open(self.meta["files"], self.meta["engine"], name=self.meta["name"],
                                   spark_master=self.meta.get("spark_master"),
                                   id_col=c.id, pred_cols=list(c.preds), prob_cols=list(c.probs),
                                   score_cols=list(c.scores), label_col=c.label, system_names=c.system_names)
            pool.check_checksum(self.meta.get(_CHECKSUM), f"session file {str(self.path)!r}")
            self._pool = pool
        return self._pool

    @cached_property
    def summary(self) -> BlockSummary:
        rows = np.array(self.conn.execute("SELECT block, n, prior_sum FROM blocks ORDER BY block").fetchall())
        c = self.columns
        return BlockSummary(rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), rows[:, 2],
                            len(c.system_names), bool(c.preds))

    @cached_property
    def sample(self) -> PlannedSample:
        rows = self.conn.execute("SELECT item_id, b FROM sample ORDER BY position").fetchall()
        ids, b = (np.array(col) for col in zip(*rows)) if rows else (np.empty(0, np.int64), np.empty(0))
        return PlannedSample(ids.astype(np.int64), b.astype(float), int(self.meta["n_items"]),
                             uniform=self.meta["design"]["design"] == "passive")

    def make_measure(self, names: str | None = None, systems: str | int | list[int] | None = None) -> Measure:
        """The session's measure, or ``names`` for ``systems`` (sample reuse).

        A curve's thresholds come from a sample of the pool's rows
        (:func:`~labelwise.engines.pool.measure_on_blocks`); a session written
        before that keeps the blocks' representatives', which its proposal
        and draws were made with, so that they replay.
        """
        sampled = self.meta.get(_CURVE_THRESHOLDS) == "sampled rows"
        return measure_on_blocks(names or self.meta["measure"], self.summary, self.columns.system_names,
                                 self.meta["systems"] if systems is None else systems,
                                 (lambda: self.pool.sampled_rows()) if sampled else None)

    @property
    def design(self) -> Design:
        return design_from_spec(self.meta["design"])

    def labeled(self) -> tuple[np.ndarray, np.ndarray]:
        """Ids and labels stored so far."""
        rows = self.conn.execute("SELECT item_id, label FROM labels ORDER BY item_id").fetchall()
        if not rows:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        ids, labels = (np.array(col, dtype=np.int64) for col in zip(*rows))
        return ids, labels

    @property
    def n_labels(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM labels").fetchone()[0])

    def pending(self) -> np.ndarray:
        """Ids handed out and not labeled yet, in hand-out order."""
        rows = self.conn.execute(
            "SELECT s.item_id FROM sample s LEFT JOIN labels l ON s.item_id = l.item_id "
            "WHERE s.position < ? AND l.item_id IS NULL ORDER BY s.position", (self.meta["handed"],)).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    # ------------------------------------------------------------------ steps
    def hand_out(self, n: int, new_only: bool = False) -> tuple[pd.DataFrame, int]:
        """Up to ``n`` items to label: pending ones first (none with ``new_only``), then the next of the sample.

        Returns the batch (``item_id``, an empty ``label`` column, then every
        other column of the pool's rows) and how many of them are new.
        """
        c = self.columns
        pool = self.pool  # opened, its checksum pass run, before the write lock: a long scan does not hold up `label`
        # the write lock first, then what was handed out: concurrent `next` commands never hand out an item twice
        with transaction(self.conn):
            stored = self.conn.execute(f"SELECT value FROM {MARKER_TABLE} WHERE key = 'handed'").fetchone()[0]
            self.meta["handed"] = start = int(json.loads(stored))
            pending = np.empty(0, np.int64) if new_only else self.pending()[:n]
            new = self._new_items(start, n - pending.size)
            ids = np.concatenate([pending, new])
            rows = pool.rows(ids) if ids.size else pd.DataFrame(columns=[c.id, *c.outputs])
            self.conn.executemany("INSERT OR REPLACE INTO outputs VALUES (?, ?)",
                                  zip(ids.tolist(), (json.dumps(v) for v in rows[list(c.outputs)].values.tolist())))
            self.meta["handed"] = start + new.size
            self.conn.execute(f"UPDATE {MARKER_TABLE} SET value = ? WHERE key = 'handed'",
                              (str(self.meta["handed"]),))
        frame = rows.drop(columns=[col for col in (c.id, c.label) if col is not None and col in rows])
        frame.insert(0, "label", "")
        frame.insert(0, "item_id", ids)
        return frame, int(new.size)

    @property
    def with_replacement(self) -> bool:
        """Whether the design draws with replacement (``importance``: the sample's ``b`` is the proposal ``q``)."""
        return self.meta["design"]["design"] == IMPORTANCE

    @cached_property
    def stratum_summary(self) -> BlockSummary:
        """The blocks within the ``stratified`` strata, stored at ``init``.  A file written before gets them from
        one pass over the pool at its first estimate and keeps them."""
        stored = self.meta.get(_STRATUM_SUMMARY)
        if stored is None:
            stored = self.meta[_STRATUM_SUMMARY] = self.pool.stratum_summary(self.strata).to_json()
            try:
                with transaction(self.conn):
                    self.conn.execute(f"INSERT OR IGNORE INTO {MARKER_TABLE} VALUES (?, ?)",
                                      (_STRATUM_SUMMARY, json.dumps(stored)))
            except sqlite3.Error:  # a read-only or busy file keeps no copy: its next opening makes the pass again
                pass
        return BlockSummary.from_json(stored, len(self.columns.system_names), bool(self.columns.preds))

    def block_losses(self, measure: Measure) -> np.ndarray | None:
        """``measure``'s mean loss of every block's items for each label (the interval's model of the unlabeled
        items; :func:`~labelwise.engines.reused_losses.engine_block_losses`): a measure of the scores takes one
        pass over the pool, once per measure."""
        if measure not in self._block_losses:
            self._block_losses[measure] = engine_block_losses(measure, self.summary, self.columns,
                                                              lambda: self.pool.source, self.strata)
        return self._block_losses[measure]

    def add_labels(self, item_ids: np.ndarray, labels: np.ndarray, source: str) -> int:
        """Store labels of handed-out items; returns how many are new.

        Raises
        ------
        LabelError
            Naming the first id that was not handed out, a label outside {0, 1}
            or one contradicting a stored label, and its place among the labels
            given (:func:`~labelwise.engines.labels.new_labels`); nothing is
            stored then.
        """
        fresh_ids, fresh_labels = new_labels(item_ids, labels, self.sample.item_ids[:self.meta["handed"]],
                                             *self.labeled())
        now = datetime.now(UTC).isoformat()
        with transaction(self.conn):
            self.conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)",
                                  [(i, int(v), source, now) for i, v in
                                   zip(fresh_ids.tolist(), fresh_labels.tolist())])
        return int(fresh_ids.size)

    def status(self) -> dict:
        """The fields of ``labelwise status --json`` (engine pools have no deferred, corrected or excluded items),
        plus the ``engine`` and the pool's ``files``."""
        health = str(self.conn.execute("PRAGMA quick_check(1)").fetchone()[0])
        return {"session": str(self.path), "pool": self.meta["name"], "n_items": int(self.meta["n_items"]),
                "systems": list(self.columns.system_names), "measure": self.make_measure().spec(),
                "design": self.meta["design"], "oracle": "deterministic", "labels": self.n_labels,
                "pending": int(self.pending().size), "deferred": 0, "relabels": 0, "excluded": 0,
                "draws": int(self.meta["handed"]), "health": health, "engine": self.meta["engine"],
                "files": self.meta["files"]}

    def export_frame(self) -> pd.DataFrame:
        """Every label, oldest first, in the columns of ``labelwise export``: ``draw`` is the item's place in the
        hand-out order, ``weight`` one over its planned inclusion probability ``b`` (``importance``: ``p / q``,
        ``1 / (N q)``, as in memory)."""
        rows = pd.read_sql_query("SELECT l.item_id, l.label, s.position, s.b, l.stored_at, l.source FROM labels l "
                                 "JOIN sample s ON l.item_id = s.item_id ORDER BY l.stored_at, s.position", self.conn)
        return pd.DataFrame({
            "item_id": rows["item_id"].to_numpy(np.int64), "label": rows["label"].astype("Int64").to_numpy(),
            "draw": rows["position"].to_numpy(np.int64),
            "weight": 1.0 / (rows["b"].to_numpy(float) * (self.sample.n_items if self.with_replacement else 1)),
            "time": pd.to_datetime(rows["stored_at"], utc=True).dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ").to_numpy(),
            "source": rows["source"].astype(str).to_numpy(), "event": np.full(len(rows), "label")})

    def handed_blocks(self, item_ids: np.ndarray) -> np.ndarray:
        """The sample's block column (the block key; ``stratified``: the stratum) of items handed out."""
        handed = pd.read_sql_query("SELECT item_id, block FROM sample", self.conn).set_index("item_id")
        return handed.loc[item_ids, "block"].to_numpy(np.int64)

    def estimate(self, measure: Measure | None = None, level: float | None = None) -> Estimate:
        """The estimate from the labels so far (:func:`~labelwise.engines.session_estimate.session_estimate`)."""
        return session_estimate(self, measure or self.make_measure(), level or self.meta["level"])
