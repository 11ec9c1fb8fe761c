"""Confidence sequences of ratio and affine measures (:mod:`labelwise.anytime.ratio`)."""

from __future__ import annotations

import numpy as np
import pytest

import labelwise as lw
from labelwise.anytime.ratio import (
    GRID,
    _item_groups,
    _kept_interval,
    _terms,
    ratio_forms,
    ratio_sequence,
)
from labelwise.designs import ImportanceDesign
from labelwise.estimators import importance_moments
from labelwise.measures import combine, make_measure
from labelwise.measures.domain import DomainMeasure


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.make_pool(2000, prevalence=0.2, separation=2.0, seed=11)


def _value(form, R):
    return (form.a @ R + form.a0) / (form.b @ R + form.b0)


@pytest.mark.parametrize("name", ["precision", "recall", "f1", "accuracy", "brier"])
def test_ratio_form_reproduces_the_measure(pool, name):
    measure = make_measure(name, pool)
    R = np.random.default_rng(0).uniform(0.1, 0.9, measure.dim)
    R[-1] = max(R[-1], R[0])  # a denominator total at least the numerator's
    (form,) = ratio_forms(measure)
    assert _value(form, R) == pytest.approx(float(measure.value(R)[0]))


def test_ratio_forms_of_domains_and_combinations(pool):
    accuracy = make_measure("accuracy", pool)
    (form,) = ratio_forms(DomainMeasure(accuracy))
    T, s = 0.1, 0.8  # errors over the judgeable share: accuracy 1 - T / s
    assert _value(form, np.array([T, s])) == pytest.approx(1 - T / s)
    both = combine(make_measure("precision", pool), accuracy)
    forms = ratio_forms(both)
    R = np.array([0.2, 0.5, 0.3])
    assert [_value(f, R) for f in forms] == pytest.approx(list(both.value(R)))
    assert ratio_forms(make_measure("mcc", pool)) is None


def test_each_loss_vector_is_bounded_by_the_largest_weight_of_the_items_that_may_take_it():
    tiny = lw.Pool.from_arrays(None, preds=np.array([1, 1, 0, 0]), probs=np.array([0.9, 0.6, 0.3, 0.1]),
                               labels=np.array([1, 0, 1, 0]))
    measure = make_measure("f1", tiny)  # losses (TP, (2 TP + FP + FN) / 2)
    terms, bounds = _terms(*_item_groups(measure, tiny), np.array([1.0, 2.0, 3.0, 4.0]))
    bound_of = lambda loss: np.max(bounds[np.all(terms == loss, axis=1)])
    assert bound_of([1.0, 1.0]) == 2.0  # a true positive: only the predicted positives 0, 1 may be one
    assert bound_of([0.0, 0.5]) == 4.0  # a false positive or negative: any item
    assert bound_of([0.0, 0.0]) == 4.0  # a true negative (items 2, 3) or an excluded item (any)
    assert len(terms) == len(bounds) and {tuple(t) for t in terms} == {(1.0, 1.0), (0.0, 0.5), (0.0, 0.0)}


def _run(pool, measure, q, rng, batches=20, size=50, weight_bound=None):
    """Importance-sampled draws from ``q`` (weights p / q) and the sequence after each batch (default bound: each
    item's own weight)."""
    N = pool.n_items
    items = rng.choice(N, size=batches * size, p=q)
    losses = measure.loss(pool.outputs(items), pool.labels[items])
    weights = 1.0 / (N * q[items])
    bound = 1.0 / (N * q) if weight_bound is None else weight_bound
    lower, upper = ratio_sequence(measure, pool, losses, weights, np.ones(items.size, int),
                                  np.repeat(np.arange(batches), size), bound, 0.95, batches * size, items=items)
    return losses, weights, lower[:, 0], upper[:, 0]


@pytest.mark.parametrize("name", ["f1", "accuracy"])
def test_sequence_covers_at_every_batch_under_importance_sampling(pool, name):
    _assert_uniform_coverage(pool, make_measure(name, pool), defensive=0.3, seed=5, runs=40)


@pytest.mark.slow
def test_sequence_covers_at_every_batch_on_an_imbalanced_pool():
    """The bets on the running variance and each item's own bound keep the level where rare terms dominate."""
    rare = lw.make_pool(4000, prevalence=0.02, separation=2.5, seed=6)
    _assert_uniform_coverage(rare, make_measure("f1", rare), defensive=0.1, seed=12, runs=60)


def _assert_uniform_coverage(pool, measure, defensive: float, seed: int, runs: int) -> None:
    """The sequence under importance sampling covers the truth at every batch in a 95% share of the runs,
    within 3 binomial standard errors."""
    truth = float(lw.true_value(pool, measure)[0])
    q = ImportanceDesign(defensive=defensive).proposal(pool, measure)
    rng = np.random.default_rng(seed)
    covered = [np.all((lo <= truth) & (truth <= hi)) for _, _, lo, hi in (_run(pool, measure, q, rng)
                                                                          for _ in range(runs))]
    assert np.mean(covered) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)


def test_each_items_weight_bound_narrows_the_sequence_of_an_imbalanced_pool():
    rare = lw.make_pool(4000, prevalence=0.02, separation=2.5, seed=6)
    measure = make_measure("f1", rare)
    q = ImportanceDesign(defensive=0.1).proposal(rare, measure)
    widths = []
    for bound in (None, 1 / (rare.n_items * q.min())):  # each item's weight, the largest weight for every item
        _, _, lo, hi = _run(rare, measure, q, np.random.default_rng(2), weight_bound=bound)
        widths.append(hi[-1] - lo[-1])
    # the items likely positive have weights near 1/10 of the largest: the upper side tightens by far
    assert widths[0] < 0.7 * widths[1]


def test_passive_sequence_is_at_most_a_bit_wider_than_the_normal_interval(pool):
    measure = make_measure("f1", pool)
    q = np.full(pool.n_items, 1.0 / pool.n_items)
    rng = np.random.default_rng(8)
    ratios = []
    for _ in range(5):
        losses, weights, lo, hi = _run(pool, measure, q, rng)
        _, _, cov = importance_moments(measure, losses, weights)
        ratios.append((hi[-1] - lo[-1]) / (2 * 1.96 * np.sqrt(cov[0, 0])))
    # Waudby-Smith & Ramdas's tuned bets cost about sqrt(2 log 40) / 1.96 = 1.39 at the horizon
    assert 1.0 < np.mean(ratios) < 1.6


def test_finite_pool_sequence_covers_and_tightens_as_the_pool_is_used_up():
    small = lw.make_pool(300, prevalence=0.3, separation=2.0, seed=2)
    measure = make_measure("f1", small)
    truth = float(lw.true_value(small, measure)[0])
    rng = np.random.default_rng(4)
    batches = np.repeat(np.arange(6), 50)
    ones = np.ones(300)
    covered, narrower = [], []
    for _ in range(30):
        items = rng.permutation(300)  # every item once, uniformly without replacement
        losses = measure.loss(small.outputs(items), small.labels[items])
        args = (measure, small, losses, ones, ones.astype(int), batches, 1.0, 0.95, 300)
        lo, hi = ratio_sequence(*args, without_replacement=True)
        lo_r, hi_r = ratio_sequence(*args)
        covered.append(np.all((lo <= truth) & (truth <= hi)))
        narrower.append(hi[-1, 0] - lo[-1, 0] < 0.5 * (hi_r[-1, 0] - lo_r[-1, 0]))
    assert np.mean(covered) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 30)
    assert all(narrower)  # with the whole pool labeled, the finite-pool sequence has all but collapsed


def test_the_interval_reaches_a_grid_step_beyond_the_kept_values_and_an_empty_sequence_is_flagged():
    grid = np.linspace(0.0, 1.0, GRID)
    kept = np.zeros((3, GRID), dtype=bool)
    kept[0, 261:300] = True  # the first kept value one step above 0.325, where a true value may sit
    kept[1] = True
    lower, upper, emptied = _kept_interval(grid, kept, 0.0, 1.0)
    # the true F1 of a pool at 0.325 comes out one ulp below it (0.32499999999999996) and grid[261] - step one
    # ulp above: the widening still holds it, and is no wider than the step and the margin
    assert grid[261] - (grid[1] - grid[0]) > 0.32499999999999996
    assert lower[0] <= 0.32499999999999996 and lower[0] > grid[260] - 1e-8
    assert upper[0] == pytest.approx(grid[300], abs=1e-8) and upper[0] >= grid[300]
    np.testing.assert_array_equal(emptied, [False, False, True])
    np.testing.assert_array_equal(np.c_[lower, upper][1:], [[0.0, 1.0], [0.0, 1.0]])  # whole range; only row 2 flagged
