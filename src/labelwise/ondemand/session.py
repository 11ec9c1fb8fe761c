"""A resumable on-demand evaluation session answered by people, kept in one SQLite file.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.3:
on the submission of a system the number of new verifications is planned
by bisection on the predicted interval width of the joint estimator given what is
known so far, the sample is drawn and verified; documents drawn at random
from the corpus are annotated exhaustively for recall, more of them when
the recall interval needs it.  :class:`~labelwise.ondemand.process.Process`
runs this against a truth table; here the answers come from annotators
through :meth:`OnDemandSession.add_labels` and
:meth:`OnDemandSession.add_found`, and every step is a separate
transaction on the file (``BEGIN IMMEDIATE``, ``synchronous=FULL``), so
each can run in its own process.

The state of a :class:`Process` is rebuilt from the file for every
planning step and report: its ``truth`` holds only what exhaustive
annotation revealed (documents not annotated are never read), ``known`` the
verification answers.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..store.kinds import wrong_kind
from ..store.sqlite import StoreError, file_transaction, open_file, operational_error
from .config import OnDemandConfig, Problem
from .process import Process
from .simulate import final_estimates
from .store import (
    SessionState,
    create_schema,
    load_state,
    request_documents,
    set_rounds,
)
from .universe import Universe, is_uniform, stack_systems, system_distribution

__all__ = ["OnDemandSession"]

DOC_ROUNDS = 3  # document-planning rounds per submission, as in Process.arrive


def _codes(known: list[str], ids: Sequence[str]) -> np.ndarray:
    """Position of each of ``ids`` in ``known`` (-1 where absent), without a Python loop over the ids."""
    import pandas as pd

    return pd.Index(known).get_indexer(pd.Index(ids)) if known else np.full(len(ids), -1, dtype=np.int64)


def _none(x: float) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


class OnDemandSession:
    """On-demand evaluation of systems submitted one after another, resumable from a SQLite file.

    Parameters
    ----------
    path : str or Path
        The session file (use :meth:`create` or :meth:`open`).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    # ---- files ----------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, documents: Sequence, config: OnDemandConfig | None = None,
               seed: int = 0) -> OnDemandSession:
        """Start a session over a corpus of ``documents`` (ids, unique) in a new file ``path``."""
        path = Path(path)
        config = OnDemandConfig() if config is None else config
        if path.exists():
            raise ValueError(f"{str(path)!r} exists; open it with OnDemandSession.open or choose a new path")
        doc_ids = np.asarray(documents).astype(str).tolist()
        if not doc_ids or len(set(doc_ids)) != len(doc_ids):
            raise ValueError("documents must be a non-empty list of distinct document ids")
        if config.pilot:
            raise ValueError("pilot draws are not supported in a session; use pilot=0 (plan from the prior)")
        session = cls(path)
        with session._write() as conn:
            create_schema(conn, config, seed, doc_ids)
        return session

    @classmethod
    def open(cls, path: str | Path) -> OnDemandSession:
        """Open an existing session file."""
        path = Path(path)
        if not path.is_file():
            raise StoreError(f"session file {str(path)!r} does not exist; create it with `labelwise ondemand init` "
                             "(OnDemandSession.create)")
        session = cls(path)
        session._read()
        return session

    def _write(self) -> file_transaction:
        return file_transaction(self.path)

    def _read(self) -> SessionState:
        try:
            conn = open_file(self.path)
            try:
                return load_state(conn)
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise wrong_kind(self.path, "ondemand") or operational_error(self.path, exc) from None

    # ---- rebuilding the process -----------------------------------------------------------------
    @staticmethod
    def _process(state: SessionState, systems: int, drawn: int) -> Process:
        """A :class:`Process` over the first ``systems`` systems, with the draws of the first ``drawn``."""
        universe = Universe.from_docs(state.inst_doc, n_docs=state.n_docs)
        rows = [system_distribution(state.members[i], state.K, state.scores[i]) for i in range(systems)]
        done = np.zeros(state.n_docs, dtype=bool)
        done[state.doc_done] = True
        truth = (state.found > 0) & done[state.inst_doc]
        problem = Problem(universe, stack_systems(rows), truth, tuple(state.names[:systems]))
        proc = Process(problem, state.config, np.random.default_rng(state.seed))
        proc.known[:] = state.label
        proc.idx = [state.draws[i] for i in range(drawn)]
        proc.grp = [np.full(state.draws[i].size, i) for i in range(drawn)]
        proc.n[:drawn] = [state.draws[i].size for i in range(drawn)]
        proc.doc_perm = np.concatenate([state.doc_done, np.flatnonzero(~done)])
        proc.D = int(state.doc_done.size)
        proc.arrived = drawn
        proc.ledger.buy(labels=int((state.label >= 0).sum()), documents=proc.D)
        return proc

    def _doc_order(self, state: SessionState) -> np.ndarray:
        return np.random.default_rng([state.seed, 0]).permutation(state.n_docs)

    def _plan_more_documents(self, conn: sqlite3.Connection, state: SessionState) -> None:
        """When nothing waits, plan documents for recall (Process.arrive's loop, one round per batch)."""
        if state.doc_rounds <= 0 or state.doc_wait.size or state.pending_instances().size or not state.names:
            return
        m = len(state.names)
        proc = self._process(state, m, m)
        need = min(proc.plan_documents_for(m - 1), state.n_docs)
        set_rounds(conn, state, state.doc_rounds - 1 if need > state.doc_requested else 0)
        if need > state.doc_requested:
            request_documents(conn, state, self._doc_order(state)[state.doc_requested:need])

    # ---- the API --------------------------------------------------------------------------------
    def submit(self, name: str, instance_ids: Sequence, doc_ids: Sequence,
               scores: Sequence[float] | None = None, half_width: float | None = None) -> dict:
        """Store a system's predictions, plan and draw the verifications it needs.

        Parameters
        ----------
        name : str
            System name (new to the session).
        instance_ids, doc_ids : sequences of equal length
            Predicted instances and the document of each (a corpus document).
        scores : sequence of float, optional
            Positive scores: draws :math:`\\propto` score, with replacement
            (default: uniform, without replacement).
        half_width : float, optional
            This system's precision target (default: the session's).

        Returns
        -------
        dict
            ``system``, ``draws`` (sample size), ``planned_verifications``
            (new instances to verify), ``reason``, ``pending_documents``.
        """
        ids = np.asarray(instance_ids).astype(str).tolist()
        docs = np.asarray(doc_ids).astype(str).tolist()
        if len(ids) != len(docs) or not ids:
            raise ValueError("instance_ids and doc_ids must be non-empty and of equal length")
        if len(set(ids)) != len(ids):
            raise ValueError(f"system {name!r} lists an instance twice; pass each instance id once")
        with self._write() as conn:
            state = load_state(conn)
            if half_width is not None:
                if not half_width > 0:
                    raise ValueError(f"half_width: give a positive number, got {half_width}")
                state.config = replace(state.config, half_width=float(half_width))
            if name in state.names:
                raise ValueError(f"system {name!r} was already submitted; choose a new name")
            codes = self._add_instances(conn, state, ids, docs)
            s = len(state.names)
            order = np.argsort(codes)
            members = codes[order]
            sc = None if scores is None else np.asarray(scores, dtype=float)[order]
            system_distribution(members, state.K, sc)  # validates the scores
            state.names.append(name)
            state.members.append(members)
            state.scores.append(sc)
            conn.executemany("INSERT INTO od_predictions VALUES (?, ?, ?)",
                             [(s, int(c), None if sc is None else float(sc[j])) for j, c in enumerate(members)])
            proc = self._process(state, s + 1, s)
            target = proc.plan_precision(s)
            rng = np.random.default_rng([state.seed, 1 + s])
            if is_uniform(proc.pb.P[s:s + 1])[0]:
                drawn = rng.permutation(members)[:target]  # without replacement, as Process._draw
                upper = members.size
            else:
                drawn = rng.choice(state.K, size=target, p=proc.pb.P[s])
                upper = 10 * members.size
            seen = state.label >= 0
            for earlier in state.draws:
                seen[earlier] = True
            fresh = int(np.unique(drawn[~seen[drawn]]).size)
            if target >= upper:
                reason = f"the half-width target {state.config.half_width:g} needs the maximum of {upper} draws"
            elif target == 0:
                reason = "the labels already known meet the half-width target"
            else:
                reason = (f"{target} draws give precision within ±{state.config.half_width:g} at level "
                          f"{state.config.level:g} (bisection on the predicted interval width)")
            conn.execute("INSERT INTO od_systems VALUES (?, ?, ?, ?, ?)", (s, name, target, fresh, reason))
            conn.executemany("INSERT INTO od_draws VALUES (?, ?, ?)",
                             [(s, k, int(c)) for k, c in enumerate(drawn)])
            state.draws.append(np.asarray(drawn, dtype=np.int64))
            if s == 0:
                initial = min(state.config.initial_documents, state.n_docs)
                request_documents(conn, state, self._doc_order(state)[:initial])
            set_rounds(conn, state, DOC_ROUNDS)
            self._plan_more_documents(conn, state)
            return {"system": name, "draws": int(target), "planned_verifications": fresh, "reason": reason,
                    "pending_documents": int(state.doc_wait.size)}

    def _add_instances(self, conn: sqlite3.Connection, state: SessionState, ids: list[str],
                       docs: list[str]) -> np.ndarray:
        """Codes of ``ids``, adding new instances to the universe; checks the documents."""
        doc = _codes(state.doc_ids, docs)
        if (doc < 0).any():
            j = int(np.argmax(doc < 0))
            raise ValueError(f"document {docs[j]!r} of instance {ids[j]!r} is not in the corpus; "
                             "use one of the corpus's documents (the documents file of `labelwise ondemand init`)")
        codes = _codes(state.instance_ids, ids)
        old = codes >= 0
        wrong = np.zeros(old.size, dtype=bool)
        wrong[old] = state.inst_doc[codes[old]] != doc[old]
        if wrong.any():
            j = int(np.argmax(wrong))
            raise ValueError(f"instance {ids[j]!r} belongs to document {state.doc_ids[state.inst_doc[codes[j]]]!r}, "
                             f"not {docs[j]!r}; fix its doc id")
        fresh = np.flatnonzero(~old)
        codes[fresh] = len(state.instance_ids) + np.arange(fresh.size)
        new = [(int(codes[j]), ids[j], int(doc[j])) for j in fresh]
        conn.executemany("INSERT INTO od_instances (code, instance_id, doc) VALUES (?, ?, ?)", new)
        state.instance_ids += [x for _, x, _ in new]
        state.inst_doc = np.concatenate([state.inst_doc, doc[fresh].astype(np.int64)])
        state.label = np.concatenate([state.label, np.full(len(new), -1, dtype=np.int8)])
        state.found = np.concatenate([state.found, np.zeros(len(new), dtype=np.int8)])
        return codes

    def documents_of(self, instance_ids: Sequence) -> list[str]:
        """The document of each instance (ids as the session holds them); a ValueError for an unknown one."""
        state = self._read()
        ids = [str(x) for x in instance_ids]
        codes = _codes(state.instance_ids, ids)
        if (codes < 0).any():
            raise ValueError(f"instance {ids[int(np.argmax(codes < 0))]!r} is not in the evaluation")
        return np.asarray(state.doc_ids, dtype=object)[state.inst_doc[codes]].tolist() if ids else []

    def pending(self) -> dict:
        """What waits for people: ``{"verifications": [instance ids], "documents": [doc ids]}``."""
        state = self._read()
        return {"verifications": [state.instance_ids[c] for c in state.pending_instances()],
                "documents": [state.doc_ids[c] for c in state.doc_wait]}

    def add_labels(self, instance_ids: Sequence, labels: Sequence[int]) -> dict:
        """Store verification answers (1 correct, 0 incorrect) for pending instances; all or nothing."""
        ids = np.asarray(instance_ids).astype(str).tolist()
        labs = np.asarray(labels).tolist()
        if len(ids) != len(labs):
            raise ValueError("instance_ids and labels must have equal length")
        bad = ~np.isin(np.asarray(labs, dtype=object), [0, 1])
        if bad.any():
            j = int(np.argmax(bad))
            raise ValueError(f"label {labs[j]!r} for instance {ids[j]!r} is not 0 or 1; answer 1 (correct) or 0 "
                             "(incorrect)")
        if len(set(ids)) != len(ids):
            raise ValueError("an instance is answered twice in one call; give each instance id once")
        y = np.asarray(labs, dtype=np.int8)
        with self._write() as conn:
            state = load_state(conn)
            codes = _codes(state.instance_ids, ids)
            waiting = np.isin(codes, state.pending_instances()) & (codes >= 0)
            if not waiting.all():
                raise ValueError(f"instance {ids[int(np.argmax(~waiting))]!r} is not waiting for verification; answer "
                                 "only the instances `labelwise ondemand next` lists (pending() in Python)")
            conn.executemany("UPDATE od_instances SET label = ? WHERE code = ?", zip(y.tolist(), codes.tolist()))
            state.label[codes] = y
            self._plan_more_documents(conn, state)
            return {"stored": len(ids), "pending_verifications": int(state.pending_instances().size),
                    "pending_documents": int(state.doc_wait.size)}

    def add_found(self, doc_id, instance_ids: Sequence) -> dict:
        """Store the correct instances found by exhaustively annotating a pending document (may be none)."""
        d = str(doc_id)
        ids = np.asarray(instance_ids, dtype=object).astype(str).tolist()
        if len(set(ids)) != len(ids):
            raise ValueError(f"document {d!r}: an instance is listed twice; give each instance id once")
        with self._write() as conn:
            state = load_state(conn)
            waiting = {state.doc_ids[c]: int(c) for c in state.doc_wait}
            if d not in waiting:
                raise ValueError(f"document {d!r} is not waiting for annotation; annotate only the documents "
                                 "`labelwise ondemand next` lists (pending() in Python)")
            codes = self._add_instances(conn, state, ids, [d] * len(ids))
            conn.executemany("UPDATE od_instances SET found = 1 WHERE code = ?", [(int(c),) for c in codes])
            state.found[codes] = 1
            conn.execute("UPDATE od_doc_requests SET done = 1, done_order = ? WHERE doc = ?",
                         (int(state.doc_done.size), waiting[d]))
            state.doc_done = np.append(state.doc_done, waiting[d])
            state.doc_wait = state.doc_wait[state.doc_wait != waiting[d]]
            self._plan_more_documents(conn, state)
            return {"document": d, "found": len(ids), "pending_verifications": int(state.pending_instances().size),
                    "pending_documents": int(state.doc_wait.size)}

    def report(self) -> dict:
        """Per system precision, recall and F1 with intervals (joint estimator), and the money spent.

        Estimates cover the systems whose draws (and those of every earlier
        system) are all verified; later ones show ``status: "waiting"``.
        Recall needs at least one annotated document.
        """
        state = self._read()
        cfg = state.config
        ready = state.complete_systems()
        final = final_estimates(self._process(state, ready, ready), cfg.level) if ready else {}
        systems = []
        for i, name in enumerate(state.names):
            row: dict = {"name": name, "draws": int(state.draws[i].size), "planned_verifications": state.planned[i],
                         "verified": int(np.unique(state.draws[i][state.label[state.draws[i]] >= 0]).size),
                         "status": "estimated" if i < ready else "waiting"}
            for k in ("precision", "recall", "f1"):
                row[k] = _none(final[k][i]) if i < ready else None
                row[f"{k}_ci"] = [_none(final[f"{k}_lo"][i]), _none(final[f"{k}_hi"][i])] if i < ready else None
            systems.append(row)
        labels = int((state.label >= 0).sum())
        documents = int(state.doc_done.size)
        return {"systems": systems, "labels": labels, "documents": documents, "level": cfg.level,
                "dollars": cfg.prices.dollars(labels, documents),
                "exhaustive_dollars": cfg.prices.exhaustive(state.n_docs),
                "pending_verifications": int(state.pending_instances().size),
                "pending_documents": int(state.doc_wait.size)}
