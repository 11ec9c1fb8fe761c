"""Items excluded as not judgeable: estimates over the judgeable items (exact on a census), the design's
draws unchanged, the journal's audit trail, and rejections that store nothing."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing

import numpy as np
import pytest

from labelwise.datasets import make_pool
from labelwise.designs import make_design
from labelwise.measures import make_measure
from labelwise.measures.domain import DomainMeasure
from labelwise.pool import Pool
from labelwise.session import LabelError, Session


@pytest.fixture(scope="module")
def pool() -> Pool:
    return make_pool(400, prevalence=0.2, separation=1.5, seed=3)


def _truth(pool: Pool, ids: np.ndarray) -> np.ndarray:
    return pool.labels[pool.positions(ids)]


def _census(session: Session, out: set) -> None:
    """Hand out every item; exclude those in ``out``, label the others with the truth."""
    while (ids := session.next_batch(session.pool.n_items)).size:
        gone = np.isin(ids, list(out))
        if gone.any():
            session.exclude(ids[gone])
        session.add_labels(ids[~gone], _truth(session.pool, ids[~gone]))


def _on_judgeable(pool: Pool, name: str, out: set) -> float:
    """``name`` computed exactly on the pool without the items in ``out``."""
    keep = ~np.isin(pool.item_ids, list(out))
    rest = Pool.from_arrays(pool.item_ids[keep], preds=pool.preds[keep], scores=pool.scores[keep],
                            labels=pool.labels[keep])
    measure = make_measure(name, rest)
    return float(measure.value(measure.loss(rest.outputs(), rest.labels).mean(axis=0))[0])


@pytest.mark.parametrize("design", ["online-poisson", "stratified"])
@pytest.mark.parametrize("name", ["f1", "precision", "accuracy", "mcc"])
def test_a_census_with_exclusions_is_the_measure_on_the_judgeable_items(pool, design, name):
    out = set(pool.item_ids[pool.labels == 1][:15].tolist()) | set(pool.item_ids[:20].tolist())
    session = Session(pool, make_measure(name, pool), design, seed=1)
    _census(session, out)
    assert session.n_excluded == len(out) and session.n_labels == pool.n_items - len(out)
    est = session.estimate()
    assert est.n_labels == pool.n_items - len(out)
    assert est.value[0] == pytest.approx(_on_judgeable(pool, name, out), abs=1e-9)
    assert est.value[0] != pytest.approx(_on_judgeable(pool, name, set()), abs=1e-3)


@pytest.mark.parametrize("design,params,model", [
    ("passive", {}, False), ("importance", {}, True), ("stratified", {"n_strata": 4}, False), ("ais", {}, True),
    ("oasis", {}, True), ("poisson", {}, True)])
def test_for_f1_an_excluded_item_weighs_as_a_zero_loss(pool, design, params, model):
    """F1's loss of a true negative is zero: excluding a predicted negative is labeling it negative.

    The design-based covariance agrees too; importance's, ais's, oasis's and poisson's depend on the labels their
    oracle models have learned from.
    """
    f1 = make_measure("f1", pool)
    runs = [Session(pool, f1, make_design(design, **params), seed=5, budget=200) for _ in range(2)]
    ids, same = (s.next_batch(60) for s in runs)
    np.testing.assert_array_equal(ids, same)
    negative = ids[pool.preds[pool.positions(ids), 0] == 0][:3]
    runs[0].exclude(negative)
    rest = ids[~np.isin(ids, negative)]
    runs[0].add_labels(rest, _truth(pool, rest))
    runs[1].add_labels(ids, np.where(np.isin(ids, negative), 0, _truth(pool, ids)))
    a, b = (s.estimate() for s in runs)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    if not model:
        np.testing.assert_allclose(a.cov, b.cov, rtol=1e-9, atol=1e-15)
    assert a.n_labels == b.n_labels - negative.size
    if design == "passive":  # the posterior interval too: the same cell counts
        np.testing.assert_allclose(a.interval(), b.interval())


def test_accuracy_is_over_the_judgeable_draws(pool):
    """Uniform draws: accuracy over the excluded items' complement is the plain share of correct draws."""
    session = Session(pool, make_measure("accuracy", pool), "passive", seed=2)
    ids = session.next_batch(80)
    y = _truth(pool, ids)
    wrong = ids[pool.preds[pool.positions(ids), 0] != y][:4]
    session.exclude(wrong)
    keep = ~np.isin(ids, wrong)
    session.add_labels(ids[keep], y[keep])
    items = session.sample().draws.items
    judged = ~np.isin(pool.item_ids[items], wrong)
    correct = pool.preds[items, 0] == pool.labels[items]
    assert session.estimate().value[0] == pytest.approx(correct[judged].mean(), abs=1e-12)


def test_domain_measure_jacobian_and_scale_free(pool):
    for name, free in [("f1", True), ("precision", True), ("recall", True), ("accuracy", False), ("mcc", False),
                       ("brier", False)]:
        measure = make_measure(name, pool)
        assert measure.scale_free is free
    from labelwise.measures import finite_difference_jacobian

    domain = DomainMeasure(make_measure("mcc", pool))
    R = np.array([[0.05, 0.1, 0.08, 0.9], [0.1, 0.3, 0.2, 0.7]])
    np.testing.assert_allclose(domain.jacobian(R), finite_difference_jacobian(domain.g, R), atol=1e-6)
    assert domain.value(R[:1] * np.array([1, 1, 1, 1.0]))[0, 0] == pytest.approx(
        domain.inner.value(R[0, :3] / 0.9)[0])


def test_exclusions_are_journaled_resumed_and_never_handed_out_again(tmp_path, pool):
    path = tmp_path / "s.lw"
    t0 = time.time()
    session = Session(pool, make_measure("f1", pool), make_design("importance"), seed=4, path=path)
    ids = session.next_batch(10)
    assert session.exclude(ids[:2], source="annotator-3") == 2
    assert session.exclude(ids[:1]) == 0  # twice is harmless
    assert session.can_draw() == pool.n_items - 10
    assert not np.isin(ids[:2], session.pending).any()
    session.add_labels(ids[2:], _truth(pool, ids[2:]))
    later = session.next_batch(300)
    assert not np.isin(ids[:2], later).any()
    before = session.estimate()
    session.close()
    with closing(sqlite3.connect(str(path))) as conn:
        rows = conn.execute("SELECT item, draw, created, source FROM excluded ORDER BY seq").fetchall()
    assert [r[0] for r in rows] == pool.positions(ids[:2]).tolist() and [r[1] for r in rows] == [0, 1]
    assert all(t0 <= r[2] <= time.time() and r[3] == "annotator-3" for r in rows)
    with Session.open(path) as again:
        assert again.n_excluded == 2
        np.testing.assert_array_equal(again.estimate().value, before.value)
        np.testing.assert_array_equal(again.pending, later)


def test_rejected_exclusions_and_labels_of_excluded_items_store_nothing(tmp_path, pool):
    path = tmp_path / "s.lw"
    session = Session(pool, make_measure("f1", pool), make_design("passive"), seed=4, path=path)
    ids = session.next_batch(6)
    session.exclude(ids[:1])
    session.add_labels(ids[1:3], _truth(pool, ids[1:3]))
    before = path.read_bytes()
    drawn = set(session.draws.items.tolist())
    never = pool.item_ids[next(i for i in range(pool.n_items) if i not in drawn)]
    for bad, match in [(lambda: session.exclude(ids[1:2]), "not waiting for a label"),
                       (lambda: session.exclude([never]), "not waiting for a label"),
                       (lambda: session.exclude(["no-such-id"]), "not in the pool"),
                       (lambda: session.add_labels(ids[:1], [0]), "excluded as not judgeable"),
                       (lambda: session.skip(ids[:1]), "not waiting for a label")]:
        with pytest.raises(LabelError, match=match):
            bad()
        assert path.read_bytes() == before
    session.close()


def test_stochastic_sessions_exclude_items_with_all_their_draws(pool):
    session = Session(pool, make_measure("f1", pool), make_design("importance"), seed=6, oracle="stochastic")
    ids = session.next_batch(40)
    session.exclude(ids[:1])
    assert not np.isin(ids[:1], session.pending).any()
    rest = ids[ids != ids[0]]
    session.add_labels(rest, _truth(pool, rest))
    sample = session.sample()
    assert sample.excluded is not None and sample.excluded.sum() == np.sum(ids == ids[0])
    assert session.estimate().n_labels == rest.size
