"""``poisson`` on score blocks reads the unlabeled items through the interval's oracle model, as ``online-poisson``
does: the recalibration's strength is held where the labels cannot fit it, instead of the most likely (weakest) one,
which empties a tail of positives that a few hundred labels at 1 in 10,000 could not have shown."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

import labelwise as lw


def calibrated_rare_pool(n_items: int = 200_000, positives: int = 20, d: float = 2.0, seed: int = 1) -> lw.Pool:
    """A weak system (score ``x = d y + N(0, 1)``) with calibrated probabilities, its top ``positives`` items
    predicted positive: positives 1 in 10,000, most of them deep in the tail."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n_items, dtype=np.int8)
    labels[rng.choice(n_items, size=positives, replace=False)] = 1
    x = rng.standard_normal(n_items) + d * labels
    prevalence = positives / n_items
    logit = np.log(prevalence / (1 - prevalence)) + d * x - d * d / 2
    preds = np.zeros(n_items, dtype=np.int8)
    preds[np.argsort(-x)[:positives]] = 1
    return lw.Pool.from_arrays(None, preds=preds, scores=logit, probs=expit(logit), labels=labels)


def test_poisson_accuracy_intervals_cover_a_calibrated_rare_pool():
    """60 runs at 500 of a 1000-label plan: covered 0.83 with the most likely strength; a coverage of 0.95 has a
    binomial standard error of 0.028, and the bound 0.95 - 3 x 0.028 fails with probability 0.3% if it holds."""
    pool = calibrated_rare_pool()
    result = lw.simulate(pool, lw.make_measure("accuracy", pool), "poisson", budget=500, batch_size=50, repeats=60,
                         seed=0, checkpoints=[500], design_params={"budget": 1000})
    (row,) = result.checkpoint_rows()
    assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 60)
