"""A resumable discovery session answered by people, kept in one SQLite file.

Every command is one transaction on the file (``BEGIN IMMEDIATE``,
``synchronous=FULL``): :meth:`DiscoverySession.next_query` hands out the
query the CRUX policy picks (:class:`~labelwise.discover.policy.QueryPolicy`)
and stores it, :meth:`~DiscoverySession.answer` stores the positives the
annotators returned to it, :meth:`~DiscoverySession.report` says what was
found, where, for how much, and how many positives are estimated to remain.
Input that fails a check raises before anything is written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..store.kinds import wrong_kind
from ..store.sqlite import StoreError, file_transaction, open_file, operational_error
from .costs import CostModel
from .hierarchy import Hierarchy
from .policy import Query, QueryPolicy
from .store import SessionRecord, add_answers, add_query, create_schema, load_record

__all__ = ["DiscoverySession"]


class DiscoverySession:
    """Finding the positives of a domain on a budget, resumable from a SQLite file.

    Parameters
    ----------
    path : str or Path
        The session file (use :meth:`create` or :meth:`open`).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def create(cls, path: str | Path, items: pd.DataFrame, attributes: list[str], budget: float,
               costs: CostModel | None = None, seed: int = 0, id_col: str = "item_id") -> DiscoverySession:
        """Start a session over ``items`` (one row per item: ``id_col`` and the attribute columns)."""
        path = Path(path)
        costs = CostModel() if costs is None else costs
        if path.exists():
            raise ValueError(f"{str(path)!r} exists; open it with DiscoverySession.open or choose a new path")
        if budget <= 0:
            raise ValueError(f"budget: give a positive amount, got {budget:g}")
        missing = [c for c in [id_col, *attributes] if c not in items.columns]
        if missing:
            raise ValueError(f"no column {missing[0]}; the file needs columns {', '.join([id_col, *attributes])}")
        ids = items[id_col].astype(str).str.strip()
        repeated = ids.duplicated()
        if repeated.any():
            raise ValueError(f"data row {int(np.argmax(repeated.to_numpy())) + 1}: item {ids[repeated].iloc[0]!r} "
                             "is listed twice; give each item once")
        hierarchy = Hierarchy.from_frame(items, attributes)
        session = cls(path)
        with file_transaction(session.path) as conn:
            create_schema(conn, list(attributes), float(budget), int(seed), costs, ids.tolist(), hierarchy.values)
        return session

    @classmethod
    def open(cls, path: str | Path) -> DiscoverySession:
        """Open an existing session file."""
        path = Path(path)
        if not path.is_file():
            raise StoreError(f"session file {str(path)!r} does not exist; create it with `labelwise discover init`")
        session = cls(path)
        session._read()
        return session

    def _read(self, conn: sqlite3.Connection | None = None) -> SessionRecord:
        try:
            if conn is not None:
                return load_record(conn)
            own = open_file(self.path)
            try:
                return load_record(own)
            finally:
                own.close()
        except (sqlite3.Error, KeyError) as exc:
            wrong = wrong_kind(self.path, "discover")
            if wrong is not None:
                raise wrong from None
            if isinstance(exc, KeyError):
                raise StoreError(f"session file {str(self.path)!r} is not a discovery session (made by "
                                 "`labelwise discover init`)") from None
            raise operational_error(self.path, exc) from exc

    @staticmethod
    def _replay(record: SessionRecord) -> tuple[Hierarchy, QueryPolicy]:
        """The hierarchy and the policy's state after the answered queries."""
        frame = pd.DataFrame(record.values, columns=record.attributes)
        hierarchy = Hierarchy.from_frame(frame, record.attributes)
        policy = QueryPolicy(hierarchy, record.costs, "crux", seed=record.seed)
        for q in record.queries:
            if q.answered:
                policy.record(Query(q.node, q.config, q.k, q.exclude, q.cost), q.returned)
        return hierarchy, policy

    @staticmethod
    def _describe(record: SessionRecord, hierarchy: Hierarchy, pos: int, node: int, k: int, exclude: np.ndarray,
                  cost: float) -> dict:
        return {"query": pos, "node": hierarchy.describe(node), "k": k,
                "exclude": [record.item_ids[i] for i in exclude], "cost": cost}

    # ---- the API ----------------------------------------------------------------------------------
    def next_query(self) -> dict:
        """The query to give the annotators (the pending one again if it has no answer yet).

        Returns ``{query, node, k, exclude, cost}``: ask for up to ``k`` positives of ``node`` (a
        ``{attribute: value}`` conjunction) other than the ``exclude`` items; ValueError once no query
        fits in the budget.
        """
        with file_transaction(self.path) as conn:
            record = self._read(conn)
            hierarchy, policy = self._replay(record)
            pending = [q for q in record.queries if not q.answered]
            if pending:
                q = pending[0]
                return self._describe(record, hierarchy, q.pos, q.node, q.k, q.exclude, q.cost)
            rng = np.random.default_rng([record.seed, policy.round, 1])
            query = policy.choose(record.budget - policy.spent, rng)
            if query is None:
                raise ValueError(f"no query fits in the budget left ({record.budget - policy.spent:g} of "
                                 f"{record.budget:g}; the cheapest costs {policy.price.min():g}); see `labelwise "
                                 "discover report`")
            pos = len(record.queries)
            add_query(conn, pos, query.node, query.config, query.k, query.cost, query.exclude)
            return self._describe(record, hierarchy, pos, query.node, query.k, query.exclude, query.cost)

    def answer(self, item_ids: Sequence[str]) -> dict:
        """Store the positives returned to the pending query; ``{query, returned, new, found}``.

        Raises
        ------
        ValueError
            No pending query, an unknown item, one outside the query's node, one on its exclude list,
            one given twice, or more than ``k`` items.
        """
        ids = pd.Index(np.asarray(item_ids, dtype=str))
        with file_transaction(self.path) as conn:
            record = self._read(conn)
            pending = [q for q in record.queries if not q.answered]
            if not pending:
                raise ValueError("no query waits for answers; get one with `labelwise discover next`")
            q = pending[0]
            codes = pd.Index(record.item_ids).get_indexer(ids)
            hierarchy, policy = self._replay(record)
            problems = [(codes < 0, "is not in the session's items"),
                        (ids.duplicated(), "is given twice"),
                        (np.isin(codes, q.exclude), "is on the query's exclude list")]
            problems.append((~problems[0][0] & ~hierarchy.members(q.node, np.maximum(codes, 0)),
                             f"is not in the queried node {hierarchy.describe(q.node)}"))
            for bad, why in problems:
                if np.any(bad):
                    line = int(np.argmax(bad))
                    raise ValueError(f"data row {line + 1}: item {ids[line]!r} {why}; drop the row")
            if codes.size > q.k:
                raise ValueError(f"{codes.size} items for a query of up to {q.k}; keep the first {q.k}")
            add_answers(conn, q.pos, codes)
            new = policy.record(Query(q.node, q.config, q.k, q.exclude, q.cost), codes)
            return {"query": q.pos, "returned": int(codes.size), "new": new, "found": int(policy.found.sum())}

    def report(self, level: float = 0.95) -> dict:
        """Positives found, per queried node, the spend and the estimated number not found yet.

        ``remaining_estimate`` holds ``value``, ``interval``, ``estimated_total``, ``lower_bound_only``
        (the interval's assumptions look doubtful: only the interval's lower end is then a bound, a lower
        one), ``doubts`` (why) and ``unseen_share`` (share of answers that would still be new).  The root's
        row in ``nodes`` is that estimate; a deeper node's is a guide from every answer at or above it
        (:meth:`~labelwise.discover.policy.QueryPolicy.node_remaining`).
        """
        record = self._read()
        hierarchy, policy = self._replay(record)
        answered = [q for q in record.queries if q.answered]
        nodes = sorted({q.node for q in answered})
        depth = hierarchy.depth()
        overall = policy.remaining(level)
        per_node = []
        for node in nodes:  # one row per queried node (a few hundred at most)
            estimate = overall if depth[node] == 0 else policy.node_remaining(node, level)
            asked = [q for q in answered if q.node == node]
            per_node.append({"node": hierarchy.describe(node), "depth": int(depth[node]),
                             "queries": len(asked), "spent": float(sum(q.cost for q in asked)),
                             "found": int(policy.found_in[node]), "estimated_total": estimate["total"],
                             "remaining": estimate["remaining"], "interval": estimate["interval"],
                             "lower_bound_only": estimate["lower_bound_only"]})
        return {"budget": record.budget, "spent": policy.spent, "queries": len(answered),
                "found": int(policy.found.sum()), "level": level,
                "remaining_estimate": {"value": overall["remaining"], "interval": overall["interval"],
                                       "estimated_total": overall["total"],
                                       "lower_bound_only": overall["lower_bound_only"], "doubts": overall["doubts"],
                                       "unseen_share": overall["unseen_share"]},
                "nodes": per_node}

    def found_ids(self) -> list[str]:
        """Ids of the positives found, in item order."""
        record = self._read()
        codes = np.unique(np.concatenate([q.returned for q in record.queries] or [np.zeros(0, dtype=np.int64)]))
        return [record.item_ids[i] for i in codes]
