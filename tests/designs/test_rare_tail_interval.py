"""The default's interval on a 1:20,000 pool with strong scores: it covers and is no longer close to [0, 1].

Before the jump bound (:func:`labelwise.estimators.jump_limit`) a positive that earlier rounds reached only at
``b ~ 1e-6`` made the labeled items' variance huge once drawn: a mean width of 0.85 (3.1 times 3.92 RMSE) at 1000
labels on this pool, with an error of 0.07.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binom

import labelwise as lw

RUNS = 20
LEVEL = 0.95


def rare_pool(n: int, positives: int, d: float, seed: int) -> lw.Pool:
    """Calibrated probabilities of a score ``x = d y + N(0, 1)``; the top ``positives`` scores predicted positive."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n, dtype=np.int8)
    labels[rng.choice(n, positives, replace=False)] = 1
    x = rng.standard_normal(n) + d * labels
    prevalence = positives / n
    logit = np.log(prevalence / (1 - prevalence)) + d * x - d * d / 2
    preds = np.zeros(n, dtype=np.int8)
    preds[np.argpartition(-x, positives - 1)[:positives]] = 1
    return lw.Pool.from_arrays(None, preds=preds, scores=logit, probs=expit(logit), labels=labels, name="rare")


@pytest.mark.slow
def test_default_interval_covers_and_is_at_most_twice_the_error_on_a_strong_rare_pool():
    pool = rare_pool(400_000, 20, 4.0, seed=7)
    result = lw.simulate(pool, lw.make_measure("f1", pool), "default", budget=1000, batch_size=50, repeats=RUNS,
                         seed=0, checkpoints=[1000], level=LEVEL)
    assert result.design_resolved == "online-poisson"
    truth = result.true_value[0]
    lower, upper, value = result.lower[0, :, 0], result.upper[0, :, 0], result.values[0, :, 0]
    misses = int(np.sum((truth < lower) | (truth > upper)))
    # a 95% interval misses Binomial(20, 0.05) times: more than 4 has probability < 0.3%
    assert binom.sf(4, RUNS, 1 - LEVEL) < 0.003
    assert misses <= 4
    rmse = np.sqrt(np.mean((value - truth) ** 2))
    assert np.mean(upper - lower) <= 2 * 3.92 * rmse  # the width target; 3.1 before
