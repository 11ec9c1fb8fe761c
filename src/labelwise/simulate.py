"""Repeated simulated evaluations against ground truth: the label-efficiency yardstick.

:func:`simulate` runs a design ``repeats`` times on a pool with ground
truth, estimating the measure at label checkpoints, and summarises each
checkpoint by MSE, bias, the fraction of undefined estimates, coverage of
the confidence interval and its mean width.  ``labelwise simulate --json``
prints :meth:`SimulationResult.to_dict`, whose field names are a stable
contract (see the README).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .designs import Design, make_design
from .designs.base import check_oracle
from .measures import Measure
from .oracle.annotators import NoisyOracle, TruthOracle, noisy_label_distribution
from .pool import Pool
from .progress import progress_bar
from .session import Session

__all__ = ["CHECKPOINTS", "SimulationResult", "covers", "default_checkpoints", "simulate", "true_risk", "true_value"]

#: Relative tolerance of :func:`covers`: an exact estimate and the true value, the same ratio summed in another
#: order, differ by rounding only.
ROUNDING = 1e-9

CHECKPOINTS = (250, 500, 1000, 2000)


def true_risk(pool: Pool, measure: Measure, noise: float = 0.0) -> np.ndarray:
    """The pool's mean loss R at its ground-truth labels, or its expectation over
    annotators who err with probability ``noise`` (:class:`~labelwise.oracle.annotators.NoisyOracle`)."""
    probs = noisy_label_distribution(pool, noise)
    return measure.expected_loss_sum(pool.outputs(), probs) / pool.n_items


def true_value(pool: Pool, measure: Measure, noise: float = 0.0) -> np.ndarray:
    """The measure on the whole pool: ``g`` of :func:`true_risk` (Marchant & Rubinstein (KDD 2021) eq. 1's target),
    exact where the measure coarsens the items (:meth:`~labelwise.measures.Measure.pool_value`)."""
    return measure.pool_value(pool.outputs(), noisy_label_distribution(pool, noise))


def covers(lower: np.ndarray, upper: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Whether each interval ``[lower, upper]`` holds ``truth`` up to rounding (:data:`ROUNDING`).

    A census gives the exact value with a zero-width interval; summed in another order than the truth it can
    differ from it in the last digits, and an exact comparison would count every such run as a miss.
    """
    tol = ROUNDING * np.maximum(1.0, np.abs(truth))
    return (lower - tol <= truth) & (truth <= upper + tol)


def default_checkpoints(budget: int) -> list[int]:
    """250/500/1000/2000 labels up to ``budget``, plus ``budget`` itself when it is not one of them."""
    marks = [c for c in CHECKPOINTS if c <= budget]
    return marks if budget in marks else marks + [budget]


@dataclass
class SimulationResult:
    """Per-checkpoint summaries of repeated simulated evaluations."""

    pool: str
    n_items: int
    measure: str
    names: tuple[str, ...]
    design: str
    design_resolved: str
    design_params: dict
    true_value: np.ndarray
    repeats: int
    seconds_per_run: float
    labels: list[int]
    values: np.ndarray  # (checkpoints, repeats, m)
    lower: np.ndarray
    upper: np.ndarray
    defined: np.ndarray
    level: float = 0.95
    noise: float = 0.0
    extra: dict = field(default_factory=dict)

    def checkpoint_rows(self) -> list[dict]:
        """One summary per checkpoint (scalars for scalar measures, lists otherwise)."""
        rows = []
        scalar = len(self.names) == 1
        fmt = (lambda a: float(a[0])) if scalar else (lambda a: [float(x) for x in a])
        for c, n in enumerate(self.labels):
            err = self.values[c] - self.true_value
            inside = covers(self.lower[c], self.upper[c], self.true_value)
            rows.append({
                "labels": int(n),
                "mse": fmt(np.mean(err**2, axis=0)),
                "bias": fmt(np.mean(err, axis=0)),
                "undefined_fraction": fmt(np.mean(~self.defined[c], axis=0)),
                "coverage": fmt(np.mean(inside, axis=0)),
                "mean_width": fmt(np.mean(self.upper[c] - self.lower[c], axis=0)),
            })
        return rows

    def to_dict(self) -> dict:
        """The JSON object printed by ``labelwise simulate --json``."""
        scalar = len(self.names) == 1
        return {
            "pool": self.pool,
            "n_items": self.n_items,
            "measure": self.measure,
            "design": self.design,
            "design_resolved": self.design_resolved,
            "design_params": self.design_params,
            "true_value": float(self.true_value[0]) if scalar else [float(v) for v in self.true_value],
            "components": list(self.names),
            "repeats": self.repeats,
            "level": self.level,
            "oracle_noise": self.noise,
            "seconds_per_run": self.seconds_per_run,
            "checkpoints": self.checkpoint_rows(),
        }


def simulate(
    pool: Pool,
    measure: Measure,
    design: str | Design,
    *,
    budget: int = 2000,
    batch_size: int = 50,
    repeats: int = 100,
    seed: int | None = 0,
    checkpoints: Sequence[int] | None = None,
    level: float = 0.95,
    design_params: dict | None = None,
    noise: float = 0.0,
    oracle: str | None = None,
    progress: bool = False,
) -> SimulationResult:
    """Run ``repeats`` independent simulated evaluations of ``design`` on ``pool``.

    Parameters
    ----------
    pool : Pool
        Must carry ground-truth labels (they play the oracle).
    measure : Measure
    design : str or Design
        A registered design name (with ``design_params``), ``"default"`` (the
        design labelwise picks for ``pool``), or an instance.
    budget : int
        Distinct labels per run.
    batch_size : int
        Labels per batch (adaptive designs update between batches).
    repeats : int
    seed : int, optional
        Repeat r uses an independent generator spawned from ``seed``.
    checkpoints : sequence of int, optional
        Label counts to summarise (default :func:`default_checkpoints`).
    level : float
        Confidence level whose coverage is measured.
    noise : float
        Annotator noise: with ``noise > 0`` the oracle is stochastic
        (:class:`~labelwise.oracle.annotators.NoisyOracle`, a fresh answer per draw)
        and the truth is the measure's expectation over the answers.
    oracle : {"deterministic", "stochastic"}, optional
        The sessions' oracle mode; by default stochastic exactly when ``noise > 0``.

    Returns
    -------
    SimulationResult
    """
    if repeats < 1:
        raise ValueError(f"repeats: must be at least 1, got {repeats}")
    if budget > pool.n_items:
        raise ValueError(f"budget: {budget} labels asked but the pool has {pool.n_items} items; lower --budget")
    design_obj = (make_design(design, pool, measure, **(design_params or {})) if isinstance(design, str)
                  else design)
    marks = sorted(set(checkpoints)) if checkpoints else default_checkpoints(budget)
    if marks[-1] > budget:
        raise ValueError(f"checkpoints: {marks[-1]} exceeds the budget {budget}")
    oracle = check_oracle(oracle or ("stochastic" if noise else "deterministic"))
    if noise and oracle != "stochastic":
        raise ValueError("noise: the annotators are noisy but the oracle is deterministic; drop oracle=deterministic")
    truth = true_value(pool, measure, noise)
    m = measure.size
    shape = (len(marks), repeats, m)
    values, lower, upper = np.empty(shape), np.empty(shape), np.empty(shape)
    defined = np.empty(shape, dtype=bool)
    seeds = np.random.SeedSequence(seed).spawn(repeats)
    start = time.perf_counter()
    # one set-up for every run: each run copies the started sampler (start draws nothing at random)
    template = design_obj.start(pool, measure, rng=np.random.default_rng(0), budget=marks[-1], oracle=oracle)
    with progress_bar(progress, repeats, "simulating") as update:
        for r in range(repeats):
            rng = np.random.default_rng(seeds[r])
            session = Session(pool, measure, design_obj, oracle=oracle, budget=marks[-1], seed=rng, level=level,
                              sampler=template.copy(rng))
            annotator = NoisyOracle(pool, noise, seeds[r].spawn(1)[0]) if noise else TruthOracle(pool)

            def record(n: int, est, r=r) -> None:
                c = marks.index(n)
                values[c, r] = est.value
                lower[c, r], upper[c, r] = est.interval()
                defined[c, r] = est.defined

            session.run(annotator, marks[-1], batch_size, checkpoints=marks, on_checkpoint=record)
            update(r + 1)
    elapsed = time.perf_counter() - start
    return SimulationResult(
        pool=pool.name, n_items=pool.n_items, measure=measure.name, names=tuple(measure.names),
        design=design if isinstance(design, str) else design_obj.name, design_resolved=design_obj.name,
        design_params={**{k: v for k, v in design_obj.spec().items() if k != "design"}, "oracle": oracle}, true_value=np.asarray(truth, float),
        repeats=repeats, seconds_per_run=elapsed / repeats, labels=marks, values=values, lower=lower,
        upper=upper, defined=defined, level=level, noise=float(noise),
    )

