"""A ``stratified`` engine session keeps the blocks within its strata: an estimate makes no pass over the pool."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from labelwise.designs import make_design
from labelwise.engines import EnginePool, EngineSession
from labelwise.engines import session as engine_session
from labelwise.engines.marker import MARKER_TABLE


def _labeled_session(path, pool, parquet_pool):
    engine = EnginePool.open(parquet_pool, "duckdb")
    with EngineSession.create(path, engine, measure="f1,precision", systems=0, design=make_design("stratified"),
                              budget=300, seed=3) as session:
        ids = session.hand_out(150)[0]["item_id"].to_numpy()
        session.add_labels(ids, pool.labels[ids], "test")  # the fixture's ids are 0..N-1
        return session.estimate()


def _refuse_the_engine(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the estimate opened the pool's engine")

    monkeypatch.setattr(EnginePool, "open", refuse)


def _assert_same(a, b):
    assert a.value == pytest.approx(b.value, rel=1e-12) and a.std == pytest.approx(b.std, rel=1e-12)


def test_estimate_and_status_of_a_stratified_session_need_no_engine(pool, parquet_pool, tmp_path, monkeypatch):
    path = tmp_path / "s.lw"
    first = _labeled_session(path, pool, parquet_pool)
    _refuse_the_engine(monkeypatch)
    for _ in range(2):
        with EngineSession.open(path) as session:
            _assert_same(session.estimate(), first)
            assert session.status()["labels"] == 150


def test_a_file_written_before_makes_the_pass_once(pool, parquet_pool, tmp_path, monkeypatch):
    path = tmp_path / "old.lw"
    first = _labeled_session(path, pool, parquet_pool)
    with EngineSession.open(path) as session:  # as written before the blocks within the strata were stored
        session.conn.execute(f"DELETE FROM {MARKER_TABLE} WHERE key = 'stratum_summary'")
        session.conn.commit()
    with EngineSession.open(path) as session:
        _assert_same(session.estimate(), first)  # one pass, kept in the file
    _refuse_the_engine(monkeypatch)
    with EngineSession.open(path) as session:
        _assert_same(session.estimate(), first)


def test_an_old_file_that_cannot_be_written_still_estimates(pool, parquet_pool, tmp_path, monkeypatch):
    """A file written before, opened where it cannot be written (read-only, busy): the estimate makes its pass and
    keeps no copy, and says nothing about the failed write."""
    path = tmp_path / "old.lw"
    first = _labeled_session(path, pool, parquet_pool)
    with EngineSession.open(path) as session:
        session.conn.execute(f"DELETE FROM {MARKER_TABLE} WHERE key = 'stratum_summary'")
        session.conn.commit()

    @contextlib.contextmanager
    def read_only(conn):
        raise sqlite3.OperationalError("attempt to write a readonly database")
        yield  # pragma: no cover

    monkeypatch.setattr(engine_session, "transaction", read_only)
    with EngineSession.open(path) as session:
        _assert_same(session.estimate(), first)
    monkeypatch.undo()
    with EngineSession.open(path) as session:
        assert session.conn.execute(f"SELECT COUNT(*) FROM {MARKER_TABLE} WHERE key = 'stratum_summary'"
                                    ).fetchone()[0] == 0
