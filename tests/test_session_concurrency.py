"""Concurrent writers on one session file: they serialize on the write lock and each sees the others' work."""

from __future__ import annotations

import multiprocessing
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from labelwise.datasets import make_pool
from labelwise.designs import DESIGNS, make_design
from labelwise.measures import make_measure
from labelwise.session import Session
from labelwise.store import StoreError

POOL_ARGS = dict(n_items=400, prevalence=0.2, separation=2.0, seed=3)

def _child(path: str, go, queue, what: str, ids=None, labels=None) -> None:
    """One command in a forked process (labelwise already imported): starts when ``go`` is set."""
    go.wait()
    with Session.open(path) as s:
        if what == "next":
            queue.put(" ".join(map(str, s.next_batch(15, new_only=True))))
        else:
            s.add_labels(ids, labels)
            queue.put(str(s.n_labels))


def _draw_rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT stage, item, weight, prob, stratum, count FROM draws ORDER BY seq").fetchall()


def _run_together(path: Path, *argv: tuple) -> list[str]:
    """Fork one process per ``argv`` and release them at once; their outputs."""
    ctx = multiprocessing.get_context("fork")
    go, queue = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_child, args=(str(path), go, queue, *a)) for a in argv]
    for p in procs:
        p.start()
    go.set()
    outs = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    return outs


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_two_next_at_once_serialize_like_two_in_a_row(tmp_path, name):
    pool = make_pool(**POOL_ARGS)
    path = tmp_path / "s.lws"
    Session(pool, make_measure("f1", pool), make_design(name), seed=5, budget=100, path=path).close()
    sequential = tmp_path / "seq.lws"
    shutil.copy(path, sequential)
    for _ in range(2):
        with Session.open(sequential) as s:
            s.next_batch(15, new_only=True)

    outs = _run_together(path, ("next",), ("next",))
    assert _draw_rows(path) == _draw_rows(sequential)  # no draw made twice, none lost
    handed = [set(o.split()) for o in outs]
    if not make_design(name).with_replacement:
        # the second waits for the first's round to be labeled: it hands out nothing new
        assert sorted(len(h) for h in handed) == [0, 15]
    else:
        assert all(handed) and not handed[0] & handed[1]  # disjoint new items


@pytest.mark.parametrize("name", ["importance", "online-poisson"])
def test_two_label_at_once_both_land(tmp_path, name):
    pool = make_pool(**POOL_ARGS)
    path = tmp_path / "s.lws"
    with Session(pool, make_measure("f1", pool), make_design(name), seed=5, path=path) as s:
        ids = s.next_batch(20)
    pos = pool.positions(ids)
    halves = [(ids[:10], pool.labels[pos[:10]]), (ids[10:], pool.labels[pos[10:]])]
    outs = _run_together(path, *[("label", i, y) for i, y in halves])
    assert sorted(int(o) for o in outs) == [10, 20]  # the second saw the first's labels
    with Session.open(path) as s:
        assert s.n_labels == 20 and s.pending.size == 0
        np.testing.assert_array_equal(s.labels[pos], pool.labels[pos])


def test_a_held_lock_gives_a_one_line_error_and_stores_nothing(tmp_path, monkeypatch):
    pool = make_pool(**POOL_ARGS)
    path = tmp_path / "s.lws"
    Session(pool, make_measure("f1", pool), make_design("importance"), seed=5, path=path).close()
    before = path.read_bytes()
    monkeypatch.setenv("LABELWISE_BUSY_TIMEOUT", "0.2")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Session.open(path) as s, pytest.raises(StoreError, match="is busy: another labelwise command"):
            s.next_batch(5)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert path.read_bytes() == before


def test_a_session_behind_the_file_catches_up_before_it_writes(tmp_path):
    pool = make_pool(**POOL_ARGS)
    path = tmp_path / "s.lws"
    Session(pool, make_measure("f1", pool), make_design("importance"), seed=5, path=path).close()
    with Session.open(path) as a, Session.open(path) as b:
        first = a.next_batch(10)
        second = b.next_batch(10)  # b had read the file before a drew: it sees a's draws first
        np.testing.assert_array_equal(first, second)
        b.add_labels(second, pool.labels[pool.positions(second)])
        assert a.add_labels(first, pool.labels[pool.positions(first)]) == 0  # already stored by b
        assert a.n_labels == b.n_labels == 10
