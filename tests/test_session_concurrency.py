"""Concurrent writers on one session file: they serialize on the write lock and each sees the others' work."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from labelwise.datasets import make_pool
from labelwise.designs import DESIGNS, make_design
from labelwise.measures import make_measure
from labelwise.session import Session
from labelwise.store import StoreError

SRC = str(Path(__file__).resolve().parents[1] / "src")
POOL_ARGS = dict(n_items=400, prevalence=0.2, separation=2.0, seed=3)

# each child waits for the go file, so both ask for the lock at (almost) the same time
_CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from labelwise.session import Session
    path, go, what = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    while not go.exists():
        time.sleep(0.005)
    with Session.open(path) as s:
        if what == "next":
            print(" ".join(map(str, s.next_batch(15, new_only=True))))
        else:
            s.add_labels([int(i) for i in sys.argv[4].split(",")], [int(y) for y in sys.argv[5].split(",")])
            print(s.n_labels)
""")


def _draw_rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT stage, item, weight, prob, stratum, count FROM draws ORDER BY seq").fetchall()


def _run_together(tmp_path: Path, path: Path, *argv: list[str]) -> list[str]:
    script, go = tmp_path / "child.py", tmp_path / "go"
    script.write_text(_CHILD)
    env = {"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"}
    procs = [subprocess.Popen([sys.executable, str(script), str(path), str(go), *a], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for a in argv]
    go.touch()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and not err, err
        outs.append(out.strip())
    return outs


@pytest.mark.slow
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

    outs = _run_together(tmp_path, path, ["next"], ["next"])
    assert _draw_rows(path) == _draw_rows(sequential)  # no draw made twice, none lost
    handed = [set(o.split()) for o in outs]
    if not make_design(name).with_replacement:
        # the second waits for the first's round to be labeled: it hands out nothing new
        assert sorted(len(h) for h in handed) == [0, 15]
    else:
        assert all(handed) and not handed[0] & handed[1]  # disjoint new items


@pytest.mark.slow
@pytest.mark.parametrize("name", ["importance", "online-poisson"])
def test_two_label_at_once_both_land(tmp_path, name):
    pool = make_pool(**POOL_ARGS)
    path = tmp_path / "s.lws"
    with Session(pool, make_measure("f1", pool), make_design(name), seed=5, path=path) as s:
        ids = s.next_batch(20)
    pos = pool.positions(ids)
    halves = [(ids[:10], pool.labels[pos[:10]]), (ids[10:], pool.labels[pos[10:]])]
    outs = _run_together(tmp_path, path, *[["label", ",".join(map(str, i)), ",".join(map(str, y))]
                                           for i, y in halves])
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
