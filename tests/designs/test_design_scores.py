"""The score a design ranks and blocks items by: one system's, or the mean of every system's probability."""

import re

import numpy as np
import pytest
from scipy.special import expit

import labelwise as lw
from labelwise.designs.base import MEAN_OF_SYSTEMS, check_system, design_scores
from labelwise.engines.columns import EngineColumns
from labelwise.engines.strata import primary_column
from labelwise.oracle.annotators import TruthOracle
from labelwise.partition.strata import make_strata


def _two_systems(**outputs):
    preds = np.array([[1, 0], [0, 0], [1, 1], [0, 1]])
    return lw.Pool.from_arrays(None, preds=preds, labels=np.array([1, 0, 1, 0]), **outputs)


def test_the_mean_is_of_the_systems_probabilities_or_of_their_logistic_scores():
    probs = np.array([[0.9, 0.1], [0.2, 0.4], [0.6, 0.8], [0.3, 0.9]])
    assert design_scores(_two_systems(probs=probs), MEAN_OF_SYSTEMS).tolist() == pytest.approx([0.5, 0.3, 0.7, 0.6])
    scores = np.array([[2.0, -1.0], [0.0, 0.5], [-3.0, 1.0], [1.0, 1.0]])
    assert design_scores(_two_systems(scores=scores), MEAN_OF_SYSTEMS) == pytest.approx(expit(scores).mean(axis=1))
    assert design_scores(_two_systems(scores=scores), 1).tolist() == [-1.0, 0.5, 1.0, 1.0]  # one system: as it is


@pytest.mark.parametrize("value, message", [("max", "a system's number (0, 1, ...) or 'mean', got 'max'"),
                                            (-1, "must be at least 0, got -1")])
def test_a_system_is_a_number_or_mean(value, message):
    with pytest.raises(ValueError, match=re.escape(f"system: {message}")):
        check_system(value)
    with pytest.raises(ValueError, match="system"):
        lw.make_design("stratified", system=value)


def test_stratified_strata_on_the_mean_are_those_of_the_mean_probability():
    pool = lw.make_pool(3000, prevalence=0.05, separation=[2.0, 4.0], n_systems=2, seed=2)
    session = lw.Session(pool, lw.make_measure("f1", pool, systems="all"), "stratified", seed=0)
    assert session.design.system == MEAN_OF_SYSTEMS
    expected = make_strata(pool.probs.mean(axis=1), session.design.n_strata, method=session.design.method)
    assert np.array_equal(session.sampler.assignment, expected.assignment)
    assert not np.array_equal(expected.assignment,
                              make_strata(pool.probs[:, 0], session.design.n_strata,
                                          method=session.design.method).assignment)


def test_a_session_on_the_mean_resumes_from_its_file(tmp_path):
    pool = lw.make_pool(3000, prevalence=0.02, separation=[2.0, 4.0], n_systems=2, seed=3)
    session = lw.Session(pool, lw.make_measure("f1", pool, systems="all"), "online-poisson", seed=0,
                         path=tmp_path / "s.lws")
    session.run(TruthOracle(pool), 200, 50)
    reopened = lw.Session.open(tmp_path / "s.lws")
    assert reopened.design.system == MEAN_OF_SYSTEMS
    assert reopened.estimate().value == pytest.approx(session.estimate().value, abs=1e-12)


def test_an_engine_pool_refuses_the_mean_naming_a_system():
    columns = EngineColumns("item_id", ("pred_a", "pred_b"), ("prob_a", "prob_b"), (), None, ("a", "b"))
    assert primary_column(columns, 1) == "prob_b"
    with pytest.raises(ValueError, match=r"system='mean' on an engine pool: .*--param system=0"):
        primary_column(columns, MEAN_OF_SYSTEMS)


def test_a_system_beyond_the_pool_is_named_not_an_index_error():
    message = "system: the pool has 2 system(s), numbered from 0, got 2"
    with pytest.raises(ValueError, match=re.escape(message)):
        design_scores(_two_systems(probs=np.full((4, 2), 0.5)), 2)
    columns = EngineColumns("item_id", ("pred_a", "pred_b"), ("prob_a", "prob_b"), (), None, ("a", "b"))
    with pytest.raises(ValueError, match=re.escape(message)):
        primary_column(columns, 2)
