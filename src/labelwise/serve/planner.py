"""The dashboard's plan, computed beside the server rather than on its session thread.

A plan toward the half-width ``labelwise plan SESSION --half-width H`` kept in the file runs pilot
sessions of the design (:func:`~labelwise.planning.plan_session`): seconds on a small pool, minutes on
10^5 items and more, and again whenever the labels change what the pilots are drawn from.  On the
session thread every annotator's answer would wait for it.  :class:`PlanWatch` computes it on a thread of
its own, on a session it opens from the file, and the dashboard shows the latest plan finished (with the
labels it was made from) while the next one is computed.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import Future
from pathlib import Path

from ..planning import target_plan
from ..session import Session

__all__ = ["REPLAN_SECONDS", "WAIT_SECONDS", "PlanWatch"]

#: Seconds the dashboard request that starts a plan waits for it before it shows the one before.
WAIT_SECONDS = 5.0
#: Seconds from the end of one plan to the start of the next: labels arriving all the time would otherwise keep
#: a core busy with pilot runs.
REPLAN_SECONDS = 60.0


def _plan_of(path: Path) -> dict | None:
    with Session.open(path) as session:  # a session of its own: the server's stays on its thread
        return target_plan(session)


class PlanWatch:
    """The latest plan of a session file toward its kept target, recomputed when the labels change.

    Parameters
    ----------
    path : Path
        The session file; each plan opens it afresh (it holds every label committed so far).
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._asked: tuple | None = None  # (target, labels) of the latest plan started
        self._running: Future | None = None
        self._latest: dict | None = None
        self._next_start = 0.0  # time.monotonic() from which another plan may start

    def _start(self, target: dict) -> Future:
        done: Future = Future()

        def compute() -> None:  # a daemon thread: a server stopped mid-plan does not wait for it
            try:
                done.set_result(_plan_of(self.path))
            except Exception as e:  # noqa: BLE001 - shown on the dashboard instead of the plan
                done.set_result({**target, "error": str(e)})

        threading.Thread(target=compute, name="labelwise-plan", daemon=True).start()
        return done

    def _take(self, found: Future) -> None:
        with self._lock:
            if self._running is found:
                self._running, self._next_start = None, time.monotonic() + REPLAN_SECONDS
                self._latest = found.result()

    async def plan(self, target: dict | None, n_labels: int) -> dict | None:
        """The plan toward ``target`` (:func:`~labelwise.planning.kept_target`) for the session at ``n_labels`` labels.

        A plan for other labels or another target is started unless one is being computed or the latest
        ended less than :data:`REPLAN_SECONDS` ago; the request that starts it waits up to :data:`WAIT_SECONDS`
        for it.  The answer is the latest finished plan (``labels_so_far`` says from how many labels),
        ``{**target, "computing": True}`` before the first, or ``{**target, "error": ...}`` when planning
        failed; ``None`` when no target is kept.
        """
        if target is None:
            return None
        asked = (json.dumps(target, sort_keys=True), int(n_labels))
        with self._lock:
            started = self._running is None and asked != self._asked and time.monotonic() >= self._next_start
            if started:
                self._asked, self._running = asked, self._start(target)
            running = self._running
        if started:
            await asyncio.wait([asyncio.wrap_future(running)], timeout=WAIT_SECONDS)
        if running is not None and running.done():
            self._take(running)
        with self._lock:
            return self._latest if self._latest is not None else {**target, "computing": True}
