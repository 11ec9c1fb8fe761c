"""The session's own evidence in the plan: its level over the pilots' shape, and the calibration test that
decides whether the pilots are followed at all (:mod:`labelwise.planning`)."""

from __future__ import annotations

import contextlib
import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy.special import expit, logit

import labelwise as lw
from labelwise.measures import make_measure
from labelwise.oracle import TruthOracle
from labelwise.oracle.calibration import PlattPosterior
from labelwise.planning import (
    MISCALIBRATED,
    MISCALIBRATION_EFFECT,
    Projection,
    central_projection,
    labels_for,
    nested_projection,
    pilot_projection,
    power_law,
    present_projection,
)
from labelwise.planning_pilots import (
    PILOT_MARKS,
    PILOT_RUNS,
    calibration_surprise,
    per_label_variance,
    pilot_curves,
    pilot_prior,
    recalibration,
    recalibration_key,
)

Z = NormalDist().inv_cdf(0.975)


def test_the_session_level_carries_over_its_share_of_the_labels():
    # pilots' central curve C(m) = 2 (m / 200)^-1/2; the session at 200 labels has V0 = 4 C(200) = 8:
    # V(m) = C(m) (w 4 + 1 - w), w = 200 / m
    marks = np.array(PILOT_MARKS, dtype=float)
    central = Projection(tuple(marks), tuple(np.log(2.0 * (marks / 200) ** -0.5)), -0.5, 0.3)
    nested = nested_projection(central, 8.0, 200)
    m = np.array([200.0, 300.0, 800.0, 1600.0, 6400.0, 50_000.0])
    C = 2.0 * (m / 200) ** -0.5
    assert nested.variance(m) == pytest.approx(C * (200 / m * 4 + 1 - 200 / m))
    assert nested.variance(np.array([50.0])) == pytest.approx(4 * central.variance(np.array([50.0])))  # before
    assert (nested.slope, nested.spread) == (-0.5, 0.3)
    assert nested.scaled(math.log(2)).variance(m) == pytest.approx(2 * nested.variance(m))  # the range's bounds
    # a session at the pilots' level: their curve, unchanged
    assert nested_projection(central, 2.0, 200).variance(m) == pytest.approx(C)


def test_a_static_designs_plan_solves_the_nested_quadratic():
    # constant C = c, V0 at n0: z^2 (c m + n0 (V0 - c)) / m^2 = eps^2, a quadratic in m
    c, v0, n0, eps = 0.25, 0.5, 200, 0.02
    nested = nested_projection(power_law(c, 100, 0.0), v0, n0)
    a, b = eps**2, Z**2 * c
    m = (b + math.sqrt(b * b + 4 * a * Z**2 * n0 * (v0 - c))) / (2 * a)
    assert labels_for(nested, eps, 0.95, 10**7, True) == pytest.approx(m, abs=0.5)
    assert m < labels_for(power_law(v0, n0, 0.0), eps, 0.95, 10**7, True)  # less than the session's level alone
    assert m > labels_for(power_law(c, n0, 0.0), eps, 0.95, 10**7, True)  # more than the pilots' alone


def _census(pool: lw.Pool) -> lw.Session:
    session = lw.Session(pool, make_measure("f1", pool), "stratified", seed=0, budget=pool.n_items)
    session.run(TruthOracle(pool), pool.n_items)
    return session


def test_calibration_surprise_of_a_census_by_hand():
    p = np.array([0.9, 0.5, 0.2, 0.99, 0.3, 0.6])
    y = np.array([1, 0, 1, 1, 0, 0])
    pool = lw.Pool.from_arrays(None, preds=(p > 0.5).astype(int), probs=p, labels=y)
    q = np.stack([1 - p, p], axis=1)
    entropy = -(q * np.log(q)).sum(axis=1)
    variance = (q * np.log(q) ** 2).sum(axis=1) - entropy**2
    surprise = -np.log(np.where(y == 1, p, 1 - p)).sum()
    expected = (surprise - entropy.sum()) / math.sqrt(variance.sum())
    assert calibration_surprise(_census(pool)) == pytest.approx(expected, rel=1e-12)


def test_a_label_the_probabilities_rule_out_is_an_infinite_surprise():
    preds = np.array([1, 0, 0, 1, 0, 0])  # probabilities of exactly 0 and 1: each item's label certain
    certain = preds.astype(float)
    agree = lw.Pool.from_arrays(None, preds=preds, probs=certain, labels=preds)
    assert calibration_surprise(_census(agree)) == 0.0
    wrong = lw.Pool.from_arrays(None, preds=preds, probs=certain, labels=np.r_[0, preds[1:]])
    assert calibration_surprise(_census(wrong)) == math.inf


def twin_pools(n: int, seed: int, scale: float = 3.0) -> tuple[lw.Pool, lw.Pool]:
    """Labels drawn from calibrated probabilities, and the same pool with the logits times ``scale`` (tripled:
    over-confident)."""
    rng = np.random.default_rng(seed)
    p = expit(logit(0.03) + 2.0 * rng.standard_normal(n))
    labels = (rng.random(n) < p).astype(int)
    make = lambda probs: lw.Pool.from_arrays(None, preds=(probs > 0.5).astype(int), probs=probs, labels=labels)
    return make(p), make(expit(scale * logit(p)))


def _labeled(pool: lw.Pool, design: str = "passive") -> lw.Session:
    session = lw.Session(pool, make_measure("f1", pool), design, seed=0, budget=pool.n_items)
    session.run(TruthOracle(pool), pool.n_items, 2000)
    return session


def test_a_slight_miscalibration_on_a_large_session_keeps_the_pilots():
    """Seeded, 20 pools of 10000 labeled items: logits 10% too large give an excess surprise of about 0.05
    standard deviations per label, a standardized surprise of about 0.05 sqrt(10^4) = 5 (above 4 in about 84% of
    pools, so in at least half of 20 but for a 4-standard-error fluke), yet below MISCALIBRATION_EFFECT = 0.1:
    the minimum-effect statistic is about 5 - 10, never above 4; tripled logits (about 1.2 per label) are caught."""
    assert MISCALIBRATION_EFFECT == 0.1
    detectable, kept = [], []
    for seed in range(20):
        slight = _labeled(twin_pools(10_000, seed, scale=1.1)[1])
        detectable.append(calibration_surprise(slight) > MISCALIBRATED)
        kept.append(calibration_surprise(slight, MISCALIBRATION_EFFECT) <= MISCALIBRATED)
    assert np.mean(detectable) >= 0.5 and all(kept)
    over = _labeled(twin_pools(10_000, 0)[1])
    assert calibration_surprise(over, MISCALIBRATION_EFFECT) > MISCALIBRATED


def _at_200(pool: lw.Pool, seed: int) -> lw.Session:
    session = lw.Session(pool, make_measure("f1", pool), "importance", seed=seed, budget=3000)
    session.run(TruthOracle(pool), 200, 50)
    return session


def test_over_confident_probabilities_send_the_pilots_to_labels_recalibrated_to_the_session():
    """Seeded: where labels are drawn from the probabilities the standardized surprise is about standard
    normal, though skewed on a rare pool at 200 labels (above 4 in 4e-4 to 8e-4 of runs, measured, not the
    normal's 3e-5; the effect term lowers it by 0.1 sqrt(200) = 1.4); tripled logits make it far larger, and the
    plan then follows pilot runs whose labels are drawn from the probabilities recalibrated to the session's
    (their slope in the logit tempered to near the truth's 1/3), which plan more labels than pilots drawn from the
    over-confident probabilities."""
    calibrated, over = twin_pools(5000, seed=3)
    measure = make_measure("f1", over)
    design = lw.make_design("importance", over)
    for seed in range(3):
        assert calibration_surprise(_at_200(calibrated, seed), MISCALIBRATION_EFFECT) <= MISCALIBRATED
        session = _at_200(over, seed)
        assert calibration_surprise(session, MISCALIBRATION_EFFECT) > MISCALIBRATED
        recalibrated = recalibration(session)
        assert 0.2 < float(recalibrated.a @ recalibrated.weight) < 0.6  # tripled logits: a = 1/3
        v0 = per_label_variance(session.estimate(), over.n_items, True)
        curves_of = lambda runs, r=recalibrated: pilot_curves(over, measure, design, 3000, 0, runs, r)
        central = pilot_projection(v0, 200, curves_of)
        assert central is not None  # the recalibrated pilots are like the session
        projection = present_projection(nested_projection(central, v0, 200), v0, 200, 0.03, 0.95, over.n_items, True)
        plan = session.labels_needed(0.03)
        assert plan.labels_needed == math.ceil(labels_for(projection, 0.03, 0.95, over.n_items, True)) - 200
        raw = lambda runs: pilot_curves(over, measure, design, 3000, 0, runs)  # the over-confident probabilities
        assert labels_for(central_projection(raw(PILOT_RUNS), 200), 0.03, 0.95, over.n_items, True) - 200 < (
            plan.labels_needed)


def test_the_pilots_prior_is_the_platt_map_averaged_over_its_posterior():
    pool, _ = twin_pools(2000, seed=1)  # logits well inside the clipping of logits_of
    p = pool.probs[:, 0].astype(float)
    assert np.array_equal(pilot_prior(pool), np.stack([1 - p, p], axis=1))
    posterior = PlattPosterior(np.array([0.5, 0.25]), np.array([0.1, -1.0]), np.array([0.75, 0.25]))
    mean = 0.75 * expit(0.5 * logit(p) + 0.1) + 0.25 * expit(0.25 * logit(p) - 1.0)
    assert pilot_prior(pool, posterior) == pytest.approx(np.stack([1 - mean, mean], axis=1), rel=1e-12)
    assert recalibration_key(posterior) == recalibration_key(PlattPosterior(*(x.copy() for x in (
        posterior.a, posterior.b, posterior.weight))))  # by value
    assert recalibration_key(posterior) != recalibration_key(PlattPosterior(posterior.a, posterior.b,
                                                                            np.array([0.5, 0.5])))
    assert recalibration_key(None) is None


def test_a_multi_class_pool_has_no_recalibration():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(3), 600)
    pool = lw.Pool.from_arrays(None, preds=probs.argmax(axis=1), probs=probs[:, None, :],
                               labels=rng.integers(0, 3, 600))
    session = lw.Session(pool, make_measure("accuracy", pool), "passive", seed=0, budget=600)
    session.run(TruthOracle(pool), 200, 50)
    assert recalibration(session) is None


class _Reached(Exception):
    """Raised at the first checkpoint whose half-width is small enough: the labels after it change nothing."""


def _planned_and_realized(session: lw.Session, eps: float) -> tuple[int, int]:
    """The labels planned at the session's 200 labels to reach half-width ``eps``, and those realized labeling on
    in batches of 50 (up to 3000): the first batch whose half-width is at most ``eps``."""
    planned = 200 + session.labels_needed(eps).labels_needed
    half = []

    def check(n: int, est: lw.Estimate) -> None:
        half.append(float(np.max(np.diff(est.interval(), axis=0))))
        if half[-1] / 2 <= eps:
            raise _Reached

    with contextlib.suppress(_Reached):
        session.run(TruthOracle(session.pool), 3000, 50, checkpoints=range(250, 3001, 50), on_checkpoint=check)
    narrow = np.array(half) / 2 <= eps
    assert narrow.any()
    return planned, 250 + 50 * int(np.argmax(narrow))


@pytest.mark.slow
def test_on_over_confident_probabilities_the_plan_predicts_the_realized_labels():
    """Seeded, 8 runs: the labels realized (the first batch of 50 whose half-width is at most 0.03) lie within
    +-30% of the plan made at 200 labels in at least 6 of them (the benchmark's 80% target, less one run), while
    the pilots' own central curve, drawn from the over-confident probabilities, would have planned too few
    labels for most."""
    _, over = twin_pools(5000, seed=3)
    measure = make_measure("f1", over)
    curves = pilot_curves(over, measure, lw.make_design("importance", over), 3000, 0, PILOT_RUNS)
    piloted = labels_for(central_projection(curves, 200), 0.03, 0.95, over.n_items, True)
    hits, pilot_hits = [], []
    for seed in range(8):
        planned, realized = _planned_and_realized(_at_200(over, seed), 0.03)
        hits.append(abs(realized - planned) <= 0.3 * planned)
        pilot_hits.append(abs(realized - piloted) <= 0.3 * piloted)
    assert sum(hits) >= 6 and sum(pilot_hits) <= 2
