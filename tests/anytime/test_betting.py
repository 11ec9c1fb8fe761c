"""The betting confidence sequence (:mod:`labelwise.anytime.betting`) against hand-computed capital."""

from __future__ import annotations

import math

import numpy as np

from labelwise.anytime.betting import BOLDEST, TRUNCATION, rejected_by_batch


def test_one_batch_rejects_exactly_when_the_hedged_capital_reaches_one_over_alpha():
    # one batch: the bet comes from the widest variance the bounds allow, (spread / 2)^2 = 1, and
    # sqrt(2 log 40) > TRUNCATION / 1, so the bet is TRUNCATION on both sides:
    # capital = (1.75^c + 0.25^c) / 2 for c draws of +1, which first reaches 20 at c = 7
    assert math.sqrt(2 * math.log(40)) > TRUNCATION == 0.75
    low, high = np.array([-1.0]), np.array([1.0])
    for c, expected in ((6, False), (7, True)):
        out = rejected_by_batch(np.ones((1, 1)), np.array([c]), np.zeros(1, int), low, high, 0.05, 1.0)
        assert out.shape == (1, 1) and bool(out[0, 0]) is expected
    assert (1.75**6 + 0.25**6) / 2 < 20 <= (1.75**7 + 0.25**7) / 2


def _capital_by_hand(values, counts, batches, low, high, alpha, horizon):
    """Scalar re-computation of the hedged capital of one candidate after each batch (logs)."""
    out, past = [], []
    spread = high - low
    for b in sorted(set(batches)):
        n = sum(c for _, c in past)
        mean = sum(x * c for x, c in past) / max(n, 1)
        var = (sum(c * x * x for x, c in past) - n * mean**2) / n if n else (spread / 2) ** 2
        bet = math.sqrt(2 * math.log(2 / alpha) / (var * max(horizon, n, 1)))
        if past:  # risk at most TRUNCATION on the worst increment seen, BOLDEST on the worst the bounds allow
            worst_low, worst_high = min(min(x for x, _ in past), 0.0), max(max(x for x, _ in past), 0.0)
            plus = min(bet, BOLDEST / -low, TRUNCATION / max(-worst_low, 1e-300))
            minus = min(bet, BOLDEST / high, TRUNCATION / max(worst_high, 1e-300))
        else:
            plus, minus = min(bet, TRUNCATION / -low), min(bet, TRUNCATION / high)
        rows = [(x, c) for x, c, bb in zip(values, counts, batches) if bb == b]
        out.append((sum(c * math.log(1 + plus * x) for x, c in rows), sum(c * math.log(1 - minus * x) for x, c in rows)))
        past += rows
    return np.cumsum(np.array(out), axis=0)


def test_capital_matches_a_scalar_recomputation_over_batches():
    rng = np.random.default_rng(3)
    values = rng.uniform(-0.3, 0.9, 12)
    counts = rng.integers(1, 4, 12)
    batches = np.repeat([0, 1, 2], 4)
    low, high, alpha = -0.5, 1.0, 0.1
    logs = _capital_by_hand(values, counts, batches, low, high, alpha, horizon=5)
    hedged = np.logaddexp(logs[:, 0], logs[:, 1]) - math.log(2)
    expected = np.maximum.accumulate(hedged) >= math.log(1 / alpha)
    got = rejected_by_batch(values[:, None], counts, batches, np.array([low]), np.array([high]), alpha, 5)[:, 0]
    np.testing.assert_array_equal(got, expected)
    assert expected.any() and not expected.all()  # the case exercises both outcomes


def test_zero_increments_reject_nothing_and_the_exclusion_is_a_running_intersection():
    values = np.zeros((6, 2))
    values[:2, 1] = 1.0  # a burst for the second candidate, then nothing
    out = rejected_by_batch(values, np.array([40, 40, 1, 1, 1, 1]), np.array([0, 1, 2, 3, 4, 5]),
                            np.array([-1.0, -1.0]), np.array([1.0, 1.0]), 0.05, 10)
    assert not out[:, 0].any()
    assert out[1, 1] and out[-1, 1]  # once excluded, excluded at every later batch


def test_per_row_bets_are_batches_of_one_row_checked_at_every_row():
    rng = np.random.default_rng(7)
    values = rng.uniform(-0.3, 0.6, (40, 3))
    counts = np.ones(40, int)
    batches = np.repeat(np.arange(4), 10)
    low, high = np.array([-0.5, -0.4, -0.3]), np.array([1.0, 0.8, 0.6])
    per_row = rejected_by_batch(values, counts, batches, low, high, 0.1, 20, per_row=True)
    single = rejected_by_batch(values, counts, np.arange(40), low, high, 0.1, 20)
    np.testing.assert_array_equal(per_row, single[9::10])
    assert per_row.any() and not per_row.all()


def test_bold_bets_on_rare_worst_cases_keep_uniform_coverage():
    # the regime the BOLDEST truncation is for: an importance-weighted increment whose worst case (weight 10)
    # turns up about once in 2000 draws; each column is one run whose true mean is the candidate 0, so a column
    # ever excluded is a miss.  Ville's inequality bounds the miss rate by alpha; over R runs the observed rate
    # may exceed it by 3 standard errors at most
    rng = np.random.default_rng(11)
    n, runs, alpha, rare, worst = 1000, 4000, 0.05, 0.0005, 10.0
    common = rare * worst / (1 - rare)  # mean zero: rare * worst = (1 - rare) * common
    signs = np.where(np.arange(runs) % 2 == 0, 1.0, -1.0)  # half the runs test the minus side's bets
    values = np.where(rng.random((n, runs)) < rare, -worst, common) * signs
    low, high = np.where(signs > 0, -worst, -common), np.where(signs > 0, common, worst)
    missed = rejected_by_batch(values, np.ones(n, int), np.arange(n) // 50, low, high, alpha, n)[-1]
    assert missed.mean() <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
