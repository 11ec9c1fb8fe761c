"""Draws of items labeled in earlier batches (:mod:`labelwise.anytime.known_items`): exact on enumerated paths."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import labelwise as lw
from labelwise.anytime import known_items, weight_bound
from labelwise.anytime.betting import Capital, bet_on_batches, boldest_bet
from labelwise.anytime.known_items import LabeledItems
from labelwise.anytime.ratio import GRID, RatioSequence, ratio_sequence
from labelwise.anytime.side_bets import SIDE_START, SideBets
from labelwise.measures import make_measure

#: A true positive, a false positive and a false negative: F1 = 2 / (2 + 1 + 1) = 1/2, a grid point.
PREDS, LABELS = np.array([1, 1, 0]), np.array([1, 0, 1])
#: A fixed proposal far from uniform (the false negative is the rare, heavy one).
Q = np.array([0.5, 0.4, 0.1])
BATCHES = (0, 0, 1, 1, 2, 2)  # three batches of two draws


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.Pool.from_arrays(None, preds=PREDS, scores=PREDS.astype(float), labels=LABELS)


def test_rows_on_items_labeled_before_their_batch_and_the_sums_before_each_batch():
    losses = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 2.0], [3.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    items = np.array([4, 1, 4, 2, 1, 0])
    batches = np.array([0, 0, 3, 3, 3, 7])  # batch labels need not be consecutive
    q = np.array([0.1, 0.2, 0.3, 0.15, 0.25])
    start = LabeledItems.start(5, 2)
    draws, after = start.by_batch(losses[:2], items[:2], batches[:2], q)  # a first call, resumed below
    np.testing.assert_array_equal(draws.known, [False, False])
    draws, after = after.by_batch(losses[2:], items[2:], batches[2:], q)
    # item 4 and item 1 were labeled in batch 0; item 2 first appears in batch 3, item 0 in batch 7
    np.testing.assert_array_equal(draws.known, [True, False, True, False])
    np.testing.assert_array_equal(draws.batch, [0, 0, 0, 1])
    np.testing.assert_array_equal(draws.count, [2, 3])
    np.testing.assert_allclose(draws.loss_sum, [[1.0, 3.0], [4.0, 3.0]])
    np.testing.assert_allclose(draws.mass, [0.45, 0.75])
    assert after.count == 4 and np.isclose(after.mass, 0.85)
    np.testing.assert_array_equal(after.labeled, [True, True, True, False, True])
    # c_K of F1-like (l0 - t l1) at t = 0.5: (1 - 1.5) / (5 * 0.45) before batch 3, (4 - 1.5) / (5 * 0.75) before 7
    shared = draws.shared_increment(np.array([1.0, 0.0]), 0.0, np.array([0.0, 1.0]), 0.0, np.array([0.5]), 5)
    np.testing.assert_allclose(shared[:, 0], [-0.5 / 2.25, 2.5 / 3.75])


def _capital_over_every_path(pool, known_labels: bool) -> tuple[np.ndarray, np.ndarray]:
    """The probability of each of the 3^6 paths of six i.i.d. draws from Q, and its capital at every candidate."""
    measure = make_measure("f1", pool)
    losses = measure.loss(pool.outputs(), LABELS)
    weights = 1.0 / (pool.n_items * Q)
    start = RatioSequence.start(measure, pool, weights, 0.95, 6.0, known_labels=known_labels)
    probability, capital = [], []
    for path in itertools.product(range(Q.size), repeat=len(BATCHES)):
        items = np.array(path)
        after, *_ = start.advance(losses[items], weights[items], np.ones(items.size, int), np.array(BATCHES), items)
        probability.append(np.prod(Q[items]))
        capital.append(np.exp(after.capitals[0].log_capital))
    return np.array(probability), np.array(capital)


TRUTH, BELOW = GRID // 2, GRID // 2 - 160  # candidates F1 = 1/2 (the truth) and 0.3


def test_under_the_truth_the_capital_is_a_martingale_over_every_path(pool):
    # Ville's inequality needs E[K] <= 1 at the true value; fair bets keep it at one exactly
    probability, capital = _capital_over_every_path(pool, known_labels=True)
    _, plain = _capital_over_every_path(pool, known_labels=False)
    assert probability.sum() == pytest.approx(1.0, abs=1e-12)
    assert probability @ capital[:, TRUTH] == pytest.approx(1.0, abs=1e-12)
    assert probability @ plain[:, TRUTH] == pytest.approx(1.0, abs=1e-12)
    # the case has content: the known draws changed the capital on many paths, and below the truth it grows
    assert np.sum(~np.isclose(capital[:, TRUTH], plain[:, TRUTH], rtol=1e-9)) > 100
    assert probability @ capital[:, BELOW] > 1.5


def test_known_draws_that_take_the_known_items_share_of_the_mean_break_the_martingale(pool, monkeypatch):
    # the shared increment is the known items' increments averaged under q (their sum over N, divided by their
    # mass Q_K); without the division (a plausible slip: the known items' share of the mean) the factors' mean
    # under the truth is no longer one, and the same enumeration shows it
    def share_of_mean(self, a, a0, b, b0, grid, n_items):
        num, den = self.loss_sum @ a + a0 * self.count, self.loss_sum @ b + b0 * self.count
        return (num[:, None] - grid * den[:, None]) / n_items

    monkeypatch.setattr(known_items.KnownDraws, "shared_increment", share_of_mean)
    probability, capital = _capital_over_every_path(pool, known_labels=True)
    assert abs(probability @ capital[:, TRUTH] - 1.0) > 1e-3


def test_known_draws_narrow_the_sequence_of_importance_sessions():
    # ten importance sessions of 600 labels on a 1:20 pool, each sequence computed on the same draws with and
    # without the known items' mean: the draws of labeled items (about a quarter of the draws) stop moving the
    # capital at random, so the final interval is narrower on average by more than three standard errors of the
    # paired differences (with these seeds: in all ten runs, by 0.014 on average)
    pool = lw.make_pool(4000, prevalence=0.05, separation=2.0, seed=3)
    measure = make_measure("f1", pool)
    widths = []
    for seed in range(10):
        session = lw.Session(pool, measure, "importance", seed=seed, budget=600)
        session.run(lw.oracle.TruthOracle(pool), 600, 50)
        sample = session.sample()
        d = sample.draws
        table = (session.sampler.losses(measure, sample), d.weight, d.count, d.round)
        bounds = [ratio_sequence(measure, pool, *table, weight_bound(session.sampler), 0.95, 600, items=d.items,
                                 known_labels=known) for known in (True, False)]
        widths.append([upper[-1, 0] - lower[-1, 0] for lower, upper in bounds])
    difference = np.diff(widths, axis=1)[:, 0]  # plain minus known
    assert difference.mean() > 3 * difference.std(ddof=1) / np.sqrt(difference.size)


def test_the_bets_are_capped_so_a_known_draw_costs_at_most_side_start_of_the_capital():
    # Ten heavy items and one light one were labeled (K); the light one is drawn again. Its shared increment
    # c_K = sum_K x_i / (N Q_K) is the heavy items' mean, 5.5 times the light item's own reach, and no side bet
    # covers it (the light item's g is 0). After a first batch that leans every bet positive, an uncapped bet
    # takes 1 + lam c_K below zero (the log capital turns NaN); capped, the factor stays above
    # 1 - SIDE_START - E_q[g] >= (1 - SIDE_START) / 2 (module docstring of labelwise.anytime.side_bets).
    n = 1000
    q = np.ones(n)
    q[:10] = 0.1
    q /= q.sum()
    w = 1.0 / (n * q)
    low, high = np.array([-w.max()]), np.array([w.max()])
    side = SideBets.build(np.zeros(n, dtype=int), np.array([[[-1.0], [1.0]]]), w,
                          (boldest_bet(-low), boldest_bet(high)))
    shared = -11.0 / (n * q[:11].sum())  # every item of K at increment -w_i
    assert shared < -5 * w[10]
    items, batches = np.array([11, 12, 10]), np.array([0, 0, 1])
    values = np.array([[w[11]], [w[12]], [shared]])
    counts = np.ones(3, dtype=int)
    before = bet_on_batches(Capital.start(1), values[:2], counts[:2], batches[:2], low, high, 0.05, 1.0,
                            side=side, items=items[:2])[1]
    after = bet_on_batches(before, values[2:], counts[2:], batches[2:], low, high, 0.05, 1.0, side=side,
                           items=items[2:], shared=np.array([[shared]]))[1]
    assert np.all(np.isfinite(after.log_capital))
    assert np.all(after.log_capital - before.log_capital >= np.log((1 - SIDE_START) / 2) - 1e-12)
