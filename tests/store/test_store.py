"""The session file (labelwise.store): creation, opening, round trips, atomic writes."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import numpy as np
import pytest

from labelwise.datasets import make_pool
from labelwise.draws import Draws
from labelwise.store import Store, StoreError
from labelwise.store.journal import SCHEMA_VERSION


@pytest.fixture(scope="module")
def pool():
    return make_pool(500, prevalence=0.2, separation=2.0, n_systems=2, n_features=2, seed=11)


def _file_bytes(path):
    return path.read_bytes()


def test_create_open_round_trip(tmp_path, pool):
    path = tmp_path / "s.lws"
    rng = np.random.default_rng(5)
    config = {"measure": {"measure": "accuracy"}, "design": {"design": "passive"}, "level": 0.9}
    store = Store.create(path, pool, config, rng_state=rng.bit_generator.state)
    store.close()

    store = Store.open(path)
    try:
        assert store.config() == config
        assert store.rng_state() == rng.bit_generator.state
        back = store.load_pool()
        for field in ("item_ids", "preds", "scores", "probs", "labels", "features"):
            a, b = getattr(pool, field), getattr(back, field)
            assert (a is None) == (b is None), field
            if a is not None:
                np.testing.assert_array_equal(a, b, err_msg=field)
        assert back.system_names == pool.system_names
        assert back.n_classes == pool.n_classes
        assert back.name == pool.name
        assert len(store.load_draws()) == 0
        items, labels, _, _ = store.load_labels()
        assert items.size == 0 and labels.size == 0
    finally:
        store.close()


def test_rng_state_without_initial_state_is_none(tmp_path, pool):
    store = Store.create(tmp_path / "s.lws", pool, {"measure": None})
    try:
        assert store.rng_state() is None
    finally:
        store.close()


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937, np.random.Philox])
def test_rng_state_round_trip_for_any_bit_generator(tmp_path, pool, bit_generator):
    rng = np.random.Generator(bit_generator(3))
    rng.random(7)
    store = Store.create(tmp_path / "s.lws", pool, {}, rng_state=rng.bit_generator.state)
    draws = Draws(np.array([1, 2]), np.ones(2), np.full(2, 0.5), np.full(2, -1))
    store.append_draws(1, draws, rng.bit_generator.state)
    store.close()
    store = Store.open(tmp_path / "s.lws")
    try:
        other = bit_generator()
        other.state = store.rng_state()
        np.testing.assert_array_equal(np.random.Generator(other).random(5), rng.random(5))
    finally:
        store.close()


def test_draws_and_labels_round_trip(tmp_path, pool):
    store = Store.create(tmp_path / "s.lws", pool, {})
    try:
        d1 = Draws(np.array([4, 9, 4]), np.array([0.5, 2.0, 0.5]), np.array([0.004, 0.001, 0.004]),
                   np.array([-1, -1, -1]))
        d2 = Draws(np.array([7]), np.array([1.5]), np.array([0.0013]), np.array([3]))
        store.append_draws(1, d1, {"state": 1})
        assert store.rng_state() == {"state": 1}
        store.append_draws(2, d2, {"state": 2})
        assert store.rng_state() == {"state": 2}
        draws = store.load_draws()
        np.testing.assert_array_equal(draws.items, [4, 9, 4, 7])
        np.testing.assert_allclose(draws.weight, [0.5, 2.0, 0.5, 1.5])
        np.testing.assert_allclose(draws.prob, [0.004, 0.001, 0.004, 0.0013])
        np.testing.assert_array_equal(draws.stratum, [-1, -1, -1, 3])
        np.testing.assert_array_equal(draws.round, [0, 0, 0, 1])
        assert draws.items.dtype.kind == "i" and draws.round.dtype.kind == "i"

        store.add_labels(np.array([9, 4]), np.array([1, 0]), np.array([1, 0]), np.array([1, 1]),
                         np.array([2.0, 0.5]), np.array([0.001, 0.004]), "api")
        items, labels, calls, answered = store.load_labels()
        assert dict(zip(items.tolist(), labels.tolist())) == {9: 1, 4: 0}
        assert answered.tolist() == [1, 0] and calls.tolist() == [1, 1]
        row = store.conn.execute("SELECT label, stage, weight, prob, source FROM labels WHERE item=9").fetchone()
        assert row == (1, 1, 2.0, 0.001, "api")
        # a stochastic oracle labels an item again at a later draw (index 2), possibly differently
        store.add_labels(np.array([4]), np.array([1]), np.array([2]), np.array([1]), np.array([0.5]),
                         np.array([0.004]), "api")
        items, labels, calls, answered = store.load_labels()
        assert items.tolist() == [9, 4, 4] and labels.tolist() == [1, 0, 1] and answered.tolist() == [1, 0, 2]
        assert calls.tolist() == [1, 1, 2]
    finally:
        store.close()


def test_add_labels_is_all_or_nothing(tmp_path, pool):
    store = Store.create(tmp_path / "s.lws", pool, {})
    try:
        one = np.array([1])
        store.add_labels(np.array([3]), one, np.array([0]), one, np.ones(1), np.ones(1), "api")
        before = store.conn.execute("SELECT * FROM labels ORDER BY item").fetchall()
        # draw 0 already has its label: the whole batch (draws 1 and 0) must be refused
        with pytest.raises(StoreError, match="UNIQUE constraint failed"):
            store.add_labels(np.array([5, 3]), np.array([0, 1]), np.array([1, 0]), np.array([1, 1]), np.ones(2),
                             np.ones(2), "api")
        assert store.conn.execute("SELECT * FROM labels ORDER BY item").fetchall() == before
        # the connection is usable afterwards (the transaction was rolled back)
        store.add_labels(np.array([5]), np.array([0]), one, one, np.ones(1), np.ones(1), "api")
        assert store.conn.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == 2
    finally:
        store.close()


def test_writes_are_visible_to_another_connection_without_close(tmp_path, pool):
    """Committed before acknowledged: a second reader sees every write at once."""
    path = tmp_path / "s.lws"
    store = Store.create(path, pool, {})
    try:
        store.append_draws(1, Draws(np.array([2]), np.ones(1), np.ones(1), np.full(1, -1)), {"s": 0})
        store.add_labels(np.array([2]), np.array([1]), np.array([0]), np.array([1]), np.ones(1), np.ones(1), "api")
        with sqlite3.connect(str(path)) as other:
            assert other.execute("SELECT item, label FROM labels").fetchall() == [(2, 1)]
            assert other.execute("SELECT item FROM draws").fetchall() == [(2,)]
            assert other.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        store.close()


# ------------------------------------------------------------------- errors
def test_create_refuses_existing_path(tmp_path, pool):
    path = tmp_path / "s.lws"
    Store.create(path, pool, {"a": 1}).close()
    before = _file_bytes(path)
    with pytest.raises(StoreError, match="already exists"):
        Store.create(path, pool, {"a": 2})
    assert _file_bytes(path) == before
    store = Store.open(path)
    assert store.config() == {"a": 1}
    store.close()


def test_create_refuses_existing_non_session_file(tmp_path, pool):
    path = tmp_path / "notes.txt"
    path.write_text("keep me")
    with pytest.raises(StoreError, match="already exists"):
        Store.create(path, pool, {})
    assert path.read_text() == "keep me"


def test_create_in_missing_directory(tmp_path, pool):
    path = tmp_path / "no" / "such" / "s.lws"
    with pytest.raises(StoreError, match="does not exist"):
        Store.create(path, pool, {})
    assert not path.exists()


def test_open_missing_file(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        Store.open(tmp_path / "missing.lws")
    assert not (tmp_path / "missing.lws").exists()


@pytest.mark.parametrize("content", [b"", b"item_id,label\n1,0\n", b"SQLite format 2" + b"\x00" * 100])
def test_open_non_sqlite_file(tmp_path, content):
    path = tmp_path / "x.lws"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a labelwise session file"):
        Store.open(path)
    assert path.read_bytes() == content  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.lws"]


def test_open_directory(tmp_path):
    with pytest.raises(StoreError, match="not a labelwise session file"):
        Store.open(tmp_path)


def test_open_foreign_sqlite_database(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(str(path)) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
        conn.execute("INSERT INTO t VALUES (1)")
    conn.close()
    with pytest.raises(StoreError, match="not a labelwise session file"):
        Store.open(path)
    with sqlite3.connect(str(path)) as conn:  # not altered, data intact
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
    conn.close()


@pytest.mark.parametrize("version", [str(SCHEMA_VERSION + 1), "abc"])
def test_open_unsupported_schema(tmp_path, pool, version):
    path = tmp_path / "s.lws"
    Store.create(path, pool, {}).close()
    with sqlite3.connect(str(path)) as conn:
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (version,))
    conn.close()
    with pytest.raises(StoreError, match="unsupported session schema"):
        Store.open(path)


def test_config_is_json(tmp_path, pool):
    path = tmp_path / "s.lws"
    Store.create(path, pool, {"measure": {"measure": "f1"}, "level": 0.8}).close()
    with sqlite3.connect(str(path)) as conn:
        raw = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    conn.close()
    assert json.loads(raw["config"]) == {"measure": {"measure": "f1"}, "level": 0.8}
    assert raw["schema_version"] == str(SCHEMA_VERSION)


def test_multilabel_names_survive_the_session_file(tmp_path):
    from labelwise.datasets import make_multilabel_pool

    pool = make_multilabel_pool(300, 3, prevalence=[0.2, 0.1, 0.05], seed=2, label_names=["toxic", "threat", "insult"])
    path = tmp_path / "ml.lws"
    Store.create(path, pool, {}).close()
    store = Store.open(path)
    try:
        back = store.load_pool()
        assert back.label_names == ("toxic", "threat", "insult") and back.n_classes == 8
        np.testing.assert_array_equal(back.labels, pool.labels)
    finally:
        store.close()
    # a file written before names were stored still loads, without names
    with closing(sqlite3.connect(str(path))) as conn, conn:
        meta = json.loads(conn.execute("SELECT value FROM meta WHERE key='pool_meta'").fetchone()[0])
        del meta["label_names"]
        conn.execute("UPDATE meta SET value=? WHERE key='pool_meta'", (json.dumps(meta),))
    store = Store.open(path)
    try:
        assert store.load_pool().label_names == ()
    finally:
        store.close()


def test_a_schema_3_file_gains_the_excluded_table_when_opened(tmp_path, pool):
    path = tmp_path / "s.lws"
    Store.create(path, pool, {}).close()
    with closing(sqlite3.connect(str(path))) as conn, conn:
        conn.execute("DROP TABLE excluded")
        conn.execute("UPDATE meta SET value='3' WHERE key='schema_version'")
    store = Store.open(path)
    try:
        assert store.load_excluded().size == 0 and store.counts()["excluded"] == 0
        assert store._meta("schema_version") == str(SCHEMA_VERSION) == "4"
    finally:
        store.close()


@pytest.mark.parametrize("arr", [
    np.random.default_rng(0).integers(0, 3, 5000),                       # labels: int8 on disk
    np.random.default_rng(1).integers(-40000, 40000, (5000, 2)),          # int32 on disk, 2-d
    np.random.default_rng(2).integers(0, 3, 5000).astype(np.int32),      # int32 -> int8
    np.random.default_rng(3).integers(0, 2**62, 5000),                   # kept int64
    np.arange(5, 5005),                                                   # not a 0..N-1 range
])
def test_integer_columns_read_back_in_their_own_type(arr):
    from labelwise.store.codec import decode_array, encode_array

    back = decode_array(encode_array(arr))
    assert back.dtype == arr.dtype and back.shape == arr.shape
    np.testing.assert_array_equal(back, arr)
