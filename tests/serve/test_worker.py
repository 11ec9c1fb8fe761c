"""Group commit: answers queued together share one transaction; a failure reruns them one by one."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from labelwise.serve.desk import ServeError
from labelwise.serve.worker import SessionWorker


def test_grouped_jobs_share_a_transaction_and_failures_rerun_alone():
    transactions, gate = [], threading.Event()

    @contextmanager
    def transaction():
        transactions.append([])
        yield

    def job(x):
        if transactions:
            transactions[-1].append(x)
        if x == "refused":
            raise ServeError("no", 409)
        if x == "broken":
            raise ServeError("memory touched", clean=False)
        return x

    worker = SessionWorker(transaction)
    worker.submit(gate.wait)  # holds the thread while the answers queue up
    futures = [worker.submit(job, x, group=True) for x in ("a", "b", "refused", "c")]
    gate.set()
    assert [f.result() if f.exception() is None else str(f.exception()) for f in futures] == ["a", "b", "no", "c"]
    assert transactions == [["a", "b", "refused", "c"]]

    gate.clear()
    worker.submit(gate.wait)
    futures = [worker.submit(job, x, group=True) for x in ("d", "broken", "e")]
    gate.set()
    assert futures[0].result() == "d" and futures[2].result() == "e"
    with pytest.raises(ServeError, match="memory touched"):
        futures[1].result()
    worker.shutdown()
