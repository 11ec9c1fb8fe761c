"""Discovery runs against a known population: distinct positives found per budget, and interval coverage."""

from __future__ import annotations

import numpy as np

from ..progress import progress_bar
from .costs import CostModel
from .crowd import SimulatedCrowd
from .hierarchy import Hierarchy
from .policy import QueryPolicy

__all__ = ["CURVE_POINTS", "run_discovery", "simulate_discovery"]

CURVE_POINTS = 10


def run_discovery(hierarchy: Hierarchy, crowd: SimulatedCrowd, costs: CostModel, budget: float, policy: str,
                  seed: int, level: float = 0.95) -> dict:
    """One run of ``policy`` until the budget is spent (or nothing it may ask fits).

    Returns
    -------
    dict
        ``found`` (distinct positives found at each of the ``CURVE_POINTS`` budget points
        ``budget j / 10``), ``remaining`` (the estimate at the end) and ``true_remaining``.
    """
    rng = np.random.default_rng([seed, 1])
    state = QueryPolicy(hierarchy, costs, policy, seed=seed)
    spent, found = [0.0], [0]
    while (query := state.choose(budget - state.spent, rng)) is not None:
        state.record(query, crowd.answer(query, rng))
        spent.append(state.spent)
        found.append(int(state.found.sum()))
    points = budget * np.arange(1, CURVE_POINTS + 1) / CURVE_POINTS
    at = np.searchsorted(np.array(spent), points + 1e-9, side="right") - 1
    return {"found": np.array(found)[at], "remaining": state.remaining(level),
            "true_remaining": int(crowd.positives.size - state.found.sum())}


def simulate_discovery(hierarchy: Hierarchy, positive: np.ndarray, popularity: np.ndarray, budget: float,
                       policy: str = "crux", costs: CostModel | None = None, repeats: int = 50, seed: int = 0,
                       level: float = 0.95, progress: bool = False) -> dict:
    """Repeated runs of one policy; the ``labelwise discover simulate --json`` contract.

    Returns
    -------
    dict
        ``policy``, ``budget``, ``repeats``, ``level``, ``curve`` (``[{spent, distinct_found,
        true_total}]`` at 10 budget points, ``distinct_found`` the mean over the runs, with its
        standard error ``distinct_found_se``), ``remaining_estimate`` (mean ``value`` and ``interval``
        at the end, and the mean ``true`` remaining) and ``coverage`` (share of runs whose interval
        holds the true number not found).
    """
    costs = CostModel() if costs is None else costs
    crowd = SimulatedCrowd(hierarchy, positive, popularity)
    runs = []
    with progress_bar(progress, repeats, f"discover {policy}") as update:
        for r in range(repeats):
            runs.append(run_discovery(hierarchy, crowd, costs, budget, policy, seed + r, level))
            update(r + 1)
    found = np.array([run["found"] for run in runs], dtype=float)
    low, high = np.array([run["remaining"]["interval"] for run in runs]).T
    truth = np.array([run["true_remaining"] for run in runs])
    points = budget * np.arange(1, CURVE_POINTS + 1) / CURVE_POINTS
    se = found.std(axis=0, ddof=1) / np.sqrt(repeats) if repeats > 1 else np.zeros(CURVE_POINTS)
    return {
        "policy": policy, "budget": budget, "repeats": repeats, "level": level,
        "curve": [{"spent": float(b), "distinct_found": float(f), "distinct_found_se": float(s),
                   "true_total": int(crowd.positives.size)} for b, f, s in zip(points, found.mean(axis=0), se,
                                                                              strict=True)],
        "remaining_estimate": {"value": float(np.mean([run["remaining"]["remaining"] for run in runs])),
                               "interval": [float(low.mean()), float(high.mean())], "true": float(truth.mean())},
        "coverage": float(np.mean((low <= truth) & (truth <= high))),
    }
