"""Item side bets (:mod:`labelwise.anytime.side_bets`): exact on enumerated items, valid with a rare worst case."""

from __future__ import annotations

import math

import numpy as np
import pytest

from labelwise.anytime.betting import BOLDEST, Capital, bet_on_batches, boldest_bet
from labelwise.anytime.side_bets import SIDE_COST, SIDE_START, SideBets


def _population(t: np.ndarray):
    """F1's increments per unit weight on 2000 items, at candidates ``t``: 200 predicted positives of small weight
    (120 true positives), 1800 predicted negatives of which 20 carry ten times the common weight, 3 of those and
    30 of the rest false negatives (``num - t den``: TP ``1 - t``, FP and FN ``-t / 2``, TN 0)."""
    group = np.r_[np.zeros(200, int), np.ones(1800, int)]
    inverse = np.r_[np.full(200, 4.0), np.full(1780, 1.0), np.full(20, 0.1)]  # q proportional to these
    q = inverse / inverse.sum()
    weights = 1.0 / (group.size * q)
    group_losses = np.stack([np.stack([1 - t, -t / 2]), np.stack([0 * t, -t / 2])])  # (K, C, G)
    cell = np.r_[np.zeros(120, int), np.ones(80, int), np.ones(30, int), np.zeros(1750, int), np.ones(3, int),
                 np.zeros(17, int)]  # which of its group's loss vectors each item takes
    return group, q, weights, group_losses, cell


def _sides(group, weights, group_losses):
    values = group_losses[group] * weights[:, None, None]  # (N, C, G): every item under every label
    low, high = np.minimum(values.min(axis=(0, 1)), 0.0), np.maximum(values.max(axis=(0, 1)), 0.0)
    return SideBets.build(group, group_losses, weights, (boldest_bet(-low), boldest_bet(high))), low, high


def test_expected_side_bet_equals_its_sum_over_every_item():
    t = np.array([0.2, 0.5, 0.8])
    group, q, weights, group_losses, _ = _population(t)
    side, _, _ = _sides(group, weights, group_losses)
    worst = np.stack([np.maximum(-group_losses.min(axis=1), 0), np.maximum(group_losses.max(axis=1), 0)])
    for bet in (np.array([0.3, 2.0, -1.5]), np.array([-0.05, 0.6, 5.0]), np.array([1.0, -4.0, 0.0])):
        side_of = (bet < 0).astype(int)
        a = worst[side_of, group[:, None], np.arange(3)] * weights[:, None]  # a_i on the bet's side
        on = np.abs(bet) > side.plain[side_of, np.arange(3)]  # within the plain cap: no side bet
        by_item = np.maximum(np.abs(bet) * on * a - SIDE_START, 0.0)
        np.testing.assert_allclose(side.expected(bet), q @ by_item, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(side.expected(bet, 2), q @ by_item**2, rtol=1e-12, atol=1e-15)


def test_many_groups_share_the_worst_loss_of_all():
    rng = np.random.default_rng(2)
    group = rng.integers(0, 20, 300)
    weights = 1.0 / (300 * rng.dirichlet(np.ones(300)))
    group_losses = rng.uniform(-1.0, 1.0, (20, 3, 2))
    side = SideBets.build(group, group_losses, weights, (np.full(2, 0.01), np.full(2, 0.01)))
    assert side.worst.shape == (2, 1, 2)  # one group: every item may take every loss vector
    bet = np.array([5.0, -5.0])
    a = np.stack([np.maximum(-group_losses.min(axis=(0, 1)), 0), np.maximum(group_losses.max(axis=(0, 1)), 0)])
    by_item = np.maximum(np.abs(bet) * a[[0, 1], [0, 1]] * weights[:, None] - SIDE_START, 0.0)
    np.testing.assert_allclose(side.expected(bet), (1.0 / (300 * weights)) @ by_item, rtol=1e-12)


def test_bets_at_the_caps_keep_every_factor_positive_the_null_mean_one_and_the_cost_in_budget():
    group, q, weights, group_losses, cell = _population(np.array([0.3, 0.6, 0.9]))
    side, low, _ = _sides(group, weights, group_losses)
    caps = side.caps(np.array([[100.0], [5000.0]]), 1000.0)  # (2, 2, G): before and after the horizon
    assert np.all(caps[0, 0] > boldest_bet(-low))  # the heavy false negatives would cap the bets below
    assert np.all(caps[:, 1] <= caps[:, 0])  # past the horizon the cost budget per draw shrinks
    for sign in (1.0, -1.0):
        for row in range(2):
            bet = sign * caps[(sign < 0) * 1, row]
            eg = side.expected(bet)
            assert np.all(eg <= (1 - SIDE_START) / 2)
            assert np.all(side.expected(bet, 2) <= 2 * SIDE_COST / (1000.0, 5000.0)[row] * (1 + 1e-9))
            g = side.of_rows(bet[None], *side.reach(np.arange(group.size)))
            for c in range(2):  # every item under each of its labels
                factor = 1 + bet * group_losses[group, c] * weights[:, None] + g - eg
                assert factor.min() >= min(1 - BOLDEST, (1 - SIDE_START) / 2) - 1e-12
            # under the truth's labels the factor's mean is 1 + bet E[X], whatever the side bet
            x = group_losses[group, cell] * weights[:, None]
            np.testing.assert_allclose(q @ (1 + bet * x + g - eg), 1 + bet * (q @ x), rtol=1e-12)
    assert BOLDEST > SIDE_START


@pytest.mark.parametrize("per_row", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_side_bets_keep_uniform_coverage_with_a_rare_heavy_false_negative_and_narrow_the_lower_end(per_row):
    # 2000 runs of 2000 importance draws, batches of 50; each column one run at the true F1, so a column ever
    # excluded is a miss: Ville's inequality bounds the miss rate by alpha, and over R runs the observed rate may
    # exceed it by 3 standard errors at most.  A heavy false negative (weight ~13, probability ~1e-4 per draw)
    # turns up in about a fifth of the runs
    group, q, weights, _, cell = _population(np.zeros(1))
    truth = 240 / (240 + 80 + 33)
    runs, n, alpha = 2000, 2000, 0.05
    rng = np.random.default_rng(5)
    items = rng.choice(group.size, size=(n, runs), p=q)
    batches, ones = np.arange(n) // 50, np.ones(n, int)
    shares = {}
    for t in (truth, truth - 0.08):
        group_losses = np.stack([np.stack([[1 - t], [-t / 2]]), np.stack([[0.0], [-t / 2]])])
        per_weight = group_losses[group, cell][:, 0]  # (N,)
        values = (per_weight * weights)[items]  # (n, runs)
        side, low, high = _sides(group, weights, np.repeat(group_losses, runs, axis=2))
        for name, bets in (("side", side), ("plain", None)):
            rejected, _ = bet_on_batches(Capital.start(runs), values, ones, batches, low, high, alpha, n,
                                         per_row=per_row, side=bets, items=items)
            shares[name, t] = rejected[-1].mean()
        if t == truth:
            heavy_fn = (weights[items] > 10) & (per_weight[items] < 0)
            assert heavy_fn.any(axis=0).mean() > 0.1  # the worst case is exercised
    assert shares["side", truth] <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    # 0.08 below the truth: excluded in far more runs than with the plain bets, which the heavy items cap
    # (0.57 against 0.31 with this seed, batch by batch)
    assert shares["side", truth - 0.08] > shares["plain", truth - 0.08] + 0.15


def test_caps_of_many_rows_are_those_of_each_row_alone():
    group, _, weights, group_losses, _ = _population(np.array([0.3, 0.6, 0.9]))
    side, _, _ = _sides(group, weights, group_losses)
    seen = np.array([0.0, 3.0, 999.0, 1000.0, 1000.0, 1500.0, 4000.0, 4000.0, 250000.0])[:, None]
    by_row = np.concatenate([side.caps(np.array([[k]]), 1000.0) for k in seen[:, 0]], axis=1)
    np.testing.assert_array_equal(side.caps(seen, 1000.0), by_row)
    assert np.unique(by_row[0], axis=0).shape[0] >= 3  # rows past the horizon get smaller caps


def test_the_cost_of_each_size_is_its_expected_squared_side_bet_over_every_item():
    t = np.array([0.2, 0.5, 0.8])
    group, q, weights, group_losses, _ = _population(t)
    side, _, _ = _sides(group, weights, group_losses)
    worst = np.stack([np.maximum(-group_losses.min(axis=1), 0), np.maximum(group_losses.max(axis=1), 0)])
    for s in range(2):
        a = worst[s, group] * weights[:, None]  # (N, G): a_i on this side
        g = np.maximum(side.sizes[s][:, None] * a[None] - SIDE_START, 0.0)  # (L, N, G): every size above plain
        affordable = np.einsum("n,lng->lg", q, g) <= (1 - SIDE_START) / 2
        cost = np.where(affordable, np.einsum("n,lng->lg", q, g**2), np.inf)
        np.testing.assert_allclose(side.cost[s], np.maximum.accumulate(cost, axis=0), rtol=1e-10)
    assert np.isinf(side.cost).any() and np.isfinite(side.cost).any()
