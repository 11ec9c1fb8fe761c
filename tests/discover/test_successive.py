"""Successive sampling by Rosén's order-sampling approximation, against enumerations of the crowd's answers."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from labelwise.discover.crowd import SimulatedCrowd
from labelwise.discover.hierarchy import Hierarchy
from labelwise.discover.successive import RaceRows, expected_new, race_time


def enumerated_new(weights: np.ndarray, found: np.ndarray, k: int) -> float:
    """Expected unfound positives among ``k`` draws without replacement by weight: every ordered answer."""
    total = 0.0
    for answer in itertools.permutations(range(weights.size), k):
        chance, left = 1.0, weights.sum()
        for i in answer:
            chance *= weights[i] / left
            left -= weights[i]
        total += chance * np.sum(~found[list(answer)])
    return total


def one_node(weights: np.ndarray, found: np.ndarray, k: int, share: float = 1.0) -> RaceRows:
    unfound = ~found
    return RaceRows(1, np.zeros(int(found.sum()), dtype=np.int64), weights[found], np.array([[share]]),
                    np.zeros(int(unfound.sum()), dtype=np.int64), weights[unfound], np.ones(int(unfound.sum())),
                    np.array([k]))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_equal_weights_are_exact(k):
    """Equal popularity: every positive is in the answer with chance k / N, as the enumeration says."""
    weights = np.full(6, 0.3)
    found = np.array([True, True, False, False, False, False])
    rows = one_node(weights, found, k)
    assert expected_new(rows, race_time(rows))[0, 0] == pytest.approx(k * 4 / 6, rel=1e-9)
    assert enumerated_new(weights, found, k) == pytest.approx(k * 4 / 6, rel=1e-12)


@pytest.mark.parametrize("zipf", [0.5, 1.0, 1.5])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_unequal_weights_near_the_enumeration(zipf, k):
    """Rosén's approximation on 7 Zipf-weighted positives, 3 of them found: within 0.1 of the exact count."""
    weights = (1.0 + np.array([3, 0, 5, 1, 6, 2, 4])) ** -zipf
    found = np.array([True, False, False, True, False, True, False])
    rows = one_node(weights, found, k)
    assert expected_new(rows, race_time(rows))[0, 0] == pytest.approx(enumerated_new(weights, found, k), abs=0.1)


def test_the_threshold_solves_its_equation_and_saturates():
    """xi gives k expected arrivals (found ones scaled by their share); k at or above the eligible count: all."""
    weights = np.array([2.0, 1.0, 0.5, 0.1, 0.05])
    found = np.array([True, True, False, False, False])
    rows = one_node(weights, found, 3, share=0.5)
    xi = race_time(rows)
    found_part, _, unfound_part, _ = rows.arrivals(xi)
    assert (found_part + unfound_part)[0, 0] == pytest.approx(3.0, rel=1e-9)
    full = one_node(weights, found, 4, share=0.5)  # 0.5 * 2 + 3 = 4 eligible in the mean
    assert np.isinf(race_time(full)[0, 0]) and expected_new(full, race_time(full))[0, 0] == 3.0


def test_crowd_expected_new_is_exact_at_equal_popularity():
    """Equal popularity, F found and an exclude list of l <= F: k G / (G + F - l) new, as the crowd draws them;
    l >= F: min(k, G).  Nodes: the root (8 positives) and a = x (5 of them)."""
    frame = pd.DataFrame({"a": ["x"] * 5 + ["y"] * 3 + ["x", "y"]})
    hierarchy = Hierarchy.from_frame(frame, ["a"])
    positive = np.array([True] * 8 + [False, False])
    crowd = SimulatedCrowd(hierarchy, positive, np.ones(10))
    found = np.zeros(10, dtype=bool)
    found[[0, 1, 5]] = True  # two found in x, one in y
    k, l = np.array([1, 2, 4, 4]), np.array([0, 1, 1, 3])
    gains = crowd.expected_new(found, k, l)
    x = hierarchy.item_node[0, 1]
    assert gains[0] == pytest.approx(k * 5 / (5 + 3 - np.minimum(l, 3)))
    assert gains[x] == pytest.approx([1 * 3 / 5, 2 * 3 / 4, 3.0, 3.0])  # k >= eligible: every unfound one


def enumerated_new_with_list(weights: np.ndarray, found: np.ndarray, k: int, listed: int) -> float:
    """:func:`enumerated_new` averaged over every exclude list of ``listed`` found positives, drawn uniformly."""
    found_at = np.flatnonzero(found)
    lists = list(itertools.combinations(found_at, listed))
    total = 0.0
    for excluded in lists:
        keep = np.ones(weights.size, dtype=bool)
        keep[list(excluded)] = False
        total += enumerated_new(weights[keep], found[keep], min(k, int(keep.sum())))
    return total / len(lists)


@pytest.mark.parametrize("zipf, k, listed, tolerance", [
    (1.0, 1, 1, 0.08), (1.5, 1, 1, 0.14), (2.0, 1, 1, 0.20), (1.5, 1, 2, 0.11), (1.0, 3, 1, 0.015),
    (1.5, 3, 2, 0.015)])
def test_an_exclude_list_by_its_mean_effect_is_approximate_at_small_k(zipf, k, listed, tolerance):
    """The crowd's exclude list replaced by its mean effect (each found positive eligible with chance 1 - l/F),
    the three most popular of 7 Zipf-weighted positives found, against the exact mean over every list: over by
    7-18% at k = 1 (the more skewed, the more), within 1% at k = 3.  What the benchmark's "true" gains are worth."""
    weights = (1.0 + np.arange(7)) ** -zipf
    found = np.array([True, True, True, False, False, False, False])
    rows = one_node(weights, found, k, share=1.0 - listed / 3)
    exact = enumerated_new_with_list(weights, found, k, listed)
    approx = expected_new(rows, race_time(rows))[0, 0]
    assert approx == pytest.approx(exact, rel=tolerance)
