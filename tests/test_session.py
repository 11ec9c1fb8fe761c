"""Sessions: durable labels, exact resume (also after SIGKILL), input checks, sample reuse."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

import labelwise
from labelwise.datasets import make_pool
from labelwise.designs import make_design
from labelwise.measures import make_measure
from labelwise.oracle.annotators import TruthOracle
from labelwise.session import LabelError, Session
from labelwise.store import StoreError

SRC = str(Path(labelwise.__file__).resolve().parents[1])  # the src dir this test imports
POOL_ARGS = dict(n_items=3000, prevalence=0.2, separation=2.0, seed=21)
DESIGNS = [
    ("passive", {}),
    ("stratified", {"n_strata": 5, "allocation": "neyman"}),
    ("importance", {"lam": 0.9}),
]


@pytest.fixture(scope="module")
def pool():
    return make_pool(**POOL_ARGS)


@pytest.fixture(scope="module")
def f1(pool):
    return make_measure("f1", pool)


@pytest.fixture(scope="module")
def oracle(pool):
    return TruthOracle(pool)


def _query(path, sql):
    with closing(sqlite3.connect(str(path))) as conn:
        return conn.execute(sql).fetchall()


def _stored_labels(path) -> dict:
    return dict(_query(path, "SELECT item, label FROM labels"))


def _assert_same_session(a: Session, b: Session):
    np.testing.assert_array_equal(a.draws.items, b.draws.items)
    np.testing.assert_array_equal(a.draws.weight, b.draws.weight)
    np.testing.assert_array_equal(a.draws.prob, b.draws.prob)
    np.testing.assert_array_equal(a.draws.stratum, b.draws.stratum)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.stage == b.stage
    ea, eb = a.estimate(), b.estimate()
    np.testing.assert_array_equal(ea.value, eb.value)
    np.testing.assert_array_equal(ea.cov, eb.cov)
    assert (ea.n_labels, ea.n_draws) == (eb.n_labels, eb.n_draws)


# ------------------------------------------------------------ exact resume
@pytest.mark.parametrize("name,params", DESIGNS)
def test_resume_after_each_batch_matches_uninterrupted_run(tmp_path, pool, f1, oracle, name, params):
    reference = Session(pool, f1, make_design(name, **params), seed=123)
    reference.run(oracle, 150, batch_size=30)

    path = tmp_path / "s.lws"
    session = Session(pool, f1, make_design(name, **params), seed=123, path=path)
    for k in range(1, 6):  # close after every batch and reopen
        session.run(oracle, 30 * k, batch_size=30)
        session.close()
        session = Session.open(path)
        assert session.n_labels == 30 * k
    try:
        _assert_same_session(session, reference)
        assert session.design.spec() == make_design(name, **params).spec()
        assert session.measure.spec() == f1.spec()
        # the file holds the same draws, in order
        stored = [row[0] for row in _query(path, "SELECT item FROM draws ORDER BY seq")]
        assert stored == reference.draws.items.tolist()
        # and the next draws continue identically
        np.testing.assert_array_equal(session.next_batch(25), reference.next_batch(25))
    finally:
        session.close()


@pytest.mark.parametrize("name,params", DESIGNS)
def test_resume_with_pending_batch(tmp_path, pool, f1, oracle, name, params):
    """Closed after drawing but before labeling: the same items come back, then the same draws."""
    reference = Session(pool, f1, make_design(name, **params), seed=9)
    reference.run(oracle, 100, batch_size=25)

    path = tmp_path / "s.lws"
    session = Session(pool, f1, make_design(name, **params), seed=9, path=path)
    session.run(oracle, 50, batch_size=25)
    drawn = session.next_batch(25)
    session.add_labels(drawn[:7], oracle(drawn[:7]))
    session.close()

    resumed = Session.open(path)
    try:
        n_draw_rows = len(_query(path, "SELECT seq FROM draws"))
        np.testing.assert_array_equal(resumed.pending, drawn[7:])
        # pending items come first, without drawing
        np.testing.assert_array_equal(resumed.next_batch(5), drawn[7:12])
        np.testing.assert_array_equal(resumed.next_batch(18), drawn[7:])
        assert len(_query(path, "SELECT seq FROM draws")) == n_draw_rows
        resumed.add_labels(drawn[7:], oracle(drawn[7:]))
        resumed.run(oracle, 100, batch_size=25)
        _assert_same_session(resumed, reference)
    finally:
        resumed.close()


def test_resume_before_first_draw(tmp_path, pool, f1):
    """The initial generator state is stored with the file."""
    path = tmp_path / "s.lws"
    Session(pool, f1, make_design("importance"), seed=5, path=path).close()
    resumed = Session.open(path)
    try:
        reference = Session(pool, f1, make_design("importance"), seed=5)
        np.testing.assert_array_equal(resumed.next_batch(40), reference.next_batch(40))
    finally:
        resumed.close()


def test_resume_with_non_default_bit_generator(tmp_path, pool, f1, oracle):
    path = tmp_path / "s.lws"
    s = Session(pool, f1, make_design("passive"), seed=np.random.Generator(np.random.MT19937(2)), path=path)
    s.run(oracle, 20, batch_size=20)
    s.close()
    reference = Session(pool, f1, make_design("passive"), seed=np.random.Generator(np.random.MT19937(2)))
    reference.run(oracle, 40, batch_size=20)
    resumed = Session.open(path)
    try:
        assert isinstance(resumed.rng.bit_generator, np.random.MT19937)
        resumed.run(oracle, 40, batch_size=20)
        _assert_same_session(resumed, reference)
    finally:
        resumed.close()


def test_failed_store_write_leaves_session_as_on_disk(tmp_path, pool, f1, oracle, monkeypatch):
    path = tmp_path / "s.lws"
    session = Session(pool, f1, make_design("importance"), seed=3, path=path)
    session.run(oracle, 20, batch_size=20)
    state = session.rng.bit_generator.state

    def fail(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(session.store, "append_draws", fail)
    with pytest.raises(StoreError, match="disk I/O error"):
        session.next_batch(20)
    assert session.rng.bit_generator.state == state
    assert session.stage == 1 and len(session.draws) == len(_query(path, "SELECT seq FROM draws"))
    monkeypatch.undo()

    reference = Session(pool, f1, make_design("importance"), seed=3)
    reference.run(oracle, 20, batch_size=20)
    np.testing.assert_array_equal(session.next_batch(20), reference.next_batch(20))
    session.close()


# ----------------------------------------------------------------- SIGKILL
_CHILD = """
import sys, time
from labelwise.datasets import make_pool
from labelwise.designs import make_design
from labelwise.measures import make_measure
from labelwise.session import Session

pool = make_pool(**{pool_args!r})
session = Session(pool, make_measure("f1", pool), make_design("importance", lam=0.9), seed=77, path=sys.argv[1])
acked = 0
while True:
    for item in session.next_batch({batch}):
        label = int(pool.labels[pool.positions([item])[0]])
        session.add_labels([item], [label])
        acked += 1
        print("ACK", item, flush=True)
        if acked >= {slow_after}:
            time.sleep(0.2)  # leave the parent time to kill us mid-batch
"""


def test_sigkill_mid_batch_loses_no_acknowledged_label(tmp_path, pool, f1, oracle):
    batch, kill_after = 20, 31  # more than 1.5 batches
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(_CHILD.format(pool_args=POOL_ARGS, batch=batch, slow_after=kill_after - 1)))
    path = tmp_path / "s.lws"
    env = dict(os.environ, PYTHONPATH=SRC)
    proc = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    acked = []
    try:
        while len(acked) < kill_after:
            line = proc.stdout.readline()
            if not line:
                pytest.fail(f"child stopped after {len(acked)} ACKs: {proc.stderr.read()}")
            word, item = line.split()
            assert word == "ACK"
            acked.append(int(item))
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        watchdog.cancel()
        proc.stdout.close()
        proc.stderr.close()

    truth = dict(zip(pool.item_ids.tolist(), pool.labels.tolist()))
    # every acknowledged label is in the file with its correct value
    stored = _stored_labels(path)
    assert set(acked) <= set(stored)
    assert len(stored) - len(acked) <= 1  # at most one committed but not yet printed
    assert all(stored[i] == truth[i] for i in stored)

    resumed = Session.open(path)
    try:
        np.testing.assert_array_equal(resumed.pool.labels, pool.labels)
        assert resumed.n_labels == len(stored)
        for i in acked:
            assert resumed.labels[resumed.pool.positions([i])[0]] == truth[i]
        # the interrupted batch: its unlabeled draws, in draw order, come first
        assert resumed.stage == 2
        draw_rows = _query(path, "SELECT item FROM draws ORDER BY seq")
        expected = []
        for (item,) in draw_rows:
            if item not in stored and item not in expected:
                expected.append(item)
        assert 0 < len(expected) < batch  # killed mid-batch
        assert len(expected) + len(stored) == 2 * batch
        assert resumed.pending.tolist() == expected
        assert resumed.next_batch(len(expected)).tolist() == expected
        assert len(_query(path, "SELECT seq FROM draws")) == len(draw_rows)  # nothing new drawn
        resumed.add_labels(expected, oracle(expected))

        final = resumed.run(oracle, 80, batch_size=batch)
        labeled = np.flatnonzero(resumed.labels >= 0)
        assert labeled.size == 80
        np.testing.assert_array_equal(resumed.labels[labeled], pool.labels[labeled])
        assert np.all(resumed.labels[resumed.draws.items] >= 0)  # no drawn item was skipped
        assert _stored_labels(path) == {int(pool.item_ids[i]): int(pool.labels[i]) for i in labeled}

        # and the killed-and-resumed session is exactly the uninterrupted one
        reference = Session(pool, f1, make_design("importance", lam=0.9), seed=77)
        ref_final = reference.run(oracle, 80, batch_size=batch)
        np.testing.assert_array_equal(resumed.draws.items, reference.draws.items)
        np.testing.assert_array_equal(final.value, ref_final.value)
    finally:
        resumed.close()


# -------------------------------------------------------------- bad input
@pytest.fixture
def labeled_session(tmp_path, pool, f1, oracle):
    path = tmp_path / "s.lws"
    session = Session(pool, f1, make_design("stratified", n_strata=4), seed=1, path=path)
    session.run(oracle, 20, batch_size=20)
    pending = session.next_batch(10)
    yield session, path, pending
    session.close()


def _snapshot(session, path):
    return (
        _query(path, "SELECT item, label, stage, weight, prob, created, source FROM labels ORDER BY item"),
        _query(path, "SELECT * FROM draws ORDER BY seq"),
        session.labels.copy(),
        session.draws.items.copy(),
        session.pending.copy(),
        session.n_labels,
    )


def _assert_snapshot_equal(a, b):
    assert a[0] == b[0] and a[1] == b[1]
    for x, y in zip(a[2:5], b[2:5]):
        np.testing.assert_array_equal(x, y)
    assert a[5] == b[5]


def _bad_inputs(pool, session, pending):
    truth = lambda i: int(pool.labels[pool.positions([i])[0]])
    done = pool.item_ids[np.flatnonzero(session.labels >= 0)]
    never = pool.item_ids[np.setdiff1d(np.arange(pool.n_items), session.draws.items)]
    p0, p1, d0 = pending[0], pending[1], done[0]
    return [
        ("unknown id", [p0, 10**9], [truth(p0), 0], "not in the pool"),
        ("unknown string id", ["nope"], [0], "not in the pool"),
        ("label 2", [p0], [2], rf"^item {int(p0)}: label 2 is outside the label set 0..1; fix the label you give$"),
        ("label -1", [p0], [-1], rf"^item {int(p0)}: label -1 is outside the label set"),
        ("label 0.5", [p0], [0.5], rf"^item {int(p0)}: label 0.5 is outside the label set"),
        ("label nan", [p0], [float("nan")], "outside the label set"),
        ("label abc", [p0], ["abc"], rf"^item {int(p0)}: label 'abc' is not a number; labels must be integers 0..1$"),
        ("label None", [p0], [None], "label None is not a number"),
        ("one bad among good", [p0, p1], [truth(p0), 7], rf"^item {int(p1)}: label 7 is outside"),
        ("length mismatch", [p0, p1], [truth(p0)], "got 2 ids but 1 labels"),
        ("never proposed", [never[0]], [0], f"item {int(never[0])} was not proposed by the design"),
        ("never proposed among good", [p0, never[0]], [truth(p0), 0], "was not proposed"),
        ("contradicts stored", [d0], [1 - truth(d0)], f"item {int(d0)} already has label {truth(d0)}"),
        ("contradicts stored among new", [p0, d0], [truth(p0), 1 - truth(d0)], "already has label"),
        ("two labels in one call", [p0, p1, p0], [0, truth(p1), 1],
         f"item {int(p0)} is given two different labels in one call"),
    ]


@pytest.mark.parametrize("case", range(15))
def test_bad_labels_raise_and_store_nothing(labeled_session, pool, case):
    session, path, pending = labeled_session
    _name, ids, labels, message = _bad_inputs(pool, session, pending)[case]
    before = _snapshot(session, path)
    est_before = session.estimate()
    with pytest.raises(LabelError, match=message):
        session.add_labels(ids, labels)
    _assert_snapshot_equal(_snapshot(session, path), before)
    np.testing.assert_array_equal(session.estimate().value, est_before.value)
    # the session still works afterwards
    assert session.add_labels(pending[:1], pool.labels[pool.positions(pending[:1])]) == 1


def test_a_refused_label_given_as_text_is_shown_as_written_and_every_refused_label_counted():
    """A labels file's (and `relabel`'s) labels are text: '7' was quoted where 7 was not, and 'cat' with 5 and 7
    counted none of the numbers among the others refused."""
    from labelwise.ledger import as_int_labels

    ids = np.array([10, 11, 12])
    with pytest.raises(LabelError) as err:
        as_int_labels(np.array(["cat", "5", "7"], dtype=object), 2, ids)
    assert str(err.value) == "item 10: label 'cat' is not a number (and 2 more labels); labels must be integers 0..1"
    with pytest.raises(LabelError) as err:
        as_int_labels(np.array(["1", " 7", "x"], dtype=object), 2, ids)
    assert str(err.value) == "item 11: label 7 is outside the label set 0..1 (and 1 more label); fix the label you give"


def test_bad_input_cases_are_all_covered(labeled_session, pool):
    session, _, pending = labeled_session
    assert len(_bad_inputs(pool, session, pending)) == 15


def test_repeated_identical_label_stores_nothing(labeled_session, pool):
    session, path, pending = labeled_session
    done = pool.item_ids[np.flatnonzero(session.labels >= 0)][:3]
    before = _snapshot(session, path)
    assert session.add_labels(done, pool.labels[pool.positions(done)]) == 0
    _assert_snapshot_equal(_snapshot(session, path), before)
    # the same item twice with the same label in one call is one new label
    y = int(pool.labels[pool.positions(pending[:1])[0]])
    assert session.add_labels([pending[0], pending[0]], [y, y]) == 1
    assert _stored_labels(path)[int(pending[0])] == y
    assert len(_stored_labels(path)) == 21


def test_call_mixing_stored_and_new_items_stores_the_new_ones(labeled_session, pool):
    session, path, pending = labeled_session
    done = pool.item_ids[np.flatnonzero(session.labels >= 0)][:2]
    ids = np.array([done[0], pending[0], done[1], pending[1]])
    labels = pool.labels[pool.positions(ids)]
    assert session.add_labels(ids, labels) == 2
    stored = _stored_labels(path)
    assert len(stored) == 22
    for i, y in zip(ids, labels):
        assert stored[int(i)] == int(y)
        assert session.labels[pool.positions([i])[0]] == y
    np.testing.assert_array_equal(session.pending, pending[2:])


def test_draw_numbers_under_a_deterministic_oracle_are_checked_then_labels_are_per_item(labeled_session, pool):
    session, path, pending = labeled_session
    draws = session.pending_draws
    np.testing.assert_array_equal(pool.item_ids[session.draws.items[draws]], pending)
    before = _snapshot(session, path)
    with pytest.raises(LabelError, match=f"draw {draws[0]} is of item {int(pending[0])}, not of item"):
        session.add_labels(pending[1:2], pool.labels[pool.positions(pending[1:2])], draws=draws[:1])
    _assert_snapshot_equal(_snapshot(session, path), before)
    labels = pool.labels[pool.positions(pending)]
    assert session.add_labels(pending, labels, draws=draws) == pending.size
    assert session.add_labels(pending, labels, draws=draws) == 0
    assert session.pending.size == 0 and session.pending_draws.size == 0


def test_label_spellings_are_accepted_as_integers(labeled_session, pool):
    session, path, pending = labeled_session
    truth = pool.labels[pool.positions(pending[:4])]
    spelled = [bool(truth[0]), float(truth[1]), str(truth[2]), np.int8(truth[3])]
    assert session.add_labels(list(pending[:4]), spelled) == 4
    stored = _stored_labels(path)
    assert [stored[int(i)] for i in pending[:4]] == truth.tolist()
    # string ids of an integer pool work too
    y = int(pool.labels[pool.positions(pending[4:5])[0]])
    assert session.add_labels([str(pending[4])], np.array([y])) == 1


def test_labels_survive_reopen_after_rejected_calls(labeled_session, pool):
    session, path, pending = labeled_session
    for _, ids, labels, _ in _bad_inputs(pool, session, pending):
        with pytest.raises(LabelError):
            session.add_labels(ids, labels)
    session.add_labels(pending[:3], pool.labels[pool.positions(pending[:3])])
    expected = session.labels.copy()
    session.close()
    reopened = Session.open(path)
    try:
        np.testing.assert_array_equal(reopened.labels, expected)
        np.testing.assert_array_equal(reopened.pending, pending[3:])
    finally:
        reopened.close()


def test_session_file_errors(tmp_path, pool, f1):
    path = tmp_path / "s.lws"
    Session(pool, f1, make_design("passive"), seed=0, path=path).close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="already exists"):
        Session(pool, f1, make_design("passive"), seed=0, path=path)
    assert path.read_bytes() == before
    with pytest.raises(StoreError, match="does not exist"):
        Session.open(tmp_path / "missing.lws")
    junk = tmp_path / "junk.lws"
    junk.write_text("item_id,label\n1,0\n")
    with pytest.raises(StoreError, match="not a labelwise session file"):
        Session.open(junk)
    assert junk.read_text() == "item_id,label\n1,0\n"


def test_next_batch_argument_checks(pool, f1):
    session = Session(pool, f1, make_design("passive"), seed=0)
    with pytest.raises(ValueError, match="at least one item"):
        session.next_batch(0)
    assert session.next_batch(3001).size == 3000  # all there is
    with pytest.raises(ValueError, match="the pool has 3000 items"):
        session.run(TruthOracle(pool), 3001)


# ---------------------------------------------------------- what is stored
@pytest.mark.parametrize("name,params", [("stratified", {"n_strata": 5}), ("importance", {"lam": 0.9})])
def test_label_rows_carry_weight_prob_stage_and_time(tmp_path, pool, f1, oracle, name, params):
    path = tmp_path / "s.lws"
    t0 = time.time()
    session = Session(pool, f1, make_design(name, **params), seed=4, path=path)
    session.run(oracle, 60, batch_size=20)
    ids = session.next_batch(20)
    session.add_labels(ids[:5], oracle(ids[:5]), source="annotator-7")
    session.close()
    t1 = time.time()

    draws = _query(path, "SELECT seq, stage, item, weight, prob, created FROM draws ORDER BY seq")
    labels = _query(path, "SELECT item, label, stage, weight, prob, created, source FROM labels")
    assert len(labels) == 65
    first = {}
    for seq, stage, item, weight, prob, created in draws:
        first.setdefault(item, (stage, weight, prob, created))
    assert {stage for stage, *_ in first.values()} == {1, 2, 3, 4}
    truth = dict(zip(pool.item_ids.tolist(), pool.labels.tolist()))
    for item, label, stage, weight, prob, created, source in labels:
        d_stage, d_weight, d_prob, d_created = first[item]
        assert label == truth[item]
        assert (stage, weight, prob) == (d_stage, d_weight, d_prob)
        assert t0 <= d_created <= created <= t1
        assert source == ("annotator-7" if stage == 4 else "oracle")
    # the weights are the design's: p/q for importance, N_h/n_h for strata
    weights = np.array([w for _, _, _, w, _, _ in draws])
    probs = np.array([p for _, _, _, _, p, _ in draws])
    if name == "importance":
        np.testing.assert_allclose(weights * probs * pool.n_items, 1.0)
    else:
        np.testing.assert_allclose(weights * probs, 1.0)
    assert len(set(np.round(weights, 12))) > 1


def test_estimate_uses_labeled_prefix_of_draws(pool, f1, oracle):
    session = Session(pool, f1, make_design("stratified", n_strata=4), seed=8)
    session.run(oracle, 10, batch_size=10)
    assert session.estimate().n_draws == 10
    ids = session.next_batch(10)
    order = [3, 1, 0, 5, 2, 4, 9, 8, 7, 6]
    expected_draws = [10, 10, 12, 12, 14, 16, 16, 16, 16, 20]
    estimates = []
    for k, n_draws in zip(order, expected_draws):
        session.add_labels(ids[k:k + 1], oracle(ids[k:k + 1]))
        est = session.estimate()
        assert est.n_draws == n_draws
        assert est.n_labels == n_draws  # stratified: no repeats
        assert len(session.sample().draws) == n_draws
        estimates.append(est.value)
    # labels beyond the prefix do not move the estimate
    np.testing.assert_array_equal(estimates[0], estimates[1])
    np.testing.assert_array_equal(estimates[6], estimates[8])
    # the estimate of the full prefix is the in-order one
    in_order = Session(pool, f1, make_design("stratified", n_strata=4), seed=8)
    np.testing.assert_array_equal(in_order.run(oracle, 20, batch_size=10).value, estimates[-1])


# ------------------------------------------------------------ sample reuse
def test_sample_reuse_matches_importance_estimator_by_hand(tmp_path, pool, f1, oracle):
    path = tmp_path / "s.lws"
    session = Session(pool, f1, make_design("importance", lam=0.9), seed=31, path=path)
    f1_est = session.run(oracle, 200, batch_size=50)
    other = make_measure("precision,recall,accuracy", pool)
    est = session.estimate(measure=other)
    session.close()

    rows = _query(path, "SELECT item, weight FROM draws ORDER BY seq")
    stored = _stored_labels(path)
    items = np.array([r[0] for r in rows])
    w = np.array([r[1] for r in rows])
    y = np.array([stored[i] for i in items])  # every draw is labeled after run()
    f = pool.preds[pool.positions(items), 0]
    n = len(items)
    tp, pos, pred = np.sum(w * y * f), np.sum(w * y), np.sum(w * f)
    by_hand = [tp / pred, tp / pos, 1.0 - np.sum(w * (y != f)) / n]

    assert est.names == ("precision", "recall", "accuracy")
    np.testing.assert_allclose(est.value, by_hand, rtol=1e-12)
    assert est.n_draws == n and est.n_labels == 200 == len(stored)
    np.testing.assert_allclose(f1_est.value, [2 * tp / (pos + pred)], rtol=1e-12)
    # the weights are not trivial: this is not the plain sample average
    assert abs(by_hand[0] - np.sum(y * f) / np.sum(f)) > 1e-6
    # close to the truth (the pool has ground truth for every item)
    t, p = pool.labels, pool.preds[:, 0]
    truth = [np.sum(t * p) / np.sum(p), np.sum(t * p) / np.sum(t), np.mean(t == p)]
    assert np.all(np.abs(est.value - truth) < 4 * est.std + 1e-9)

    # the same from the stored file alone
    reopened = Session.open(path)
    try:
        np.testing.assert_array_equal(reopened.estimate(measure=other).value, est.value)
        np.testing.assert_array_equal(reopened.estimate().value, f1_est.value)
    finally:
        reopened.close()


def test_open_rejects_unknown_generator_in_file(tmp_path, pool, f1):
    path = tmp_path / "s.lws"
    Session(pool, f1, make_design("passive"), seed=0, path=path).close()
    with closing(sqlite3.connect(str(path))) as conn, conn:
        conn.execute("""UPDATE meta SET value='{"bit_generator": "seed"}' WHERE key='rng_state'""")
    with pytest.raises(StoreError, match="unknown random generator 'seed'"):
        Session.open(path)


def test_run_reports_every_checkpoint_once_including_the_current_count(pool, f1, oracle):
    session = Session(pool, f1, make_design("passive"), seed=3)
    session.run(oracle, 40, batch_size=20)
    seen = []
    session.run(oracle, 100, batch_size=25, checkpoints=[0, 30, 40, 65, 100, 120],
                on_checkpoint=lambda n, est: seen.append((n, session.n_labels, est.value)))
    # 40 equals the labels already in: reported before drawing; 0 and 30 are behind, 120 beyond the budget
    assert [n for n, _, _ in seen] == [40, 65, 100]
    assert all(n == labels for n, labels, _ in seen)  # batches are cut so each checkpoint is hit exactly
    assert seen[-1][2] == session.estimate().value
