"""Good-Turing, Chao1, iChao1, sample coverage and the rare positives' CV: exact values by hand and enumerated."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from labelwise.discover.richness import (
    chao1_unseen,
    chao1_variance,
    good_turing_unseen,
    ichao1,
    rare_cv2,
    sample_coverage,
)


def test_frequency_counts_and_chao1_by_hand(stats):
    n, seen, f1, f2 = stats(np.array([1, 1, 2, 3, 0]))
    assert (n, seen, f1, f2) == (7, 4, 2, 1)
    assert chao1_unseen(n, f1, f2) == pytest.approx(6 / 7 * 2 * 1 / (2 * 2))
    assert good_turing_unseen(n, f1) == pytest.approx(2 / 7)
    assert good_turing_unseen(0, 0) == 0.0


def test_good_turing_expectation_enumerated(stats):
    """E[f1/n] = sum_i p_i (1 - p_i)^(n-1) over every sequence of n = 4 draws from three species."""
    p = np.array([0.5, 0.3, 0.2])
    n = 4
    expected = 0.0
    for draws in itertools.product(range(3), repeat=n):
        counts = np.bincount(draws, minlength=3)
        _, _, f1, _ = stats(counts)
        expected += np.prod(p[list(draws)]) * good_turing_unseen(n, f1)
    assert expected == pytest.approx(float(np.sum(p * (1 - p) ** (n - 1))))


def test_ichao1_by_hand():
    """f = (5, 2, 2, 1), T = 20: Chao1 0.95 * 5 * 4 / 6, plus 17/80 * 2 * (5 - 17/38 * 2 * 2)."""
    f0, _ = ichao1(20, np.array([5.0, 2.0, 2.0, 1.0]))
    assert f0 == pytest.approx(0.95 * 5 * 4 / 6 + 17 / 80 * 2 * (5 - 17 / 38 * 4))
    # no quadrupleton: f4 taken as 1
    assert ichao1(20, np.array([5.0, 2.0, 2.0, 0.0]))[0] == pytest.approx(f0)


def test_ichao1_is_chao1_when_the_rare_look_equally_popular():
    """f1 <= (T-3)/(2(T-1)) f2 f3 / f4 (the pattern of a single Poisson rate): no iChao1 term."""
    f = np.array([2.0, 4.0, 4.0, 2.0])
    f0, variance = ichao1(50, f)
    assert f0 == pytest.approx(float(chao1_unseen(50, 2.0, 4.0)))
    assert variance == pytest.approx(float(chao1_variance(50, 2.0, 4.0)))


def test_ichao1_variance_is_the_delta_method():
    """Poisson delta method: Chao's variance with the gradient of the whole estimate (central differences)."""
    f = np.array([9.0, 3.0, 4.0, 2.0])
    units = 40.0
    step = 1e-5
    grad = np.array([(ichao1(units, f + step * e)[0] - ichao1(units, f - step * e)[0]) / (2 * step)
                     for e in np.eye(4)])
    a = (units - 1) / units
    chao_grad = np.array([a * (2 * f[0] - 1) / (2 * (f[1] + 1)), -a * f[0] * (f[0] - 1) / (2 * (f[1] + 1) ** 2)])
    own_term = float(chao1_variance(units, f[0], f[1])) - float(np.sum(f[:2] * chao_grad ** 2))
    assert ichao1(units, f)[1] == pytest.approx(own_term + float(np.sum(f * grad ** 2)), rel=1e-6)


def test_sample_coverage_by_hand():
    assert sample_coverage(10, 4, 2) == pytest.approx(1 - 0.4 * 36 / 40)
    assert sample_coverage(10, 0, 2) == 1.0
    assert sample_coverage(0, 0, 0) == 1.0
    with np.errstate(all="raise"):  # one answer, a singleton: nothing returned twice, coverage 0 (no 0/0)
        assert sample_coverage(1, 1, 0) == 0.0


def test_rare_cv2_by_hand():
    """f1 = 4, f2 = 2, f4 = 1: S = 7, n = 12, C = 2/3, sum j(j-1) f_j = 16."""
    f = np.zeros(10)
    f[[0, 1, 3]] = [4, 2, 1]
    assert rare_cv2(f) == pytest.approx(7 / (2 / 3) * 16 / (12 * 11) - 1)
    f[:] = 0
    f[1] = 10  # everything returned twice: no spread
    assert rare_cv2(f) == 0.0
