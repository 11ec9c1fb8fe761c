"""Tests of score-based stratification in :mod:`labelwise.partition`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from labelwise.partition import Strata, csf_bins, make_strata, quantile_bins

BINNERS = {"csf": csf_bins, "quantile": quantile_bins}


def check_partition(scores: np.ndarray, a: np.ndarray, n_strata: int) -> int:
    """Assert the invariants of a score partition; return the number of strata."""
    assert a.shape == scores.shape
    assert a.dtype.kind == "i"
    k = int(a.max()) + 1
    assert a.min() == 0 and k <= n_strata
    sizes = np.bincount(a)
    assert np.all(sizes > 0), sizes
    assert sizes.sum() == scores.size
    lo = np.full(k, np.inf)
    hi = np.full(k, -np.inf)
    np.minimum.at(lo, a, scores)
    np.maximum.at(hi, a, scores)
    # strictly ordered: stratum h lies below stratum h+1, so ties are never split
    assert np.all(hi[:-1] < lo[1:])
    return k


def ties_together(scores: np.ndarray, a: np.ndarray) -> bool:
    _, inv = np.unique(scores, return_inverse=True)
    per_value = np.zeros(inv.max() + 1, dtype=np.int64)
    per_value[inv] = a
    return bool(np.all(per_value[inv] == a))


@pytest.fixture(scope="module")
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.mark.parametrize("method", ["csf", "quantile"])
@pytest.mark.parametrize(
    "dist", ["normal", "uniform", "exponential", "cauchy", "integers", "mixture", "svm"]
)
def test_invariants(method, dist, rng):
    n = 20_000
    scores = {
        "normal": lambda: rng.standard_normal(n),
        "uniform": lambda: rng.uniform(size=n),
        "exponential": lambda: rng.exponential(size=n),
        "cauchy": lambda: rng.standard_cauchy(n),
        "integers": lambda: rng.integers(0, 30, n).astype(float),
        "mixture": lambda: np.where(rng.random(n) < 0.01, rng.normal(4, 1, n), rng.normal(0, 1, n)),
        "svm": lambda: np.where(rng.random(n) < 0.002, rng.exponential(500, n), -1 + 0.2 * rng.standard_normal(n)),
    }[dist]()
    for k in (1, 2, 5, 10, 37):
        a = BINNERS[method](scores, k)
        got = check_partition(scores, a, k)
        assert got == min(k, np.unique(scores).size)
        assert ties_together(scores, a)


def test_uniform_scores_give_nearly_equal_csf_strata(rng):
    scores = rng.uniform(-2, 5, 100_000)
    sizes = np.bincount(csf_bins(scores, 10))
    assert sizes.size == 10
    assert np.all(np.abs(sizes - 10_000) < 500), sizes


def test_csf_on_normal_matches_theory(rng):
    # sqrt of the N(0,1) density is proportional to the N(0, 2) density, so the
    # CSF boundaries are the quantiles sqrt(2) * Phi^-1(k/K) of N(0, 2).
    scores = rng.standard_normal(200_000)
    K = 4
    frac = np.cumsum(np.bincount(csf_bins(scores, K)))[:-1] / scores.size
    expected = ndtr(math.sqrt(2) * ndtri(np.arange(1, K) / K))
    np.testing.assert_allclose(frac, expected, atol=0.01)
    # middle strata are larger than outer ones, unlike quantile strata
    sizes = np.bincount(csf_bins(scores, K))
    assert sizes[1] > 1.5 * sizes[0] and sizes[2] > 1.5 * sizes[3]


def _skewed() -> np.ndarray:
    # n_fine=4 on the range [0, 4]: fine-bin counts 100, 49, 16, 9 (8 at 3.5 and
    # one at the maximum, which falls in the last bin); sqrt = 10, 7, 4, 3 and
    # cumulative sqrt = 10, 17, 21, 24.
    return np.repeat([0.0, 1.5, 2.5, 3.5, 4.0], [100, 49, 16, 8, 1])


def test_csf_cut_points_by_hand():
    scores = np.random.default_rng(0).permutation(_skewed())
    # K=2: target 12 -> nearest cumulative 10 -> cut after bin 0.
    assert np.bincount(csf_bins(scores, 2, n_fine=4)).tolist() == [100, 74]
    # K=3: targets 8, 16 -> nearest 10 and 17 -> cuts after bins 0 and 1.
    assert np.bincount(csf_bins(scores, 3, n_fine=4)).tolist() == [100, 49, 25]
    a = csf_bins(scores, 3, n_fine=4)
    assert np.all(a[scores == 0.0] == 0) and np.all(a[scores == 1.5] == 1) and np.all(a[scores >= 2.5] == 2)
    # K=4: targets 6, 12, 18 -> 10, 10, 17: only 3 strata by the rule; the
    # fallback splits the only splittable stratum {2.5, 3.5, 4.0} (25 items)
    # at its median, i.e. between 2.5 (16 items) and 3.5.
    assert np.bincount(csf_bins(scores, 4, n_fine=4)).tolist() == [100, 49, 16, 9]


def test_quantile_bins_equal_counts(rng):
    scores = rng.standard_normal(10_001)
    sizes = np.bincount(quantile_bins(scores, 7))
    assert sizes.max() - sizes.min() <= 1
    assert np.bincount(quantile_bins(np.arange(12.0), 4)).tolist() == [3, 3, 3, 3]


def test_quantile_bins_ties_move_whole_group():
    scores = np.array([1.0, 2.0, 2.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    a = quantile_bins(scores, 2)
    assert a.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    a = quantile_bins(scores, 4)
    check_partition(scores, a, 4)
    assert np.unique(a[1:4]).size == 1


def test_heavy_tail_fallback_gives_requested_strata(rng):
    # SVM-like margins: a tight bulk and a few enormous outliers, so all the
    # bulk falls into the first fine bin of the CSF histogram.
    bulk = -1 + 0.1 * rng.standard_normal(50_000)
    scores = np.concatenate([bulk, [1e4, 2e5, 1e6]])
    a = csf_bins(scores, 10)
    assert check_partition(scores, a, 10) == 10
    sizes = np.bincount(a)
    # the bulk is split into (near-)equal-count strata
    assert sizes[:-1].sum() >= 50_000 - 10 and sizes[:8].max() - sizes[:8].min() < 0.05 * sizes[:8].mean()
    assert a[-1] == 9


def test_heavily_tied_scores():
    # 90% of items share one score: at most one stratum can hold them
    scores = np.concatenate([np.zeros(900), np.linspace(1, 2, 100)])
    for method in ("csf", "quantile"):
        a = BINNERS[method](scores, 5)
        assert check_partition(scores, a, 5) == 5
        assert np.unique(a[:900]).size == 1


@pytest.mark.parametrize("method", ["csf", "quantile"])
def test_more_strata_than_distinct_values(method):
    scores = np.tile([3.0, -1.0, 7.5, 0.25], 50)
    a = BINNERS[method](scores, 10)
    assert check_partition(scores, a, 10) == 4
    order = np.argsort([3.0, -1.0, 7.5, 0.25])
    np.testing.assert_array_equal(a[:4], np.argsort(order))
    assert np.all(BINNERS[method](np.full(5, 2.0), 3) == 0)
    assert BINNERS[method](np.array([1.0]), 3).tolist() == [0]


def test_single_stratum_and_integer_scores():
    assert np.all(csf_bins(np.arange(100), 1) == 0)
    a = csf_bins(np.arange(100), 4)
    assert check_partition(np.arange(100.0), a, 4) == 4


def test_make_strata_and_members(rng):
    scores = rng.standard_normal(5_000)
    for method in ("csf", "quantile"):
        st = make_strata(scores, 6, method=method)
        assert isinstance(st, Strata)
        assert st.n_strata == len(st) == 6 and st.n_items == 5_000
        np.testing.assert_array_equal(st.sizes, np.bincount(st.assignment))
        np.testing.assert_allclose(st.weights.sum(), 1.0)
        seen = np.concatenate([st.members(h) for h in range(st.n_strata)])
        np.testing.assert_array_equal(np.sort(seen), np.arange(5_000))
        for h in range(st.n_strata):
            m = st.members(h)
            assert np.all(np.diff(m) > 0)
            np.testing.assert_array_equal(m, np.flatnonzero(st.assignment == h))
    with pytest.raises(ValueError, match="h"):
        st.members(6)


def test_from_assignment_relabels_in_order():
    st = Strata.from_assignment([5, 2, 2, 9, 5])
    assert st.assignment.tolist() == [1, 0, 0, 2, 1]
    assert st.sizes.tolist() == [2, 2, 1]
    same = Strata.from_assignment(np.array([0, 1, 1, 0]))
    assert same.assignment.tolist() == [0, 1, 1, 0]
    with pytest.raises(ValueError, match="assignment"):
        Strata.from_assignment([0, -1])
    with pytest.raises(ValueError, match="assignment"):
        Strata.from_assignment([])
    with pytest.raises(ValueError, match="assignment"):
        Strata.from_assignment([0.5, 1.0])
    with pytest.raises(ValueError, match="sizes"):
        Strata(np.array([0, 0, 1]), np.array([1, 1]))


@pytest.mark.parametrize(
    ("args", "kwargs", "argument"),
    [
        ((np.arange(10.0), 0), {}, "n_strata"),
        ((np.arange(10.0), 2.5), {}, "n_strata"),
        ((np.arange(10.0), True), {}, "n_strata"),
        ((np.array([1.0, np.nan]), 2), {}, "scores"),
        ((np.array([1.0, np.inf]), 2), {}, "scores"),
        ((np.array([]), 2), {}, "scores"),
        ((np.ones((3, 2)), 2), {}, "scores"),
        ((np.array(["a", "b"]), 2), {}, "scores"),
        ((np.arange(10.0), 2), {"method": "kmeans"}, "method"),
        ((np.arange(10.0), 2), {"n_fine": 1}, "n_fine"),
    ],
)
def test_make_strata_validation(args, kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        make_strata(*args, **kwargs)


def test_large_pool_is_fast(rng):
    import time

    scores = rng.standard_cauchy(1_000_000)
    t = time.perf_counter()
    a = csf_bins(scores, 20)
    b = quantile_bins(scores, 20)
    elapsed = time.perf_counter() - t
    assert check_partition(scores, a, 20) == 20 and check_partition(scores, b, 20) == 20
    assert elapsed < 3.0
