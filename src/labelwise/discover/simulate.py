"""Discovery runs against a known population: distinct positives found per budget, and interval coverage."""

from __future__ import annotations

import numpy as np

from ..progress import progress_bar
from .costs import CostModel
from .crowd import SimulatedCrowd, best_query
from .hierarchy import Hierarchy
from .policy import POLICIES, Query, QueryPolicy

__all__ = ["CURVE_POINTS", "ORACLE", "SIMULATED_POLICIES", "run_discovery", "simulate_discovery"]

CURVE_POINTS = 10
ORACLE = "oracle"  # simulation only: each round the configuration of largest true expected new positives per cost
SIMULATED_POLICIES = (*POLICIES, ORACLE)


def run_discovery(hierarchy: Hierarchy, crowd: SimulatedCrowd, costs: CostModel, budget: float, policy: str,
                  seed: int, level: float = 0.95) -> dict:
    """One run of ``policy`` until the budget is spent (or nothing it may ask fits).

    ``policy`` is one of :data:`~labelwise.discover.policy.POLICIES` or :data:`ORACLE`: the one-step-greedy
    policy that knows the population's expected yields (:meth:`SimulatedCrowd.yield_per_cost`), a reference
    for what gain estimates alone could reach.

    Returns
    -------
    dict
        At each of the ``CURVE_POINTS`` budget points ``budget j / 10`` (the state after the last
        query that fits in it): ``found`` (distinct positives), ``remaining`` (the estimate) and
        ``true_remaining``; and ``found_interpolated``, the distinct positives found interpolated
        linearly in the spend between the queries on either side of the point (``found`` drops the
        query that straddles the point, a whole query lost to a policy whose prices do not add up
        to it exactly, which a run with that budget would not have asked).
    """
    rng = np.random.default_rng([seed, 1])
    # the oracle's state: the bookkeeping of a policy that estimates no gains
    state = QueryPolicy(hierarchy, costs, "root" if policy == ORACLE else policy, seed=seed)
    points = budget * np.arange(1, CURVE_POINTS + 1) / CURVE_POINTS
    found, remaining, truth = [], [], []
    history = [(0.0, 0)]  # spent and distinct positives found after each query

    def reach(spent: float) -> None:
        """Record the state at every budget point below ``spent`` not recorded yet."""
        while len(found) < CURVE_POINTS and spent > points[len(found)] + 1e-9:
            found.append(int(state.found.sum()))
            remaining.append(state.remaining(level))
            truth.append(int(crowd.positives.size - found[-1]))

    def choose() -> Query | None:
        left = budget - state.spent
        return (best_query(state, crowd.yield_per_cost(state, left), rng) if policy == ORACLE
                else state.choose(left, rng))

    while (query := choose()) is not None:
        reach(state.spent + query.cost)
        state.record(query, crowd.answer(query, rng))
        history.append((state.spent, int(state.found.sum())))
    reach(np.inf)
    spent, so_far = np.array(history).T
    return {"found": np.array(found), "remaining": remaining, "true_remaining": np.array(truth),
            "found_interpolated": np.interp(points, spent, so_far)}


def simulate_discovery(hierarchy: Hierarchy, positive: np.ndarray, popularity: np.ndarray, budget: float,
                       policy: str = "crux", costs: CostModel | None = None, repeats: int = 50, seed: int = 0,
                       level: float = 0.95, progress: bool = False) -> dict:
    """Repeated runs of one policy (one of :data:`SIMULATED_POLICIES`); the ``labelwise discover simulate --json``
    contract.

    Returns
    -------
    dict
        ``policy``, ``budget``, ``repeats``, ``level``; ``curve``: at 10 budget points ``spent``,
        ``distinct_found`` (mean over the runs) with its standard error ``distinct_found_se``, the same
        interpolated at the point (``distinct_found_interpolated`` and ``distinct_found_interpolated_se``;
        see :func:`run_discovery`),
        ``true_total``, ``coverage`` (share of runs whose interval holds the true number not found),
        ``lower_bound_only`` (share of runs whose estimate is flagged a lower bound only) and
        ``claim_coverage`` (share of runs whose claim holds: the interval, or its lower end when
        flagged); ``remaining_estimate`` (mean ``value`` and ``interval`` at the end, the mean
        ``true`` remaining); ``coverage``, ``lower_bound_only`` and ``claim_coverage`` at the end.
    """
    costs = CostModel() if costs is None else costs
    crowd = SimulatedCrowd(hierarchy, positive, popularity)
    runs = []
    with progress_bar(progress, repeats, f"discover {policy}") as update:
        for r in range(repeats):
            runs.append(run_discovery(hierarchy, crowd, costs, budget, policy, seed + r, level))
            update(r + 1)
    found = np.array([run["found"] for run in runs], dtype=float)
    interpolated = np.array([run["found_interpolated"] for run in runs])
    truth = np.array([run["true_remaining"] for run in runs])
    low, high = np.array([[est["interval"] for est in run["remaining"]] for run in runs]).transpose(2, 0, 1)
    flagged = np.array([[est["lower_bound_only"] for est in run["remaining"]] for run in runs])
    covered, above_low = (low <= truth) & (truth <= high), low <= truth
    claim = np.where(flagged, above_low, covered)
    points = budget * np.arange(1, CURVE_POINTS + 1) / CURVE_POINTS
    se, se_interpolated = (x.std(axis=0, ddof=1) / np.sqrt(repeats) if repeats > 1 else np.zeros(CURVE_POINTS)
                           for x in (found, interpolated))
    curve = [{"spent": float(points[j]), "distinct_found": float(found[:, j].mean()),
              "distinct_found_se": float(se[j]), "distinct_found_interpolated": float(interpolated[:, j].mean()),
              "distinct_found_interpolated_se": float(se_interpolated[j]), "true_total": int(crowd.positives.size),
              "coverage": float(covered[:, j].mean()), "lower_bound_only": float(flagged[:, j].mean()),
              "claim_coverage": float(claim[:, j].mean())} for j in range(CURVE_POINTS)]
    return {
        "policy": policy, "budget": budget, "repeats": repeats, "level": level, "curve": curve,
        "remaining_estimate": {"value": float(np.mean([run["remaining"][-1]["remaining"] for run in runs])),
                               "interval": [float(low[:, -1].mean()), float(high[:, -1].mean())],
                               "true": float(truth[:, -1].mean())},
        "coverage": curve[-1]["coverage"], "lower_bound_only": curve[-1]["lower_bound_only"],
        "claim_coverage": curve[-1]["claim_coverage"],
    }
