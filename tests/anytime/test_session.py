"""Anytime intervals, stopping and certifying through a :class:`~labelwise.Session`."""

from __future__ import annotations

import numpy as np
import pytest

import labelwise as lw
from labelwise.anytime import anytime_half_width, anytime_path, certify, weight_bound
from labelwise.designs import ImportanceDesign
from labelwise.measures import make_measure
from labelwise.oracle import TruthOracle


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.make_pool(3000, prevalence=0.3, separation=2.5, seed=4)


@pytest.fixture(scope="module")
def labeled(pool) -> lw.Session:
    session = lw.Session(pool, make_measure("precision", pool), "passive", seed=1, budget=600)
    session.run(TruthOracle(pool), 600, 50)
    return session


def test_weight_bounds_of_the_designs(pool):
    measure = make_measure("f1", pool)
    start = lambda design: design.start(pool, measure, rng=np.random.default_rng(0))
    np.testing.assert_allclose(weight_bound(start(lw.make_design("passive"))), 1.0)
    q = ImportanceDesign(defensive=0.25).proposal(pool, measure)
    np.testing.assert_allclose(weight_bound(start(ImportanceDesign(defensive=0.25))), 1 / (pool.n_items * q))
    assert weight_bound(start(lw.make_design("oasis", defensive=0.2))) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="with-replacement design"):
        weight_bound(start(lw.make_design("online-poisson")))


def test_the_refusal_names_the_sessions_design_not_its_sampler_class(pool):
    """A stratified sampler keeps no design: the session's design gives the name the user chose."""
    session = lw.Session(pool, make_measure("f1", pool), "stratified", seed=0)
    with pytest.raises(ValueError, match="design is 'stratified'"):
        session.estimate(anytime=True)


def test_anytime_estimate_keeps_the_point_estimate_and_is_the_latest_batch_of_the_path(labeled):
    fixed, anytime = labeled.estimate(), labeled.estimate(anytime=True)
    np.testing.assert_array_equal(fixed.value, anytime.value)
    labels, lower, upper, emptied = anytime_path(labeled)
    assert labels.size == 12 and np.all(np.diff(labels) > 0)
    np.testing.assert_array_equal(anytime.interval(), (lower[-1], upper[-1]))
    assert np.all(np.diff(upper[:, 0] - lower[:, 0]) <= 0)  # a running intersection only narrows
    assert "anytime-valid" in anytime.to_dict()["interval_basis"]
    assert not emptied.any() and anytime.to_dict()["sequence_emptied"] == []


def test_certify_verdicts_follow_the_interval(labeled):
    lo, hi = (float(b[0]) for b in labeled.estimate(anytime=True).interval())
    assert certify(labeled, lo - 0.01).verdict == "certified"
    assert certify(labeled, hi + 0.01).verdict == "refuted"
    cert = certify(labeled, (lo + hi) / 2)
    assert (cert.verdict, cert.labels, cert.component) == ("undecided", labeled.n_labels, "precision")
    with pytest.raises(ValueError, match="component"):
        certify(labeled, 0.5, component="recall")


def test_run_until_half_width_stops_at_the_first_narrow_enough_batch(pool):
    session = lw.Session(pool, make_measure("accuracy", pool), "passive", seed=2, budget=1000)
    est = session.run(TruthOracle(pool), until_half_width=0.06, batch_size=50)
    lo, hi = est.interval()
    assert (hi[0] - lo[0]) / 2 <= 0.06
    _, lower, upper, _ = anytime_path(session)
    assert np.all((upper[:-1, 0] - lower[:-1, 0]) / 2 > 0.06)  # no earlier batch was narrow enough
    assert anytime_half_width(session) == pytest.approx((hi[0] - lo[0]) / 2)


def test_measures_without_a_ratio_form_are_refused(labeled, pool):
    with pytest.raises(ValueError, match="ratios of loss totals"):
        labeled.estimate(make_measure("mcc", pool), anytime=True)


def test_a_partly_labeled_batch_of_a_with_replacement_design_waits(pool):
    """Its rows are not in draw order (repeated draws aggregated), so only whole batches enter the sequence."""
    session = lw.Session(pool, make_measure("f1", pool), ImportanceDesign(defensive=0.5), seed=3, budget=400)
    session.run(TruthOracle(pool), 200, 50)
    before = anytime_path(session)
    ids = session.next_batch(50)
    session.add_labels(ids[:30], pool.labels[pool.positions(ids[:30])])
    after = anytime_path(session)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    session.add_labels(ids[30:], pool.labels[pool.positions(ids[30:])])
    assert anytime_path(session)[0].size == before[0].size + 1
