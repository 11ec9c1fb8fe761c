"""The draws of an engine session's designs that draw at every batch: ``online-poisson``'s rounds and
``stratified``'s batches.

:class:`BatchDraws` is the part of
:class:`~labelwise.engines.session.EngineSession` that plans and draws the
next items from the labels so far: ``online-poisson`` plans a round (one
pass, :mod:`labelwise.engines.online`) and the file keeps each round's plan
and sample size; ``stratified`` draws a batch within its strata (one pass,
:mod:`labelwise.engines.strata`) and the file keeps the stratum of every item
handed out.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .online import BlockRounds, RoundLog, next_round
from .plan import ONLINE
from .strata import EngineStrata, next_batch

__all__ = ["BatchDraws"]


class BatchDraws:
    """Per-batch draws of an engine session (module docstring); the session holds ``meta``, ``conn``, ``pool``,
    ``summary``, ``design``, ``columns``, ``sample``, ``labeled()`` and ``make_measure()``."""

    @property
    def online(self) -> bool:
        """Whether the design plans a round per batch (``online-poisson``)."""
        return self.meta["design"]["design"] == ONLINE

    @property
    def per_batch(self) -> bool:
        """Whether the design draws at every batch (``online-poisson``, ``stratified``) rather than once at ``init``
        (``stratified`` sessions written before it drew per batch keep their planned sample)."""
        return self.online or self.strata is not None

    @property
    def strata(self) -> EngineStrata | None:
        """The strata of ``stratified`` and of ``online-poisson``'s model (``None`` for other designs, and for
        ``online-poisson`` on strata of prior bins)."""
        return None if self.meta.get("strata") is None else EngineStrata.from_json(self.meta["strata"])

    def rounds(self) -> BlockRounds:
        """The rounds' planner and estimator over the session's blocks (``online-poisson``)."""
        return BlockRounds(self.design, self.summary, self.make_measure(), self.columns.system_names, self.strata)

    def round_log(self, item_ids: np.ndarray, labels: np.ndarray) -> RoundLog:
        """The rounds so far, with the blocks and rounds of the labeled ``item_ids``."""
        rows = self.conn.execute("SELECT drawn, b FROM rounds ORDER BY round").fetchall()
        inclusion = np.array([json.loads(b) for _, b in rows]).reshape(len(rows), self.summary.keys.size)
        drawn = np.array([d for d, _ in rows], dtype=np.int64)
        handed = pd.read_sql_query("SELECT item_id, block, round FROM sample", self.conn).set_index("item_id")
        found = handed.loc[item_ids]
        blocks = np.searchsorted(self.summary.keys, found["block"].to_numpy(np.int64))
        return RoundLog(blocks, labels, found["round"].to_numpy(np.int64), inclusion, drawn)

    def _new_items(self, start: int, k: int) -> np.ndarray:
        """The next ``k`` items of the sample; for ``online-poisson`` a new round, planned and drawn now, for
        ``stratified`` a new batch."""
        if not self.per_batch:
            return self.sample.item_ids[start:start + k]
        if k <= 0:
            return np.empty(0, np.int64)
        ids, labels = self.labeled()
        handed = pd.read_sql_query("SELECT item_id, block FROM sample", self.conn)
        if not self.online:  # stratified: the sample's block column holds the stratum
            new, of_new, b = next_batch(self.pool.source, self.strata, self.design, self.meta["seed"],
                                        handed["item_id"].to_numpy(np.int64), handed["block"].to_numpy(np.int64),
                                        ids, k)
            self.conn.executemany("INSERT INTO sample VALUES (?, ?, ?, ?, 0)",
                                  zip(range(start, start + new.size), new.tolist(), b.tolist(), of_new.tolist()))
            self.__dict__.pop("sample", None)
            return new
        round_ = int(self.conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0])
        b, drawn = next_round(self.pool, self.rounds(), self.meta["seed"], round_, self.round_log(ids, labels),
                              handed["item_id"].to_numpy(np.int64),
                              np.searchsorted(self.summary.keys, handed["block"].to_numpy(np.int64)), k)
        self.conn.execute("INSERT INTO rounds VALUES (?, ?, ?)", (round_, len(drawn), json.dumps(b.tolist())))
        new = drawn.item_ids[:k]
        self.conn.executemany("INSERT INTO sample VALUES (?, ?, ?, ?, ?)",
                              zip(range(start, start + new.size), new.tolist(), drawn.inclusion[:k].tolist(),
                                  drawn.keys[:k].tolist(), [round_] * new.size))
        self.__dict__.pop("sample", None)
        return new
