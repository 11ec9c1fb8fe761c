"""Enumerated keep/drop patterns and a logged bandit with a known value, for the logs tests."""

from __future__ import annotations

import itertools

import numpy as np
import pytest


def _keep_patterns(reward: np.ndarray, keep_rate: np.ndarray):
    """Every keep/drop pattern of the rows and its probability: non-zero rewards are always kept,
    a zero-reward row with probability ``keep_rate``."""
    zero = np.flatnonzero(reward == 0)
    for dropped in itertools.product((False, True), repeat=zero.size):
        kept = np.ones(reward.size, bool)
        kept[zero[list(dropped)]] = False
        prob = np.prod(np.where(dropped, 1 - keep_rate[zero], keep_rate[zero]))
        yield kept, prob


@pytest.fixture(scope="session")
def keep_patterns():
    """``keep_patterns(reward, keep_rate)``: every (kept mask, probability) of a log's subsampling."""
    return _keep_patterns


@pytest.fixture(scope="session")
def bandit():
    """``simulate(n, keep_rate, rng)``: a logged 4-armed bandit with uniform logging, zero rewards kept at
    ``keep_rate``, and the value of the policy that always plays arm 3 (``0.1 + 0.05 * 3``)."""

    def simulate(n: int, keep_rate: float, rng: np.random.Generator) -> dict:
        action = rng.integers(0, 4, n)
        reward = (rng.uniform(size=n) < 0.1 + 0.05 * action).astype(float)
        kept = (reward != 0) | (rng.uniform(size=n) < keep_rate)
        return {"reward": reward[kept], "propensity": np.full(kept.sum(), 0.25),
                "target": (action[kept] == 3).astype(float), "keep_rate": np.full(kept.sum(), keep_rate),
                "action": action[kept], "n_logged": n}

    simulate.value = 0.25
    return simulate
