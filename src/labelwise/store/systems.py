"""A system added to a stored session: its column, the extended measure and the carried design states.

:func:`store_system` rewrites, in one transaction, what adding a system
changes in a session file: the pool's output arrays (one more column) and
system names, the config (the extended measure and the record of added
systems), the design's per-batch states carried over to the new design
(:mod:`labelwise.session_systems`) and the design's set-up.  A failure
leaves the file as it was.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .codec import encode_array
from .journal import Store

if TYPE_CHECKING:
    from ..pool import Pool

__all__ = ["store_system", "stored_design_states"]

_OUTPUT_FIELDS = ("preds", "scores", "probs")


def stored_design_states(store: Store) -> tuple[list[int], list[dict]]:
    """The stages that have a stored design state and those states, in order."""
    rows = store.conn.execute("SELECT stage, state FROM design_states ORDER BY stage").fetchall()
    return [int(stage) for stage, _ in rows], [json.loads(raw) for _, raw in rows]


def store_system(store: Store, pool: Pool, config: dict, stages: list[int], states: list[dict],
                 setup: bytes | None) -> None:
    """Store ``pool`` (the session's pool with the added system), ``config`` and the design ``states`` of
    ``stages`` atomically; ``setup`` replaces the stored design set-up (``None`` drops it: redone on open)."""
    with store.writing() as conn:
        conn.executemany("INSERT OR REPLACE INTO pool_arrays VALUES (?, ?)",
                         [(f, encode_array(getattr(pool, f))) for f in _OUTPUT_FIELDS if getattr(pool, f) is not None])
        meta = store.pool_meta()
        meta["system_names"] = list(pool.system_names)
        conn.execute("UPDATE meta SET value=? WHERE key='pool_meta'", (json.dumps(meta),))
        conn.execute("UPDATE meta SET value=? WHERE key='config'", (json.dumps(config),))
        conn.executemany("UPDATE design_states SET state=? WHERE stage=?",
                         [(json.dumps(s), stage) for stage, s in zip(stages, states)])
        if setup is None:
            conn.execute("DELETE FROM cache WHERE key='sampler'")
        else:
            conn.execute("INSERT OR REPLACE INTO cache VALUES ('sampler', ?)", (setup,))
        store._bump()
