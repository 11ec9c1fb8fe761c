"""Shared pieces of the on-demand tests: every sample of a tiny universe, and the near-copy corpus."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from labelwise.ondemand.floors import own_share, reported_variance
from labelwise.ondemand.intervals import score_interval
from labelwise.ondemand.universe import is_uniform, stack_systems, system_distribution


def _every_sample(members: list[np.ndarray], n) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every joint sample (uniform, without replacement) of ``n[j]`` draws from ``members[j]``, equally likely:
    the instances drawn and the system each draw belongs to."""
    per_system = [list(itertools.combinations(members[j], n[j])) for j in range(len(members))]
    for combo in itertools.product(*per_system):
        idx = np.concatenate([np.array(c, dtype=int) for c in combo])
        grp = np.concatenate([np.full(len(c), j) for j, c in enumerate(combo)])
        yield idx, grp


@pytest.fixture(scope="session")
def every_sample() -> Callable[[list[np.ndarray], tuple], Iterator[tuple[np.ndarray, np.ndarray]]]:
    return _every_sample


@dataclass(frozen=True)
class NearCopy:
    """A high-precision system (0.945, 40 draws) and a near-copy of it with 10% of its output swapped for
    instances of precision 0.3 (10 draws)."""

    truth: np.ndarray
    members: list[np.ndarray]
    P: np.ndarray
    support: np.ndarray
    wor: bool
    n: np.ndarray

    @property
    def precision(self) -> np.ndarray:
        return self.P @ self.truth

    def score_coverage(self, estimate: Callable, alpha: np.ndarray, beta: np.ndarray, seed: int,
                       runs: int = 1000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Estimates, coverage and mean width of the score interval over ``runs`` seeded samples;
        ``estimate(idx, grp, f)`` is the joint estimator on one sample."""
        rng = np.random.default_rng(seed)
        grp = np.repeat(np.arange(len(self.members)), self.n)
        truth_p = self.precision
        est, inside, width = np.empty((runs, len(self.members))), 0, 0
        for r in range(runs):
            idx = np.concatenate([rng.choice(mb, k, replace=False) for mb, k in zip(self.members, self.n,
                                                                                      strict=True)])
            e = estimate(idx, grp, self.truth[idx])
            var = reported_variance(e.var, *own_share(self.P, idx, grp, self.truth[idx], self.n, self.wor), False)
            lo, hi = score_interval(e.value, var, alpha, beta, 0.95, e.ess)
            est[r], inside, width = e.value, inside + ((lo <= truth_p) & (truth_p <= hi)), width + hi - lo
        return est, inside / runs, width / runs


@pytest.fixture(scope="session")
def near_copy() -> NearCopy:
    size, shared, own = 400, 360, 40
    truth = np.zeros(size + own)
    truth[: round(0.95 * shared)] = 1
    truth[shared: shared + round(0.9 * (size - shared))] = 1
    truth[size: size + round(0.3 * own)] = 1
    members = [np.arange(size), np.r_[np.arange(shared), np.arange(size, size + own)]]
    P = stack_systems([system_distribution(mb, truth.size) for mb in members])
    return NearCopy(truth, members, P, np.array([size, shared + own]), is_uniform(P), np.array([40, 10]))
