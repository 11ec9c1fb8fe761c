"""Tests of the synthetic pool generator :func:`labelwise.datasets.make_pool`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr
from scipy.stats import rankdata

from labelwise.datasets import make_pool
from labelwise.pool import Pool


def _auc(scores: np.ndarray, labels: np.ndarray) -> float:
    ranks = rankdata(scores)
    n1 = int(labels.sum())
    n0 = labels.size - n1
    return float((ranks[labels == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


@pytest.mark.parametrize(
    ("n_items", "prevalence", "expected"),
    [(10_000, 0.0123, 123), (1_000, 0.5, 500), (100_000, 1e-6, 1), (1_000_000, 1e-6, 1), (3_000_000, 1e-6, 3)],
)
def test_exact_number_of_positives(n_items, prevalence, expected):
    pool = make_pool(n_items, prevalence, seed=0)
    assert int(pool.labels.sum()) == expected
    assert set(np.unique(pool.labels).tolist()) == {0, 1}


def test_both_classes_even_at_extreme_prevalence():
    assert int(make_pool(2, 0.999, seed=0).labels.sum()) == 1
    assert int(make_pool(2, 1e-9, seed=0).labels.sum()) == 1


def test_shapes_dtypes_and_defaults():
    pool = make_pool(5_000, 0.02, n_systems=3, n_features=4, seed=1)
    assert isinstance(pool, Pool)
    assert pool.n_items == 5_000 and pool.n_systems == 3 and pool.n_classes == 2
    np.testing.assert_array_equal(pool.item_ids, np.arange(5_000))
    assert pool.item_ids.dtype.kind == "i"
    assert pool.scores.shape == pool.probs.shape == pool.preds.shape == (5_000, 3)
    assert pool.scores.dtype == np.float64 and pool.probs.dtype == np.float64
    assert pool.preds.dtype.kind == "i" and pool.labels.dtype.kind == "i"
    assert pool.labels.shape == (5_000,)
    assert pool.features.shape == (5_000, 4)
    assert pool.system_names == ("system0", "system1", "system2")
    assert pool.name == "generated-5000-0.02"
    assert np.all((pool.probs >= 0) & (pool.probs <= 1))
    np.testing.assert_array_equal(pool.preds, (pool.probs > 0.5).astype(int))

    single = make_pool(100, 0.1, seed=1, name="toy")
    assert single.system_names == ("system",)
    assert single.features is None
    assert single.name == "toy"


def test_probs_finite_at_extreme_prevalence_and_separation():
    pool = make_pool(200_000, 1e-6, separation=40.0, calibration_error=-30.0, seed=2)
    assert np.all(np.isfinite(pool.probs))
    assert np.all((pool.probs >= 0) & (pool.probs <= 1))


def test_reproducible_with_seed():
    a = make_pool(2_000, 0.05, n_systems=2, n_features=2, seed=42)
    b = make_pool(2_000, 0.05, n_systems=2, n_features=2, seed=42)
    c = make_pool(2_000, 0.05, n_systems=2, n_features=2, seed=np.random.default_rng(42))
    d = make_pool(2_000, 0.05, n_systems=2, n_features=2, seed=43)
    for other in (b, c):
        for attr in ("labels", "scores", "probs", "preds", "features"):
            np.testing.assert_array_equal(getattr(a, attr), getattr(other, attr))
    assert not np.array_equal(a.labels, d.labels)
    assert not np.array_equal(a.scores, d.scores)


def _calibration_z(pool: Pool, n_bins: int = 5) -> np.ndarray:
    """Standardised gap between mean prob and positive rate in equal-count prob bins."""
    p = pool.probs[:, 0]
    y = pool.labels
    order = np.argsort(p, kind="stable")
    z = []
    for idx in np.array_split(order, n_bins):
        mean_p = p[idx].mean()
        se = math.sqrt(max(np.mean(p[idx] * (1 - p[idx])), 1e-12) / idx.size)
        z.append((y[idx].mean() - mean_p) / se)
    return np.array(z)


def test_probs_calibrated_without_calibration_error():
    pool = make_pool(200_000, 0.2, separation=1.5, seed=3)
    z = _calibration_z(pool)
    assert np.all(np.abs(z) < 4), z
    # the bins really differ, so the check has power
    p = np.sort(pool.probs[:, 0])
    assert p[-1000:].mean() - p[:1000].mean() > 0.5


def test_calibration_error_makes_probs_overconfident():
    pool = make_pool(200_000, 0.2, separation=1.5, calibration_error=1.0, seed=3)
    z = _calibration_z(pool)
    assert np.all(z < -4), z  # observed rate well below the stated probability
    under = make_pool(200_000, 0.2, separation=1.5, calibration_error=-1.0, seed=3)
    assert np.all(_calibration_z(under) > 4)


def test_total_probability_matches_positives_at_low_prevalence():
    pool = make_pool(1_000_000, 1e-3, separation=3.0, seed=4)
    p = pool.probs[:, 0]
    assert abs(p.sum() - pool.labels.sum()) < 5 * math.sqrt(np.sum(p * (1 - p)))


@pytest.mark.parametrize("separation", [0.0, 1.0, 3.0])
def test_score_gap_equals_separation(separation):
    pool = make_pool(100_000, 0.05, separation=separation, seed=5)
    s = pool.scores[:, 0]
    y = pool.labels == 1
    gap = s[y].mean() - s[~y].mean()
    se = math.sqrt(1 / y.sum() + 1 / (~y).sum())
    assert abs(gap - separation) < 5 * se
    assert abs(s[~y].std() - 1.0) < 0.02


def test_higher_separation_gives_higher_auc():
    aucs = []
    for d in (0.5, 1.5, 3.0):
        pool = make_pool(50_000, 0.05, separation=d, seed=6)
        auc = _auc(pool.scores[:, 0], pool.labels)
        assert abs(auc - ndtr(d / math.sqrt(2))) < 0.02
        aucs.append(auc)
    assert aucs[0] < aucs[1] < aucs[2]


def test_systems_correlated_but_different():
    pool = make_pool(50_000, 0.01, n_systems=3, separation=[1.0, 2.0, 3.0], seed=7)
    neg = pool.labels == 0
    r = np.corrcoef(pool.scores[neg].T)
    off = r[np.triu_indices(3, 1)]
    assert np.all(np.abs(off - 0.5) < 0.03)
    aucs = [_auc(pool.scores[:, s], pool.labels) for s in range(3)]
    assert aucs[0] < aucs[1] < aucs[2]
    indep = make_pool(50_000, 0.01, n_systems=2, system_correlation=0.0, seed=7)
    assert abs(np.corrcoef(indep.scores[indep.labels == 0].T)[0, 1]) < 0.03


def test_features_correlated_with_label():
    pool = make_pool(50_000, 0.1, separation=2.0, n_features=3, seed=8)
    y = pool.labels == 1
    gaps = pool.features[y].mean(axis=0) - pool.features[~y].mean(axis=0)
    assert np.all(gaps > 0.2)
    assert gaps[0] > gaps[1] > gaps[2]
    assert abs(np.linalg.norm(gaps) - 2.0) < 0.1


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        (dict(prevalence=0.0), "prevalence"),
        (dict(prevalence=1.0), "prevalence"),
        (dict(prevalence=-0.1), "prevalence"),
        (dict(prevalence=float("nan")), "prevalence"),
        (dict(n_items=1), "n_items"),
        (dict(n_items=10.5), "n_items"),
        (dict(n_systems=0), "n_systems"),
        (dict(separation=-1.0), "separation"),
        (dict(separation=float("inf")), "separation"),
        (dict(separation=[1.0, 2.0]), "separation"),
        (dict(n_features=-1), "n_features"),
        (dict(calibration_error=float("nan")), "calibration_error"),
        (dict(system_correlation=1.5), "system_correlation"),
        (dict(name=3), "name"),
    ],
)
def test_argument_validation(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        make_pool(**{"n_items": 100, **kwargs})
