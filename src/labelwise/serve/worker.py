"""The thread that owns the session, with group commit for answers.

The session and its SQLite connection are used from this one thread.  A
commit of the session file waits for the disk (``synchronous=FULL``: a
few fsyncs, about 15 ms here), so answers that arrive together are stored
in one transaction: every one of them is in the file before any of them
is acknowledged, and 20 annotators share a commit instead of queueing for
20.  If anything but a clean refusal (:class:`~labelwise.serve.desk.ServeError`)
goes wrong in a group, the group is rolled back and its jobs run again one
by one, each in its own transaction.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from .desk import ServeError

__all__ = ["SessionWorker"]

MAX_GROUP = 64


@dataclass
class _Job:
    fn: Callable
    args: tuple
    group: bool
    future: Future = field(default_factory=Future)

    def run(self) -> None:
        try:
            self.future.set_result(self.fn(*self.args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through its future
            self.future.set_exception(exc)


class SessionWorker:
    """Runs functions on one thread, in order; jobs submitted with ``group=True`` may share a transaction.

    Parameters
    ----------
    transaction : callable, optional
        Makes the context manager grouped jobs run in (set it before submitting any).
    """

    def __init__(self, transaction: Callable[[], AbstractContextManager] | None = None):
        self.transaction = transaction
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="labelwise-session", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable, *args, group: bool = False) -> Future:
        """Queue ``fn(*args)``; its future holds the result or the exception."""
        job = _Job(fn, args, group)
        self._jobs.put(job)
        return job.future

    async def run(self, fn: Callable, *args, group: bool = False) -> Any:
        """``fn(*args)`` on the worker, awaited."""
        return await asyncio.wrap_future(self.submit(fn, *args, group=group))

    def shutdown(self) -> None:
        """Run the jobs queued so far, then stop the thread."""
        self._jobs.put(None)
        self._thread.join()

    def _loop(self) -> None:
        later: deque[_Job] = deque()  # ungrouped jobs met while gathering a group
        while True:
            job = later.popleft() if later else self._jobs.get()
            if job is None:
                return
            if not job.group:
                job.run()
                continue
            group = [job]
            while len(group) < MAX_GROUP:
                try:
                    more = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if more is not None and more.group:
                    group.append(more)
                else:
                    later.append(more)
                    if more is None:
                        break
            self._run_group(group)

    def _run_group(self, group: list[_Job]) -> None:
        if len(group) == 1 or self.transaction is None:
            for job in group:
                job.run()
            return
        results: list = []
        try:
            with self.transaction():
                for job in group:
                    try:
                        results.append((job.fn(*job.args), None))
                    except ServeError as exc:
                        if not exc.clean:
                            raise
                        results.append((None, exc))
        except Exception:  # noqa: BLE001 - rolled back: each job runs again alone and meets its own error
            for job in group:
                job.run()
            return
        for job, (value, error) in zip(group, results):
            if error is None:
                job.future.set_result(value)
            else:
                job.future.set_exception(error)
