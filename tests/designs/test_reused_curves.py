"""A PR curve estimated from the labels of an F1 session (sample reuse) sees the positives left unlabeled.

A curve's points depend on the scores, so a score block's items do not share one loss; the model's part of
the interval takes each block at its items' mean loss (:func:`labelwise.designs.group_losses.group_losses`).
Before, such a reused measure kept the labeled items' interval alone, which an adaptive design that labels
the tail sparsely leaves at about zero: a recall of 0.955 was estimated at 1 with [0.985, 1].
"""

import numpy as np
import pytest

import labelwise as lw
from labelwise.datasets import make_pool
from labelwise.designs.group_losses import group_losses
from labelwise.designs.group_model import MODEL_BASIS


def test_a_groups_loss_is_its_items_mean_where_a_threshold_splits_it():
    scores = np.array([0.1, 0.2, 0.6, 0.7, 0.9, 0.95])
    pool = lw.Pool.from_arrays(None, preds=(scores > 0.5).astype(int), scores=scores, probs=scores,
                               labels=np.array([0, 0, 1, 0, 1, 1]))
    curve = lw.make_measure("pr_curve:3", pool)
    of_item = np.array([0, 0, 1, 1, 2, 2])
    out = group_losses(curve, pool, of_item, np.array([0, 2, 4]))
    for c in (0, 1):
        every = curve.loss(pool.outputs(), np.full(6, c))
        expected = np.stack([every[of_item == g].mean(axis=0) for g in range(3)])
        np.testing.assert_allclose(out[c], expected, rtol=0, atol=1e-15)
    # a measure of the predictions alone keeps its one loss per group
    f1 = lw.make_measure("f1", pool)
    np.testing.assert_array_equal(group_losses(f1, pool, of_item, np.array([0, 2, 4]))[1],
                                  f1.loss(pool.outputs(np.array([0, 2, 4])), np.ones(3, dtype=int)))


@pytest.mark.parametrize("design", ["online-poisson", "importance"])
def test_a_reused_curve_rests_on_the_model_too(design):
    pool = make_pool(5000, prevalence=0.01, seed=3)
    session = lw.Session(pool, lw.make_measure("f1", pool), design, seed=0, budget=300)
    session.run(lw.TruthOracle(pool), 300, 50)
    assert session.estimate(lw.make_measure("pr_curve:3", pool)).basis == MODEL_BASIS


@pytest.mark.slow
@pytest.mark.parametrize("design", ["online-poisson", "importance"])
def test_a_reused_curves_recall_covers(design):
    """30 runs at 1000 labels: the recall at the middle threshold (truth 0.955, the positives below it score low)
    covers at least 0.95 - 3 s.e. (0.83); it covered 0.12 (online-poisson) and 0.33 (importance) before."""
    pool = make_pool(20000, prevalence=0.01, seed=3)
    curve = lw.make_measure("pr_curve:3", pool)
    truth = lw.true_value(pool, curve)
    runs, covered = 30, np.zeros(truth.size)
    for seed in range(runs):
        session = lw.Session(pool, lw.make_measure("f1", pool), design, seed=seed, budget=1000)
        session.run(lw.TruthOracle(pool), 1000, 50)
        lo, hi = session.estimate(curve).interval()
        covered += (lo <= truth) & (truth <= hi)
    names = session.estimate(curve).names
    middle = [i for i, n in enumerate(names) if n.startswith("recall@")][1]
    assert 0.9 < truth[middle] < 0.99
    assert covered[middle] / runs >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs), dict(zip(names, covered / runs))
