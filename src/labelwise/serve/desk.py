"""The labeling desk: leases, answers, undo and overlap on one open session.

Every method runs on the server's single session thread (the session and
its SQLite connection are not shared), inside the session file's write
lock, so an answer and its idempotency key are one transaction, committed
before the method returns.

Undo records a retraction (``serve_retractions``, with its idempotency
key) and withdraws the answer from the session (:meth:`Session.withdraw`):
the draw is pending again (handed out first, to the annotator who undid
it) and the estimate, which uses the labeled prefix of the draws, waits
for it; the next answer to that draw is stored as a correction.  The
withdrawal is in the session file, so ``labelwise estimate`` run beside
the server sees it too.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..ledger import LabelError
from ..pool.ids import match_pool_ids
from ..session import Session
from .tables import LATEST, LIVE, Annotator, ensure_tables, session_writing

__all__ = ["Desk", "Handout", "ServeError"]

_HASH = 2654435761  # Knuth's multiplicative hash: picks the overlap items, the same ones at every start
_OPEN_RETRACTIONS = ("SELECT a.draw, a.item FROM serve_retractions r JOIN serve_answers a ON a.seq = r.answer "
                     f"WHERE a.role = 'label' AND {LATEST.format(a='a')}")


class ServeError(ValueError):
    """A request that cannot be served; ``status`` is its HTTP status (nothing was stored).

    ``clean`` says that memory was not touched either, so the session need not re-read its file.
    """

    def __init__(self, message: str, status: int = 422, clean: bool = True):
        super().__init__(message)
        self.status, self.clean = status, clean


@dataclass(frozen=True)
class Handout:
    """A draw handed to an annotator: ``role`` is ``label`` or ``overlap`` (a second opinion)."""

    draw: int
    item: int
    role: str


class Desk:
    """Hands out draws under leases and stores answers, idempotently, on an open session.

    Parameters
    ----------
    session : Session
        A session with a file.
    lease_seconds : float
        How long a handed-out draw is kept for its annotator.
    overlap : float
        Fraction of labeled items handed to a second annotator for agreement.
    until_half_width : float, optional
        Stop rule: no new draws once the anytime-valid interval's half-width is at most this
        (:func:`labelwise.anytime.half_width_reached`).
    """

    def __init__(self, session: Session, lease_seconds: float = 600.0, overlap: float = 0.0,
                 until_half_width: float | None = None):
        if session.store is None:
            raise ValueError("the server needs a session file")
        if not 0.0 <= overlap <= 1.0:
            raise ValueError(f"overlap: a fraction from 0 to 1, got {overlap}")
        self.session, self.lease_seconds, self.overlap = session, float(lease_seconds), float(overlap)
        self.until_half_width = until_half_width
        if until_half_width is not None:  # a design the stop rule cannot serve is refused now, not at `next`
            from ..anytime import weight_bound

            weight_bound(session.sampler, session.design)
        with self.writing() as conn:
            ensure_tables(conn)
            # retractions recorded by an older labelwise, which kept them in the server's tables only
            stale = [d for d, _ in conn.execute(_OPEN_RETRACTIONS).fetchall()
                     if int(session.ledger.label_of(np.array([d]), session.draws.items[[d]])[0]) >= 0]
            if stale:
                session.withdraw(stale, source="serve:undo")

    # ----------------------------------------------------------- locking
    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """The session's write lock on the file's latest state.

        A clean :class:`ServeError` inside ends the (empty) transaction normally and is raised after it.
        """
        refused = None
        with session_writing(self.session) as conn:
            try:
                yield conn
            except ServeError as exc:
                if not exc.clean:
                    raise
                refused = exc
        if refused is not None:
            raise refused

    # ---------------------------------------------------------- handing out
    def next(self, who: Annotator, n: int) -> list[Handout]:
        """Up to ``n`` draws for ``who``: its leased ones, second opinions, pending draws, then new draws.

        Every draw returned is leased to ``who`` for :attr:`lease_seconds`.
        """
        now = time.time()
        with self.writing() as conn:
            conn.execute("DELETE FROM serve_leases WHERE expires <= ?", (now,))
            leases = dict(conn.execute("SELECT draw, annotator FROM serve_leases").fetchall())
            pending = self.session.pending_in_order()
            taken = np.array([d for d, a in leases.items() if a != who.id], dtype=np.int64)
            mine = [d for d, a in leases.items() if a == who.id]
            chosen = [int(d) for d in pending[np.isin(pending, mine)]]
            chosen += [d for d in self._overlap_draws(conn, who, n) if d not in chosen]
            chosen += [int(d) for d in pending[~np.isin(pending, taken) & ~np.isin(pending, chosen)]]
            chosen = chosen[:n]
            if len(chosen) < n and not self._stop():
                chosen += [int(d) for d in self.session.hand_out(n - len(chosen), new_only=True)]
            conn.executemany("INSERT OR REPLACE INTO serve_leases VALUES (?, ?, ?)",
                             [(d, who.id, now + self.lease_seconds) for d in chosen])
            items = self.session.draws.items
            waiting = set(self.session.pending_draws.tolist())
            return [Handout(d, int(items[d]), "label" if d in waiting else "overlap")
                    for d in chosen]

    def _stop(self) -> bool:
        """Whether the stop rule (``until_half_width``) says no more new draws."""
        from ..anytime import half_width_reached

        return self.until_half_width is not None and half_width_reached(self.session, self.until_half_width)

    def _overlap_draws(self, conn: sqlite3.Connection, who: Annotator, n: int) -> list[int]:
        """Labeled draws picked for a second opinion that ``who`` did not answer and nobody holds."""
        if self.overlap <= 0:
            return []
        rows = conn.execute(
            f"SELECT a.draw FROM serve_answers a WHERE a.role = 'label' AND a.annotator != ? AND {LIVE.format(a='a')} "
            "AND ((a.item * ?) % 4294967296) < ? "
            "AND NOT EXISTS (SELECT 1 FROM serve_answers b WHERE b.draw = a.draw AND b.role = 'overlap' AND "
            f"{LIVE.format(a='b')}) AND NOT EXISTS (SELECT 1 FROM serve_leases l WHERE l.draw = a.draw AND "
            "l.annotator != ?) ORDER BY a.seq LIMIT ?", (who.id, _HASH, int(self.overlap * 2**32), who.id, n)).fetchall()
        return [int(d) for (d,) in rows if int(d) not in self.session.ledger.withdrawn]

    # ------------------------------------------------------------- answers
    def answer(self, who: Annotator, item_id, label: int, draw: int | None, key: str) -> dict:
        """Store ``who``'s answer once per idempotency ``key``; returns what was stored.

        Raises
        ------
        ServeError
            404 for an unknown item, 409 for a key reused with another answer
            or an answer contradicting the stored label, 422 for a draw that
            is not the item's; nothing is stored then.
        """
        pos = self.position(item_id)
        with self.writing() as conn:
            row = conn.execute("SELECT seq, item, draw, label, role FROM serve_answers WHERE key = ?",
                               (key,)).fetchone()
            if row is not None:
                if (row[1], row[3]) != (pos, label):
                    raise ServeError(f"idempotency_key {key!r} was used for another answer; use a new key per "
                                     "answer", 409)
                return self._stored(row, replayed=True)
            d = self._draw_of(pos, draw)
            role = self._store(conn, who, item_id, pos, d, label)
            if role is None:  # the same answer again, under a new key: nothing new to store
                return self._stored((None, pos, d, label, "label"), replayed=True)
            cur = conn.execute(
                "INSERT INTO serve_answers (key, annotator, item, draw, label, role, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (key, who.id, pos, d, label, role, time.time()))
            conn.execute("DELETE FROM serve_leases WHERE draw = ? AND annotator = ?", (d, who.id))
            return self._stored((cur.lastrowid, pos, d, label, role), replayed=False)

    def _draw_of(self, pos: int, draw: int | None) -> int:
        """The draw an answer to item ``pos`` is stored at (checked): the one given under a stochastic
        oracle, the item's first draw under a deterministic one."""
        items = self.session.draws.items
        if draw is not None and (not 0 <= draw < items.size or items[draw] != pos):
            raise ServeError(f"draw: {draw} is not a draw of item {self.item_id(pos)}; keep the draw /api/next gave")
        if self.session.stochastic:
            if draw is None:
                raise ServeError("draw: this session labels draws (stochastic oracle); give the draw /api/next listed")
            return draw
        drawn = items == pos
        if not drawn.any():
            raise ServeError(f"item {self.item_id(pos)} was not handed out; label the items /api/next gives")
        return int(np.argmax(drawn))

    def _store(self, conn: sqlite3.Connection, who: Annotator, item_id, pos: int, d: int, label: int) -> str | None:
        """Write the answer into the session; its role (``overlap`` answers are kept for agreement only), or
        ``None`` for an answer the session already holds."""
        s, draws = self.session, [d] if self.session.stochastic else None
        source = f"serve:{who.name}"
        try:
            current = int(s.ledger.label_of(np.array([d]), np.array([pos]))[0])
            if current < 0:  # after an undo the session stores it as a correction
                s.add_labels([item_id], [label], source=source, draws=draws)
                return "label"
        except LabelError as exc:
            raise ServeError(str(exc), clean=False) from None
        first = conn.execute("SELECT annotator FROM serve_answers WHERE draw = ? AND role = 'label' ORDER BY seq DESC "
                             "LIMIT 1", (d,)).fetchone()
        if self.overlap > 0 and first is not None and first[0] != who.id:
            if s.stochastic:  # a sample of the item's label too: the estimate averages the draw's answers
                s.add_answers([item_id], [label], [d], source=source)
            return "overlap"
        if current != label:
            raise ServeError(f"item {self.item_id(pos)} already has label {current}; the answer {label} contradicts "
                             "it. Nothing was stored", 409)
        return None

    def position(self, item_id) -> int:
        """The pool position of one item id (text ``"17"`` finds id 17); a 404 :class:`ServeError` if unknown."""
        pool = self.session.pool
        try:
            found = pool.index.get_loc(match_pool_ids(np.array([item_id]), pool.item_ids)[0])
        except (KeyError, TypeError):
            raise ServeError(f"item_id: {item_id!r} is not in the pool; use ids exactly as /api/next gives them",
                             404) from None
        return int(found)

    def item_id(self, pos: int):
        """The id of the item at pool position ``pos`` as a Python ``int`` or ``str`` (JSON-ready)."""
        value = self.session.pool.item_ids[pos]
        return value.item() if isinstance(value, np.generic) else value

    def _stored(self, row: tuple, replayed: bool) -> dict:
        seq, pos, d, label, role = row
        return {"answer": None if seq is None else int(seq), "item_id": self.item_id(int(pos)), "draw": int(d),
                "label": int(label), "role": role, "replayed": replayed, "n_labels": int(self.session.n_labels)}

    # ---------------------------------------------------------------- undo
    def undo(self, who: Annotator, key: str) -> dict:
        """Retract ``who``'s latest answer still standing (once per ``key``); its draw is leased back to ``who``.

        Raises
        ------
        ServeError
            409 when ``who`` has no answer left to undo.
        """
        with self.writing() as conn:
            row = conn.execute("SELECT a.seq, a.item, a.draw, a.label, a.role FROM serve_retractions r JOIN "
                               "serve_answers a ON a.seq = r.answer WHERE r.key = ?", (key,)).fetchone()
            if row is not None:
                return self._stored(row, replayed=True)
            row = conn.execute(
                f"SELECT a.seq, a.item, a.draw, a.label, a.role FROM serve_answers a WHERE a.annotator = ? AND "
                f"{LIVE.format(a='a')} AND {LATEST.format(a='a')} ORDER BY a.seq DESC LIMIT 1", (who.id,)).fetchone()
            if row is None:
                raise ServeError("nothing to undo: every answer of yours is already undone", 409)
            now = time.time()
            conn.execute("INSERT INTO serve_retractions (key, answer, created) VALUES (?, ?, ?)", (key, row[0], now))
            if row[4] == "label":
                self.session.withdraw([int(row[2])], source=f"serve:{who.name}")
            elif self.session.stochastic:
                self.session.retract_answer(int(row[2]), int(row[3]), f"serve:{who.name}")
            conn.execute("INSERT OR REPLACE INTO serve_leases VALUES (?, ?, ?)",
                         (row[2], who.id, now + self.lease_seconds))
            return self._stored(row, replayed=False)

    # ---------------------------------------------------------------- skip
    def skip(self, who: Annotator, item_id) -> dict:
        """Defer a pending item (``who`` is unsure): it is handed out again after the other pending items.

        Skipping a second opinion only gives it back.  Raises :class:`ServeError` (404) for an unknown item.
        """
        pos = self.position(item_id)
        with self.writing() as conn:
            draws = self.session.pending_draws
            waiting = draws[self.session.draws.items[draws] == pos]
            if waiting.size:
                self.session.skip([item_id])
            conn.executemany("DELETE FROM serve_leases WHERE draw = ? AND annotator = ?",
                             [(int(d), who.id) for d in np.flatnonzero(self.session.draws.items == pos)])
            return {"item_id": self.item_id(pos), "deferred": bool(waiting.size)}
