"""Repeated simulated evaluations on an engine pool (``labelwise simulate --engine``).

Each repeat draws the design's sample with its own seed (one pass over the
pool) and estimates the measure from the first ``k`` sampled items at every
checkpoint ``k``, labeled from the pool's label column.  The plan is made
once.  The true value comes from one more pass counting the items per block
and label, exact for measures whose loss depends on the items only through
the systems' predictions (precision, recall, F-measures, accuracy).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..designs import Design
from ..estimators import Estimate
from ..measures import Measure
from ..progress import progress_bar
from ..simulate import SimulationResult, default_checkpoints
from .blocks import depends_on_predictions_only
from .importance import simulate_importance
from .online import block_rounds, simulate_rounds
from .plan import IMPORTANCE, ONLINE, STRATIFIED, Plan, check_engine_design
from .pool import EnginePool
from .strata import engine_strata, simulate_strata, summary_slope_moments

__all__ = ["engine_true_value", "simulate_engine"]


def engine_true_value(pool: EnginePool, measure: Measure) -> np.ndarray:
    """The measure on the whole pool from one pass counting items per block and label.

    Raises
    ------
    ValueError
        For a measure whose loss varies within a block (it depends on scores).
    """
    rep = pool.summary.representatives(pool.system_names)
    if not depends_on_predictions_only(measure, rep.outputs()):
        raise ValueError(f"measure {measure.name!r} depends on the scores, not only the predictions: its true value on "
                         "an engine pool would need every item; simulate it on the pool in memory")
    counts = pool.source.truth_counts()
    block = np.searchsorted(pool.summary.keys, counts["block"].to_numpy())
    losses = measure.loss(rep.outputs(block), counts["label"].to_numpy())
    return measure.value(counts["n"].to_numpy(float) @ losses / pool.n_items)


def _static_run(pool: EnginePool, plan: Plan, seed: int, measure: Measure, marks: list[int], level: float,
                design: Design, budget: int) -> list[Estimate]:
    """One run of a planned design: its sample drawn with ``seed``, an estimate from the first ``k`` items at each mark
    (``poisson``'s interval through the blocks' oracle model, as a session's)."""
    sample = pool.sample(plan, seed)
    ids = sample.item_ids[:marks[-1]]
    labels = pool.source.labels(ids)
    return [pool.estimate(sample, measure, ids[:k], labels[:k], level, design, budget) for k in marks]


def simulate_engine(pool: EnginePool, measure: Measure, design: Design, *, budget: int, repeats: int,
                    seed: int = 0, checkpoints: Sequence[int] | None = None, level: float = 0.95,
                    progress: bool = False, batch_size: int = 50) -> SimulationResult:
    """``repeats`` evaluations of ``design`` on an engine pool, summarised per checkpoint.

    Repeat ``r`` draws with seed ``seed + r``; the result is that of
    :func:`labelwise.simulate` (same fields, same ``--json`` contract).
    ``online-poisson`` draws a round of ``batch_size`` items per pass
    (:func:`~labelwise.engines.online.simulate_rounds`), ``stratified``
    batches of ``batch_size`` (:func:`~labelwise.engines.strata.simulate_strata`), ``importance`` its draws with
    replacement (:func:`~labelwise.engines.importance.simulate_importance`).
    """
    if repeats < 1:
        raise ValueError(f"repeats: must be at least 1, got {repeats}")
    marks = sorted(set(checkpoints)) if checkpoints else default_checkpoints(budget)
    if marks[-1] > budget:
        raise ValueError(f"checkpoints: {marks[-1]} exceeds the budget {budget}")
    check_engine_design(design.name)
    truth = engine_true_value(pool, measure)
    if design.name == ONLINE:
        rounds = block_rounds(pool, design, measure)
        run = lambda seed: simulate_rounds(pool, rounds, seed, batch_size, marks, level)
    elif design.name == IMPORTANCE:
        run = lambda seed: simulate_importance(pool, design, measure, seed, marks, level)
    elif design.name == STRATIFIED:
        strata = engine_strata(pool.source, design)
        slopes = summary_slope_moments(measure, pool.stratum_summary(strata), pool.source.columns.system_names,
                                       strata.sizes.size)
        run = lambda seed: simulate_strata(pool.source, strata, design, measure, seed, batch_size, marks, level,
                                           slopes)
    else:
        plan = pool.plan(design, measure, budget)
        run = lambda seed: _static_run(pool, plan, seed, measure, marks, level, design, budget)
    shape = (len(marks), repeats, measure.size)
    values, lower, upper = np.empty(shape), np.empty(shape), np.empty(shape)
    defined = np.empty(shape, dtype=bool)
    start = time.perf_counter()
    with progress_bar(progress, repeats, "simulating") as update:
        for r in range(repeats):
            for c, est in enumerate(run(seed + r)):
                values[c, r], (lower[c, r], upper[c, r]), defined[c, r] = est.value, est.interval(), est.defined
            update(r + 1)
    elapsed = time.perf_counter() - start
    return SimulationResult(
        pool=pool.name, n_items=pool.n_items, measure=measure.name, names=tuple(measure.names),
        design=design.name, design_resolved=design.name,
        design_params={**{k: v for k, v in design.spec().items() if k != "design"}, "oracle": "deterministic"},
        true_value=np.asarray(truth, float), repeats=repeats, seconds_per_run=elapsed / repeats, labels=marks,
        values=values, lower=lower, upper=upper, defined=defined, level=level, noise=0.0)
