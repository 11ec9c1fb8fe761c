"""A pool of predicted labels only: the prior trusts a prediction, it does not take it as certain."""

import numpy as np
import pytest

import labelwise as lw
from labelwise.oracle import score_prior
from labelwise.oracle.prior import PREDICTION_TRUST
from labelwise.simulate import covers


def test_a_prediction_weighs_its_trust_of_a_one_hot_and_the_rest_spreads_evenly():
    pool = lw.Pool.from_arrays(None, preds=np.array([[1, 1], [0, 1], [0, 0]]))
    t = PREDICTION_TRUST
    expected = np.array([[(1 - t) / 2, (1 + t) / 2], [0.5, 0.5], [(1 + t) / 2, (1 - t) / 2]])
    assert score_prior(pool) == pytest.approx(expected)
    assert score_prior(pool, lam=0.5) == pytest.approx(0.5 * expected + 0.25)  # lam shrinks on top of it
    assert 0 < t < 1


@pytest.mark.slow
def test_accuracy_intervals_cover_on_a_rare_pool_of_predictions_only():
    """1:1000, scores and probabilities dropped: with each prediction taken as certain the default's accuracy
    interval covered 0.44 at 1000 labels (50 runs). 40 runs: at a true coverage of 0.95 the share covered is
    at least 0.85 but with probability below 0.01."""
    full = lw.make_pool(200_000, prevalence=0.001, separation=3.0, seed=1)
    pool = lw.Pool.from_arrays(None, preds=full.preds, labels=full.labels)
    result = lw.simulate(pool, lw.make_measure("accuracy", pool), "default", budget=1000, repeats=40, seed=3,
                         checkpoints=[1000])
    assert covers(result.lower, result.upper, result.true_value)[..., 0].mean() >= 0.85
