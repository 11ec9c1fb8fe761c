"""Seeded simulations of the engine designs: unbiased estimates and intervals at their level."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise import make_pool
from labelwise.designs import make_design
from labelwise.engines import EnginePool
from labelwise.engines.simulate import simulate_engine

RUNS = 300


@pytest.mark.slow
@pytest.mark.parametrize(("design", "name"), [("passive", "recall"), ("poisson", "recall"),
                                              ("stratified", "recall"), ("poisson", "f1")])
def test_coverage_bias_and_width(design, name):
    pool = make_pool(30_000, 0.05, seed=8)
    engine = EnginePool.from_pool(pool)
    result = simulate_engine(engine, engine.measure(name), make_design(design), budget=800, repeats=RUNS,
                             checkpoints=[800], batch_size=200)
    truth = result.true_value[0]
    values, lower, upper = result.values[0, :, 0], result.lower[0, :, 0], result.upper[0, :, 0]
    covered, width = (lower <= truth) & (truth <= upper), upper - lower
    # coverage of a 95% interval over RUNS runs within 3 standard errors (stratified: at least; its label floor
    # counts the positives its strata without one may hold, conservative where they hold next to none)
    se = np.sqrt(0.95 * 0.05 / RUNS)
    assert covered.mean() >= 0.95 - 3 * se
    assert design == "stratified" or covered.mean() <= 0.95 + 3 * se
    # the ratio estimator's bias is O(1/n): within 3 standard errors of the mean over the runs
    assert abs(values.mean() - truth) <= 3 * values.std() / np.sqrt(RUNS)
    # not needlessly wide: at most twice the width a normal interval with the true error would have
    assert width.mean() <= 2 * 3.92 * np.sqrt(np.mean((values - truth) ** 2))
