"""Seeded simulations of the engine designs: unbiased estimates and intervals at their level."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise import make_measure, make_pool
from labelwise.designs import make_design
from labelwise.engines import EnginePool

RUNS = 300


@pytest.mark.slow
@pytest.mark.parametrize(("design", "name"), [("passive", "recall"), ("poisson", "recall"),
                                              ("stratified", "recall"), ("poisson", "f1")])
def test_coverage_bias_and_width(design, name):
    pool = make_pool(30_000, 0.05, seed=8)
    engine = EnginePool.from_pool(pool)
    measure = engine.measure(name)
    exact = make_measure(name, pool)
    truth = exact.value(exact.loss(pool.outputs(), pool.labels).mean(axis=0))[0]
    plan = engine.plan(make_design(design), measure, 800)
    values, covered, width = np.empty(RUNS), np.empty(RUNS, dtype=bool), np.empty(RUNS)
    for r in range(RUNS):
        sample = engine.sample(plan, seed=r)
        est = engine.estimate(sample, measure, sample.item_ids, engine.source.labels(sample.item_ids))
        lo, hi = est.interval()
        values[r], covered[r], width[r] = est.value[0], lo[0] <= truth <= hi[0], hi[0] - lo[0]
    # coverage of a 95% interval over RUNS runs within 3 standard errors
    assert abs(covered.mean() - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / RUNS)
    # the ratio estimator's bias is O(1/n): within 3 standard errors of the mean over the runs
    assert abs(values.mean() - truth) <= 3 * values.std() / np.sqrt(RUNS)
    # not needlessly wide: at most twice the width a normal interval with the true error would have
    assert width.mean() <= 2 * 3.92 * np.sqrt(np.mean((values - truth) ** 2))
