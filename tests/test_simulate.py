"""The simulate contract: checkpoints, reproducibility and its summary statistics."""

import numpy as np
import pytest

from labelwise.datasets import make_pool
from labelwise.measures import make_measure
from labelwise.simulate import covers, default_checkpoints, simulate, true_value

CONTRACT = {"pool", "n_items", "measure", "design", "true_value", "repeats", "seconds_per_run", "checkpoints"}
ROW = {"labels", "mse", "bias", "undefined_fraction", "coverage", "mean_width"}


@pytest.fixture(scope="module")
def pool():
    return make_pool(4000, prevalence=0.05, separation=2.0, seed=3)


def test_true_value_is_the_pool_metric(pool):
    f1 = make_measure("f1", pool)
    y, f = pool.labels, pool.preds[:, 0]
    tp, fp, fn = np.sum(y & f), np.sum((1 - y) & f), np.sum(y & (1 - f))
    assert true_value(pool, f1)[0] == pytest.approx(2 * tp / (2 * tp + fp + fn))


def test_true_value_is_the_expectation_over_the_answers(tiny_binary_pool):
    """F1 of the expected counts: TP, predicted and actual positives under p(y|x)."""
    pool = tiny_binary_pool  # preds 0 0 0 1 1 1, labels 0 1 0 1 0 1
    measure = make_measure("f1", pool)
    e = 0.2
    tp = 2 * (1 - e) + 1 * e            # items 3 and 5 positive w.p. 1-e, item 4 w.p. e
    actual = 3 * (1 - e) + 3 * e        # 3 true positives keep their label, 3 negatives flip
    np.testing.assert_allclose(true_value(pool, measure, e), 2 * tp / (3 + actual))
    np.testing.assert_allclose(true_value(pool, measure), [2 * 2 / (3 + 3)])


def test_default_checkpoints():
    assert default_checkpoints(2000) == [250, 500, 1000, 2000]
    assert default_checkpoints(700) == [250, 500, 700]
    assert default_checkpoints(100) == [100]


@pytest.mark.slow
@pytest.mark.parametrize("design", ["passive", "stratified", "importance"])
def test_simulate_summaries_match_the_raw_runs(pool, design):
    measure = make_measure("f1", pool)
    res = simulate(pool, measure, design, budget=500, batch_size=50, repeats=20, seed=1)
    out = res.to_dict()
    assert CONTRACT <= set(out) and [c["labels"] for c in out["checkpoints"]] == [250, 500]
    assert all(ROW == set(c) for c in out["checkpoints"])
    truth = out["true_value"]
    last = out["checkpoints"][-1]
    values = res.values[-1, :, 0]
    assert last["mse"] == pytest.approx(np.mean((values - truth) ** 2))
    assert last["bias"] == pytest.approx(np.mean(values - truth))
    assert 0 <= last["coverage"] <= 1 and last["mean_width"] > 0
    # same seed, same result; another seed, another result
    again = simulate(pool, measure, design, budget=500, batch_size=50, repeats=20, seed=1)
    np.testing.assert_array_equal(again.values, res.values)
    other = simulate(pool, measure, design, budget=500, batch_size=50, repeats=20, seed=2)
    assert not np.array_equal(other.values, res.values)


@pytest.mark.slow
def test_simulated_coverage_is_near_nominal(pool):
    """150 runs of 500 labels: coverage of importance sampling no lower than 0.95 - 4 s.e. (0.88) and at most 0.99."""
    measure = make_measure("f1", pool)
    res = simulate(pool, measure, "importance", budget=500, batch_size=100, repeats=150, seed=7)
    cov = res.to_dict()["checkpoints"][-1]["coverage"]
    assert 0.95 - 4 * np.sqrt(0.95 * 0.05 / 150) <= cov <= 0.99, cov


def test_budget_larger_than_pool_is_rejected(pool):
    with pytest.raises(ValueError, match="budget"):
        simulate(pool, make_measure("f1", pool), "passive", budget=pool.n_items + 1)


def test_an_exact_estimate_off_the_truth_by_rounding_covers_it():
    """An exact estimate (a census: zero-wide interval) summed in another order than the truth, 0.1 + 0.2 against
    0.3: inside up to rounding; a value 1e-7 away is not."""
    exact = np.array([0.1 + 0.2])
    assert exact[0] != 0.3
    assert covers(exact, exact, np.array([0.3]))[0]
    assert not covers(exact, exact, np.array([0.3 + 1e-7]))[0]
    assert covers(np.array([1e6 - 1e-4]), np.array([1e6 - 1e-4]), np.array([1e6]))[0]  # relative above 1
