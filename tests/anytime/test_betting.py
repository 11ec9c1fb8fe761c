"""The betting confidence sequence (:mod:`labelwise.anytime.betting`) against hand-computed capital."""

from __future__ import annotations

import math

import numpy as np

from labelwise.anytime.betting import (
    BOLDEST,
    SPLIT,
    TRUNCATION,
    Capital,
    bet_on_batches,
    rejected_by_batch,
)


def test_the_capital_of_bets_on_ones_reaches_one_over_alpha_at_the_hand_computed_draw():
    # batch 0: no earlier increment, no bet.
    # batch 1: after three +1s the mean's t-statistic is infinite (no spread), so the whole bet is on the plus
    # side; the variance estimate 0 makes the plug-in huge and the truncation sets it: BOLDEST / 1 (no increment
    # below 0 was seen).  Capital 1.99^c, which first reaches 1 / alpha = 20 at c = 5
    low, high = np.array([-1.0]), np.array([1.0])
    for c, expected in ((4, False), (5, True)):
        out = rejected_by_batch(np.ones((2, 1)), np.array([3, c]), np.array([0, 1]), low, high, 0.05, 1.0)
        assert out.shape == (2, 1) and not out[0, 0] and bool(out[1, 0]) is expected
    assert BOLDEST == 0.99 and 1.99**4 < 20 <= 1.99**5


def _capital_by_hand(values, counts, batches, low, high, alpha, horizon):
    """Scalar re-computation of the log capital of one candidate after each batch."""
    out, past = [], []
    for b in sorted(set(batches)):
        n = sum(c for _, c in past)
        mean = sum(x * c for x, c in past) / max(n, 1)
        deviations = sum(c * x * x for x, c in past) - n * mean**2
        # each side's variance: the earlier increments and one pseudo-observation at that side's bound
        size_plus, size_minus = (math.sqrt(2 * math.log(1 / alpha) / ((deviations + bound**2) / (n + 1)
                                                                       * max(horizon, n, 1))) for bound in (low, high))
        bet = 0.0  # before any increment
        if past:  # risk at most TRUNCATION on the worst increment seen, BOLDEST on the worst the bounds allow
            worst_low, worst_high = min(min(x for x, _ in past), 0.0), max(max(x for x, _ in past), 0.0)
            plus = min(size_plus, BOLDEST / -low, TRUNCATION / max(-worst_low, 1e-300))
            minus = min(size_minus, BOLDEST / high, TRUNCATION / max(worst_high, 1e-300))
            share = 0.5 * (1 + math.erf(SPLIT * mean * n / math.sqrt(deviations) / math.sqrt(2)))  # Phi(SPLIT t)
            bet = share * plus - (1 - share) * minus
        rows = [(x, c) for x, c, bb in zip(values, counts, batches) if bb == b]
        out.append(sum(c * math.log(1 + bet * x) for x, c in rows))
        past += rows
    return np.cumsum(out)


def test_capital_matches_a_scalar_recomputation_over_batches():
    rng = np.random.default_rng(3)
    values = rng.uniform(-0.3, 0.9, 12)
    counts = rng.integers(1, 4, 12)
    batches = np.repeat([0, 1, 2], 4)
    low, high, alpha = -0.5, 1.0, 0.1
    logs = _capital_by_hand(values, counts, batches, low, high, alpha, horizon=5)
    expected = np.maximum.accumulate(logs) >= math.log(1 / alpha)
    got, capital = bet_on_batches(Capital.start(1), values[:, None], counts, batches, np.array([low]),
                                  np.array([high]), alpha, 5)
    np.testing.assert_array_equal(got[:, 0], expected)
    np.testing.assert_allclose(capital.log_capital, logs[-1:], rtol=1e-12)
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


def test_bets_on_a_rare_worst_case_keep_uniform_coverage_and_detect_a_shifted_mean():
    # an importance-weighted increment whose worst case (weight 10) turns up once in 100 draws, as the bold
    # truncation and the signed bets meet it; each column is one run whose true mean is the candidate 0, so a
    # column ever excluded is a miss.  Ville's inequality bounds the miss rate by alpha; over R runs the
    # observed rate may exceed it by 3 standard errors at most (betting row by row it comes close to alpha)
    rng = np.random.default_rng(11)
    n, runs, alpha, rare, worst = 2000, 4000, 0.05, 0.01, 10.0
    common = rare * worst / (1 - rare)  # mean zero: rare * worst = (1 - rare) * common
    signs = np.where(np.arange(runs) % 2 == 0, 1.0, -1.0)  # half the runs test the bets against a high mean
    values = np.where(rng.random((n, runs)) < rare, -worst, common) * signs
    low, high = np.where(signs > 0, -worst, -common), np.where(signs > 0, common, worst)
    batches, ones = np.arange(n) // 50, np.ones(n, int)
    tolerance = alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    for per_row in (False, True):
        missed = rejected_by_batch(values, ones, batches, low, high, alpha, n, per_row=per_row)[-1]
        assert missed.mean() <= tolerance
    # the same runs with the mean moved by 0.1 (a tenth of a standard deviation): mostly excluded
    shift = 0.1 * signs
    assert rejected_by_batch(values + shift, ones, batches, low - 0.1, high + 0.1, alpha, n)[-1].mean() > 0.5


def test_the_sharp_split_excludes_a_wrong_candidate_more_often_than_phi_of_z(monkeypatch):
    # the runs of the rare-worst-case test, all with the mean moved 0.05 below the candidate (0.05 standard
    # deviations): the sharper split commits the bets to the side the increments favour sooner.  Both splits are
    # valid (test above); here the sharper one must exclude more runs by 2000 draws, by more than 3 standard
    # errors of a difference of two proportions over the runs
    from labelwise.anytime import betting

    rng = np.random.default_rng(5)
    n, runs, alpha, rare, worst, shift = 2000, 2000, 0.05, 0.01, 10.0, 0.05
    common = rare * worst / (1 - rare)
    values = np.where(rng.random((n, runs)) < rare, -worst, common) - shift
    low, high = np.full(runs, -worst - shift), np.full(runs, common)
    batches, ones = np.arange(n) // 50, np.ones(n, int)
    rates = {}
    for split in (1.0, SPLIT):
        monkeypatch.setattr(betting, "SPLIT", split)
        rates[split] = rejected_by_batch(values, ones, batches, low, high, alpha, n)[-1].mean()
    p = (rates[1.0] + rates[SPLIT]) / 2
    assert SPLIT > 1.0 and rates[SPLIT] - rates[1.0] > 3 * math.sqrt(2 * p * (1 - p) / runs)
