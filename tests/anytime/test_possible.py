"""The values a measure can still take given the labels so far (:mod:`labelwise.anytime.possible`)."""

from __future__ import annotations

import numpy as np
import pytest

import labelwise as lw
from labelwise.anytime import anytime_path
from labelwise.anytime.known_items import LabeledItems
from labelwise.anytime.possible import PossibleValues, UnlabeledCounts
from labelwise.anytime.ratio import GRID, RatioSequence, ratio_sequence
from labelwise.measures import make_measure

#: A true positive, a false positive and a false negative: F1 = 2 / (2 + 1 + 1) = 1/2, a grid point.
PREDS, LABELS = np.array([1, 1, 0]), np.array([1, 0, 1])
Q = np.array([0.5, 0.4, 0.1])
STEP = 1.0 / (GRID - 1)


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.Pool.from_arrays(None, preds=PREDS, scores=PREDS.astype(float), labels=LABELS)


def _interval(pool, items, batches, known_labels=True):
    measure = make_measure("f1", pool)
    losses = measure.loss(pool.outputs(), LABELS)[items]
    weights = 1.0 / (pool.n_items * Q)
    return ratio_sequence(measure, pool, losses, weights[items], np.ones(items.size, int), batches, weights, 0.95,
                          10.0, items=items, known_labels=known_labels)


def test_labeled_true_and_false_positive_bound_f1_by_the_unlabeled_negatives_two_labels(pool):
    # after batch 0 (the TP and the FP labeled) the predicted negative may be a false negative or not: F1 is
    # 2 / 4 or 2 / 3, and both totals are linear between them, so the chords find [1/2, 2/3] exactly. After
    # batch 1 the false negative is labeled too: F1 = 1/2. Three draws cannot win the bets anything (the first
    # batch calibrates them), so without the known labels nothing is excluded.
    lower, upper = _interval(pool, np.array([0, 1, 2]), np.array([0, 0, 1]))
    np.testing.assert_allclose(np.c_[lower[:, 0], upper[:, 0]], [[0.5, 2 / 3], [0.5, 0.5]], atol=1e-7)
    assert np.all(lower[:, 0] <= 0.5) and upper[0, 0] >= 2 / 3 and upper[1, 0] >= 0.5
    lower, upper = _interval(pool, np.array([0, 1, 2]), np.array([0, 0, 1]), known_labels=False)
    np.testing.assert_allclose(np.c_[lower[:, 0], upper[:, 0]], [[0.0, 1.0]] * 2, atol=1e-8)


def test_the_kept_candidates_are_those_within_a_step_of_the_possible_values(pool):
    # the mask the betting sequence is intersected with: after batch 0, the grid points within one step of
    # [1/2, 2/3]; after batch 1, the three around 1/2
    measure = make_measure("f1", pool)
    weights = 1.0 / (pool.n_items * Q)
    sequence = RatioSequence.start(measure, pool, weights, 0.95, 10.0, known_labels=True)
    items, batches = np.array([0, 1, 2]), np.array([0, 0, 1])
    losses = measure.loss(pool.outputs(), LABELS)[items]
    draws, _ = sequence.labeled.by_batch(losses, items, batches, Q)
    kept = sequence.components[0].possible.kept(UnlabeledCounts.after_batches(sequence.labeled, draws, losses, items,
                                                                             sequence.group))
    half = (GRID - 1) // 2
    np.testing.assert_array_equal(np.flatnonzero(kept[0]), np.arange(half - 1, int(np.floor(2 / 3 / STEP)) + 2))
    np.testing.assert_array_equal(np.flatnonzero(kept[1]), [half - 1, half, half + 1])


def test_counts_after_each_batch_resumed_over_calls():
    losses = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 2.0], [3.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    items = np.array([4, 1, 4, 2, 1, 0])
    batches = np.array([0, 0, 3, 3, 3, 7])
    group = np.array([0, 1, 1, 0, 0])  # two groups of the five items
    q = np.full(5, 0.2)
    start = LabeledItems.start(5, 2)
    draws, middle = start.by_batch(losses[:2], items[:2], batches[:2], q)
    first = UnlabeledCounts.after_batches(start, draws, losses[:2], items[:2], group)
    np.testing.assert_array_equal(first.count, [2])
    np.testing.assert_allclose(first.loss_sum, [[1.0, 3.0]])
    np.testing.assert_array_equal(first.unlabeled, [[2, 1]])  # items 4 (group 0) and 1 (group 1) labeled
    draws, _ = middle.by_batch(losses[2:], items[2:], batches[2:], q)
    later = UnlabeledCounts.after_batches(middle, draws, losses[2:], items[2:], group)
    # batch 3 labels item 2 (group 1; item 4 and 1 again), batch 7 item 0 (group 0)
    np.testing.assert_array_equal(later.count, [3, 4])
    np.testing.assert_allclose(later.loss_sum, [[4.0, 3.0], [9.0, 8.0]])
    np.testing.assert_array_equal(later.unlabeled, [[2, 0], [1, 0]])


def test_a_negative_denominator_drops_no_candidate():
    grid = np.linspace(0.0, 1.0, 5)
    cells = np.array([[[1.0], [0.0]]])
    assert PossibleValues.build(np.ones(1), 0.0, -np.ones(1), 0.0, grid, cells) is None
    assert PossibleValues.build(np.ones(1), 0.0, np.ones(1), 0.0, grid, cells) is not None


@pytest.mark.parametrize("name", ["f1", "precision", "recall", "accuracy"])
def test_the_possible_values_hold_the_truth_after_every_batch_of_random_draws(name):
    # a probability-one statement: on random draws, for every batch, both grid points around the true value are
    # still possible (so the betting interval, a step beyond, holds it), and the ends the chords find hold it
    pool = lw.make_pool(300, prevalence=0.1, separation=1.5, seed=5)
    measure = make_measure(name, pool)
    truth = float(lw.true_value(pool, measure)[0])
    sequence = RatioSequence.start(measure, pool, np.full(pool.n_items, 1.0), 0.95, 100.0, known_labels=True)
    possible, grid = sequence.components[0].possible, sequence.components[0].grid
    assert possible is not None
    rng = np.random.default_rng(2)
    losses = measure.loss(pool.outputs(), pool.labels)
    items = rng.integers(0, pool.n_items, 400)
    batches = np.repeat(np.arange(8), 50)
    draws, _ = sequence.labeled.by_batch(losses[items], items, batches, np.full(pool.n_items, 1 / pool.n_items))
    counts = UnlabeledCounts.after_batches(sequence.labeled, draws, losses[items], items, sequence.group)
    kept, (least, most) = possible.kept(counts), possible.ends(counts)
    around = [np.searchsorted(grid, truth, side="right") - 1, np.searchsorted(grid, truth, side="left")]
    assert np.all(kept[:, around])
    assert np.all((least <= truth) & (truth <= most))
    # the ends lie within a step of the outermost kept candidates
    step, first, last = grid[1] - grid[0], np.argmax(kept, axis=1), GRID - 1 - np.argmax(kept[:, ::-1], axis=1)
    assert np.all(grid[first] <= least + step) and np.all(most - step <= grid[last])
    # and the labels narrow it: by the last batch most of the pool is labeled
    assert kept[-1].sum() < kept[0].sum() < GRID


def test_a_session_that_labeled_every_item_is_certain_of_its_value(pool):
    # importance on the three items until every one is labeled: F1 = 1/2 is known, the interval a point
    session = lw.Session(pool, make_measure("f1", pool), "importance", seed=0, budget=3)
    session.run(lw.oracle.TruthOracle(pool), 3, 1)
    _, lower, upper, _ = anytime_path(session)
    assert upper[-1, 0] - lower[-1, 0] < 1e-7
    assert lower[-1, 0] <= 0.5 <= upper[-1, 0]


@pytest.mark.slow
def test_importance_sessions_cover_at_every_batch_and_end_below_the_largest_possible_f1():
    # 100 importance sessions of 400 labels on a 1:20 pool of 1000 items. The sequence misses at some batch with
    # probability at most 0.05: the misses are at most 5 plus three binomial standard deviations (about 6.5), so
    # at most 11. Surely, the upper end is at most the largest F1 a labeling of the unlabeled
    # items allows: 2 (TP + P) / (2 (TP + P) + FP + FN) of the labeled items, P the unlabeled predicted positives
    pool = lw.make_pool(1000, prevalence=0.05, separation=2.0, seed=4)
    measure = make_measure("f1", pool)
    truth = float(lw.true_value(pool, measure)[0])
    predicted, positive = pool.preds[:, 0] == 1, pool.labels == 1
    misses = 0
    for seed in range(100):
        session = lw.Session(pool, measure, "importance", seed=seed, budget=400)
        session.run(lw.oracle.TruthOracle(pool), 400, 50)
        _, lower, upper, emptied = anytime_path(session)
        misses += not np.all((lower[:, 0] <= truth) & (truth <= upper[:, 0]) & ~emptied[:, 0])
        labeled = np.zeros(pool.n_items, dtype=bool)
        labeled[session.sample().draws.items] = True
        tp = np.sum(labeled & predicted & positive) + np.sum(~labeled & predicted)
        wrong = np.sum(labeled & (predicted != positive))
        assert upper[-1, 0] <= 2 * tp / (2 * tp + wrong) + 1e-7
    assert misses <= 11
