"""The covariance floor of an estimate from labels with no positive: exact against enumeration, and in a session."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.stats import betabinom

from labelwise.estimators.unseen_positives import unseen_positives_covariance

MOVE = np.array([[2.0, 0.0], [-1.0, 1.0], [0.0, 0.0]])  # three groups; the last one's label moves nothing
UNLABELED = np.array([2.0, 3.0, 5.0])
N_LABELS, N_ITEMS = 4, 50


def test_the_floor_is_the_random_sum_of_beta_binomial_positives_each_at_a_random_movable_item():
    # K ~ BB(5, 1/2, 4 + 1/2) positives among the 5 movable items, each independently at one of them
    moves = np.repeat(MOVE[:2], UNLABELED[:2].astype(int), axis=0)  # (5, 2), one row per movable item
    pmf = betabinom.pmf(np.arange(6), 5, 0.5, N_LABELS + 0.5)
    mean_c, cov_c = moves.mean(axis=0), np.cov(moves.T, bias=True)
    # E[S S^T] given K = k: k Cov(c) + k^2 E[c] E[c]^T; E[S] = E[K] E[c]
    second = sum(p * (k * cov_c + k**2 * np.outer(mean_c, mean_c)) for k, p in enumerate(pmf))
    mean_s = (pmf @ np.arange(6)) * mean_c
    exact = (second - np.outer(mean_s, mean_s)) / N_ITEMS**2
    np.testing.assert_allclose(unseen_positives_covariance(MOVE, UNLABELED, N_LABELS, N_ITEMS), exact, rtol=1e-12)


def test_the_floor_holds_the_error_of_positives_at_distinct_items():
    # positives at distinct items (drawn without replacement) vary less than the floor's independent placements
    moves = np.repeat(MOVE[:2], UNLABELED[:2].astype(int), axis=0)
    pmf = betabinom.pmf(np.arange(6), 5, 0.5, N_LABELS + 0.5)
    sums = [(p / len(subsets), moves[list(s)].sum(axis=0)) for k, p in enumerate(pmf)
            for subsets in [list(combinations(range(5), k))] for s in subsets]
    mean = sum(w * s for w, s in sums)
    cov = sum(w * np.outer(s - mean, s - mean) for w, s in sums) / N_ITEMS**2
    floor = unseen_positives_covariance(MOVE, UNLABELED, N_LABELS, N_ITEMS)
    assert np.all(np.linalg.eigvalsh(floor - cov) >= -1e-15)
    assert np.all(np.diag(floor) > np.diag(cov))


def test_no_movable_item_no_floor():
    assert not unseen_positives_covariance(np.zeros((2, 1)), np.array([3.0, 4.0]), 10, 100).any()


def tail_only_pool(scale: float = 3.0, n_items: int = 60_000, tail_positives: int = 6, seed: int = 0):
    """Scores that rank none of the positives: the top 6 items are predicted positive and negative, 6 positives sit
    among the items ranked 1000 or lower; logits ``scale`` times those of probabilities near 1e-4 (3: over-confident,
    the robustness grid's 1:100,000 over-confident pool in small)."""
    import labelwise as lw

    rng = np.random.default_rng(seed)
    logits = scale * (rng.normal(size=n_items) - 10.0)
    order = np.argsort(-logits)
    labels = np.zeros(n_items, dtype=np.int64)
    labels[rng.choice(order[1000:], size=tail_positives, replace=False)] = 1
    preds = np.zeros(n_items, dtype=np.int64)
    preds[order[:6]] = 1
    probs = 1.0 / (1.0 + np.exp(-logits))
    return lw.Pool(item_ids=np.arange(n_items), preds=preds[:, None], probs=probs[:, None], labels=labels,
                   system_names=("s",))


def test_an_accuracy_interval_with_no_positive_labeled_reaches_the_positives_the_labels_cannot_rule_out():
    import labelwise as lw
    from labelwise.estimators.unseen_positives import UNSEEN_POSITIVES_BASIS

    pool = tail_only_pool()
    measure = lw.make_measure("accuracy", pool)
    truth = float(lw.true_value(pool, measure)[0])
    session = lw.Session(pool, measure, "default", seed=3, budget=200)
    est = session.run(lw.TruthOracle(pool), 200, 50)
    labeled = session.sample().draws.items
    assert not pool.labels[labeled].any()  # the case: 200 labels, none positive
    lo, hi = est.interval()
    assert lo[0] <= truth <= hi[0]  # the 6 positives left: before the floor, the interval was a point
    assert UNSEEN_POSITIVES_BASIS in est.basis
    # the floor as the variance: the unlabeled items predicted negative would each lose accuracy 1/N as positives
    unlabeled = np.ones(pool.n_items, dtype=bool)
    unlabeled[labeled] = False
    move = np.where(pool.preds[unlabeled, 0] == 1, 1.0, -1.0)[:, None]
    floor = unseen_positives_covariance(move, np.ones(move.shape[0]), labeled.size, pool.n_items)
    np.testing.assert_allclose(est.cov[0, 0], floor[0, 0], rtol=1e-9)
    # the Jeffreys quantile: about 2.5 / 200 of the 59,800 unlabeled items, 747 positives (742 with the Beta fit)
    assert truth - lo[0] == pytest.approx(747 / pool.n_items, rel=0.05)


@pytest.mark.parametrize("scale", [1.5, 1.7, 3.0])
def test_the_floor_does_not_depend_on_the_level_and_a_higher_level_is_wider(scale):
    """The model's P(no positive left) at 0.947 (scale 1.5) once fell just short of a 0.95 level and kept a point
    interval; at 0.99 the floor was skipped where 0.95 applied it (scale 1.7)."""
    import labelwise as lw

    pool = tail_only_pool(scale=scale)
    measure = lw.make_measure("accuracy", pool)
    truth = float(lw.true_value(pool, measure)[0])
    session = lw.Session(pool, measure, "default", seed=3, budget=200)
    est = session.run(lw.TruthOracle(pool), 200, 50)
    assert not pool.labels[session.sample().draws.items].any()
    (lo90,), (hi90,) = est.interval(level=0.90)
    (lo95,), (hi95,) = est.interval(level=0.95)
    (lo99,), (hi99,) = est.interval(level=0.99)
    assert lo99 < lo95 < lo90 <= truth <= hi90 <= hi95 <= hi99


def test_a_labeled_positive_lifts_the_floor():
    import labelwise as lw
    from labelwise.estimators.unseen_positives import UNSEEN_POSITIVES_BASIS

    pool = tail_only_pool()
    labels = pool.labels.copy()
    labels[np.argmax(pool.probs[:, 0])] = 1  # the top item, labeled in the first batch
    pool = pool.with_labels(labels)
    session = lw.Session(pool, lw.make_measure("accuracy", pool), "default", seed=3, budget=200)
    est = session.run(lw.TruthOracle(pool), 200, 50)
    assert pool.labels[session.sample().draws.items].any()
    assert UNSEEN_POSITIVES_BASIS not in est.basis


def test_the_basis_names_the_floor_only_where_it_raised_the_variance():
    # F1 with no true positive labeled: no unlabeled item's label moves it through the linearization, no floor
    import labelwise as lw
    from labelwise.estimators.unseen_positives import UNSEEN_POSITIVES_BASIS

    pool = tail_only_pool()
    session = lw.Session(pool, lw.make_measure("recall", pool), "default", seed=3, budget=200)
    est = session.run(lw.TruthOracle(pool), 200, 50)
    assert UNSEEN_POSITIVES_BASIS not in est.basis


def test_where_the_model_expects_positives_left_its_interval_stands():
    # logits of 1e-4 probabilities, not scaled: the model expects a few positives left, its interval reaches them
    import labelwise as lw
    from labelwise.estimators.unseen_positives import UNSEEN_POSITIVES_BASIS

    pool = tail_only_pool(scale=1.0)
    measure = lw.make_measure("accuracy", pool)
    session = lw.Session(pool, measure, "default", seed=3, budget=200)
    est = session.run(lw.TruthOracle(pool), 200, 50)
    assert not pool.labels[session.sample().draws.items].any()
    assert UNSEEN_POSITIVES_BASIS not in est.basis
    lo, hi = est.interval()
    assert lo[0] <= float(lw.true_value(pool, measure)[0]) <= hi[0]


def three_class_tail_pool(n_items: int = 60_000, seed: int = 0):
    """Over-confident class probabilities that rank none of the 6 items of class 1 and 4 of class 2, all among the
    items ranked 1000 or lower; the top 6 predicted class 1 and of class 0."""
    import labelwise as lw

    rng = np.random.default_rng(seed)
    logits = 3.0 * (rng.normal(size=n_items) - 10.0)
    p1 = 1.0 / (1.0 + np.exp(-logits))
    order = np.argsort(-logits)
    labels = np.zeros(n_items, dtype=np.int64)
    hidden = rng.choice(order[1000:], size=10, replace=False)
    labels[hidden[:6]], labels[hidden[6:]] = 1, 2
    preds = np.zeros(n_items, dtype=np.int64)
    preds[order[:6]] = 1
    probs = np.stack([1.0 - 2.0 * p1, p1, p1], axis=1)[:, None, :]
    return lw.Pool(item_ids=np.arange(n_items), preds=preds[:, None], probs=probs, labels=labels, n_classes=3,
                   system_names=("s",))


@pytest.mark.parametrize(("pool_of", "measure", "oracle"), [
    (tail_only_pool, "brier", "deterministic"),  # a measure of the probabilities: rounds item by item
    (tail_only_pool, "accuracy", "stochastic"),
    (three_class_tail_pool, "accuracy", "deterministic"),  # another class than the commonest as the exception
])
def test_the_rounds_item_by_item_hold_the_floor_too(pool_of, measure, oracle):
    import labelwise as lw
    from labelwise.estimators.unseen_positives import UNSEEN_POSITIVES_BASIS

    pool = pool_of()
    target = lw.make_measure(measure, pool)
    truth = float(lw.true_value(pool, target)[0])
    session = lw.Session(pool, target, "default", seed=3, budget=200, oracle=oracle)
    est = session.run(lw.TruthOracle(pool), 200, 50)
    assert not pool.labels[session.sample().draws.items].any()
    (lo,), (hi,) = est.interval()
    assert lo <= truth <= hi  # a point interval before the floor on this path
    assert UNSEEN_POSITIVES_BASIS in est.basis


@pytest.mark.parametrize(("design", "measure", "oracle"), [
    ("importance", "accuracy", "deterministic"),  # drawn on score blocks
    ("importance", "brier", "deterministic"),  # a measure of the probabilities: the proposal item by item
    ("poisson", "accuracy", "deterministic"),
    ("ais", "accuracy", "deterministic"),
    # a stochastic oracle: ais's model kept no per-item labels, importance and poisson have no model (plug-in)
    ("importance", "accuracy", "stochastic"),
    ("poisson", "accuracy", "stochastic"),
    ("ais", "accuracy", "stochastic"),
])
def test_the_other_designs_with_an_oracle_model_hold_the_floor_too(design, measure, oracle):
    import labelwise as lw
    from labelwise.estimators.unseen_positives import UNSEEN_POSITIVES_BASIS

    pool = tail_only_pool()
    target = lw.make_measure(measure, pool)
    truth = float(lw.true_value(pool, target)[0])
    session = lw.Session(pool, target, design, seed=3, budget=200, oracle=oracle)
    est = session.run(lw.TruthOracle(pool), 200, 50)
    assert not pool.labels[session.sample().draws.items].any()
    (lo,), (hi,) = est.interval()
    assert lo <= truth <= hi  # a point or near-point interval before the floor
    assert UNSEEN_POSITIVES_BASIS in est.basis


@pytest.mark.parametrize("design", ["importance", "poisson"])
def test_on_score_blocks_the_interval_model_keeps_the_positives_the_scores_expect(design):
    """Probabilities near 1e-4, not scaled: the interval's model (the recalibration's strength held where labels with
    no positive cannot fit it) expects a few positives left and its interval reaches the 6 without the floor; the
    planning model's weakest strength emptied the tail, and only the floor's hundreds of positives covered."""
    import labelwise as lw
    from labelwise.estimators.unseen_positives import UNSEEN_POSITIVES_BASIS

    pool = tail_only_pool(scale=1.0)
    measure = lw.make_measure("accuracy", pool)
    truth = float(lw.true_value(pool, measure)[0])
    session = lw.Session(pool, measure, design, seed=3, budget=200)
    est = session.run(lw.TruthOracle(pool), 200, 50)
    assert not pool.labels[session.sample().draws.items].any()
    (lo,), (hi,) = est.interval()
    assert lo <= truth <= hi
    assert UNSEEN_POSITIVES_BASIS not in est.basis
    assert (1.0 - lo) * pool.n_items < 100  # errors: the 6 tail positives and 6 predicted positives at most


@pytest.mark.parametrize("design", ["importance", "poisson"])
def test_an_estimate_from_another_measures_labels_holds_the_floor(design):
    """Sample reuse: accuracy from a recall session's labels, a plug-in with no model behind it, was a point."""
    import labelwise as lw
    from labelwise.estimators.unseen_positives import (
        UNSEEN_POSITIVES_BASIS,
        unseen_positives_covariance,
    )

    pool = tail_only_pool()
    session = lw.Session(pool, lw.make_measure("recall", pool), design, seed=3, budget=200)
    session.run(lw.TruthOracle(pool), 200, 50)
    accuracy = lw.make_measure("accuracy", pool)
    sample = session.sample()
    assert not pool.labels[sample.draws.items].any()
    est = session.estimate(accuracy)
    (lo,), (hi,) = est.interval()
    assert lo <= float(lw.true_value(pool, accuracy)[0]) <= hi
    assert UNSEEN_POSITIVES_BASIS in est.basis
    # exactly the floor of the unlabeled items, each moving accuracy by -1/N (predicted negative) or +1/N
    unlabeled = np.ones(pool.n_items, dtype=bool)
    unlabeled[sample.draws.items] = False
    move = np.where(pool.preds[unlabeled, 0] == 1, 1.0, -1.0)[:, None]
    floor = unseen_positives_covariance(move, np.ones(move.shape[0]), unlabeled.size - move.shape[0], pool.n_items)
    assert est.cov[0, 0] >= floor[0, 0] * (1 - 1e-9)  # the floor, or the plug-in where it is larger
    if design == "poisson":  # Horvitz-Thompson with every labeled loss 0 but the top 6's: the floor is larger
        np.testing.assert_allclose(est.cov[0, 0], floor[0, 0], rtol=1e-9)



def test_the_floor_reads_the_judged_labels_only():
    """Excluded draws carry a placeholder label 0: on a pool whose labels are all 1 one exclusion read as a label of
    another class and dropped the floor.  The floor reads every answer to a judged draw, further answers too."""
    from labelwise.draws import Draws, Sample

    draws = Draws(np.arange(4), np.ones(4), np.full(4, 0.25))
    sample = Sample(draws, np.array([1, 0, 1, 1]), 3, excluded=np.array([False, True, False, False]))
    np.testing.assert_array_equal(sample.judged_labels, [1, 1, 1])
    answered = Sample(draws, np.array([1, 0, 1, 1]), 3, excluded=np.array([False, True, False, False]),
                      answers=(np.array([1, 2]), np.array([0, 0])))
    np.testing.assert_array_equal(answered.judged_labels, [1, 1, 1, 0])  # the excluded draw's answer dropped
