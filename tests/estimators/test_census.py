"""An estimate that is exact because every item whose loss depends on its label is labeled."""

import tracemalloc

import numpy as np
import pytest

import labelwise as lw
from labelwise.datasets import make_pool
from labelwise.estimators.census import CENSUS_BASIS, label_free_losses
from labelwise.oracle.annotators import TruthOracle


def _exact(pool, name):
    measure = lw.make_measure(name, pool)
    return float(measure.value(measure.loss(pool.outputs(), pool.labels).mean(axis=0))[0])


def test_only_the_predicted_positives_losses_depend_on_their_label_for_precision():
    preds = np.array([1, 0, 1, 0, 0])
    pool = lw.Pool.from_arrays(None, preds=preds, scores=np.arange(5.0), labels=np.array([1, 0, 0, 1, 0]))
    depends, loss = label_free_losses(lw.make_measure("precision", pool), pool.outputs())
    assert depends.tolist() == [True, False, True, False, False]
    assert loss.tolist() == [[0, 1], [0, 0], [0, 1], [0, 0], [0, 0]]  # [y ŷ, ŷ] at y = 0
    for name in ("f1", "recall", "accuracy"):  # a positive label moves every item's loss
        assert label_free_losses(lw.make_measure(name, pool), pool.outputs())[0].all()


@pytest.mark.parametrize("design", ["online-poisson", "importance", "ais"])
def test_precision_is_exact_once_every_predicted_positive_is_labeled(design):
    """The designs' own estimators keep the error of rounds that drew predicted positives at probabilities below
    one (the old code: off by 1e-3 or more here); the census gives the pool's precision with a zero-width interval,
    and not before it is one."""
    pool = make_pool(n_items=3000, prevalence=0.02, separation=2.5, seed=3)
    predicted = int(pool.preds.sum())
    assert 20 < predicted < 200
    session = lw.Session(pool, lw.make_measure("precision", pool), design, seed=0)
    session.run(TruthOracle(pool), budget=1200, batch_size=100)
    sample = session.sample()
    labeled = np.unique(sample.draws.items)
    assert np.all(np.isin(np.flatnonzero(pool.preds[:, 0] == 1), labeled))
    est = session.estimate()
    assert est.value[0] == pytest.approx(_exact(pool, "precision"), abs=1e-12)
    low, high = est.interval()
    assert high[0] - low[0] == pytest.approx(0.0, abs=1e-12)
    assert est.basis == CENSUS_BASIS
    # a prefix that misses a predicted positive is the design's estimate
    first = next(n for n in range(1, len(sample.draws) + 1)
                 if not np.all(np.isin(np.flatnonzero(pool.preds[:, 0] == 1), sample.draws.items[:n])))
    assert session.estimate(prefix=first).basis != CENSUS_BASIS


def test_a_census_on_the_range_boundary_is_a_point_at_every_level():
    """A precision of 1 (no false positive) from every predicted positive labeled: the Beta interval would be the
    Jeffreys interval on the labels, [1 - 2.5 / n, 1]; the census knows the value."""
    preds = np.zeros(200, dtype=np.int64)
    preds[:5] = 1
    labels = preds.copy()
    labels[[50, 60]] = 1
    pool = lw.Pool.from_arrays(None, preds=preds, scores=np.linspace(1, 0, 200), labels=labels)
    session = lw.Session(pool, lw.make_measure("precision", pool), "passive", seed=0)
    session.run(TruthOracle(pool), budget=150, batch_size=50)
    assert np.all(np.isin(np.arange(5), session.sample().draws.items))  # this seed's draw holds them all
    est = session.estimate()
    assert est.value[0] == 1.0 and est.basis == CENSUS_BASIS
    for level in (0.5, 0.95, 0.999):
        low, high = est.interval(level)
        assert (low[0], high[0]) == (1.0, 1.0)


def test_no_census_for_noisy_labels_or_measures_whose_every_loss_depends_on_the_label():
    pool = make_pool(n_items=400, prevalence=0.05, separation=2.5, seed=4)
    noisy = lw.Session(pool, lw.make_measure("precision", pool), "passive", seed=0, oracle="stochastic")
    noisy.run(TruthOracle(pool), budget=400, batch_size=100)
    assert noisy.estimate().basis != CENSUS_BASIS
    f1 = lw.Session(pool, lw.make_measure("f1", pool), "passive", seed=0)
    f1.run(TruthOracle(pool), budget=399, batch_size=133)
    assert f1.estimate().basis != CENSUS_BASIS


def test_label_free_losses_of_a_multiclass_pool_take_one_loss_at_a_time():
    """Which rows depend on their label, by brute force over every label; and the pass holds about one (n, d)
    loss at a time, not all C of them (a 10-class pool's macro F1 with its class precisions and recalls:
    d = 60, the old stack of the C losses peaked at about 7 times one loss call's memory)."""
    pool = lw.make_multiclass_pool(20_000, class_shares=[0.1] * 10, seed=0)
    measure = lw.make_measure("macro_f1,class_precision,class_recall", pool)
    outputs = pool.outputs()
    small = lw.make_multiclass_pool(300, seed=1)
    precision = lw.make_measure("class_precision", small)
    by_label = np.stack([precision.loss(small.outputs(), np.full(300, c)) for c in range(3)])
    depends, loss = label_free_losses(precision, small.outputs())
    assert depends.tolist() == np.any(by_label != by_label[:1], axis=(0, 2)).tolist()
    np.testing.assert_array_equal(loss, by_label[0])
    tracemalloc.start()
    try:
        measure.loss(outputs, pool.labels)
        one = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        label_free_losses(measure, outputs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * one
