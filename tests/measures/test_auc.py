"""AUC and ROC curves of the pool engine: exact values, enumerated designs, DeLong's variance, coverage."""

import io
import json
from itertools import product

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise import Session, TruthOracle, make_design
from labelwise.cli import app
from labelwise.datasets import make_pool
from labelwise.estimators import horvitz_thompson_moments, importance_moments
from labelwise.measures import (
    AUC,
    ROCCurve,
    finite_difference_jacobian,
    make_measure,
    measure_from_spec,
    roc_area,
    weighted_auc,
)
from labelwise.measures.auc import DEFAULT_THRESHOLDS, binned_auc
from labelwise.pool import Pool
from labelwise.simulate import simulate, true_value


def pairwise_auc(s, pos, neg):
    """The weighted AUC by enumerating every (positive, negative) pair."""
    K = (s[:, None] > s[None, :]) + 0.5 * (s[:, None] == s[None, :])
    return float(pos @ K @ neg / (pos.sum() * neg.sum()))


@pytest.fixture(scope="module")
def tied_pool() -> Pool:
    """Eight items, scores with ties across the classes (three distinct values are shared)."""
    scores = np.array([0.1, 0.3, 0.3, 0.5, 0.5, 0.5, 0.9, 0.2])
    labels = np.array([0, 1, 0, 1, 0, 0, 1, 1])
    return Pool.from_arrays(scores=scores, probs=scores, labels=labels, name="tied")


def census_R(measure, pool):
    """The pool's mean loss at its true labels."""
    return measure.loss(pool.outputs(), pool.labels).mean(axis=0)


def test_weighted_auc_is_the_pairwise_u_statistic():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 6, 40).astype(float)  # many ties
    pos, neg = rng.uniform(0, 2, 40), rng.uniform(0, 2, 40)
    assert weighted_auc(s, pos, neg) == pytest.approx(pairwise_auc(s, pos, neg), rel=1e-12)
    y = (rng.uniform(size=40) < 0.3).astype(float)
    assert weighted_auc(s, y, 1 - y) == pytest.approx(pairwise_auc(s, y, 1 - y), rel=1e-12)
    assert np.isnan(weighted_auc(s, np.zeros(40), neg))


@pytest.mark.parametrize("design", ["stratified", "poisson", "online-poisson"])
def test_census_of_distinct_score_bins_is_the_exact_auc_with_ties(tied_pool, design):
    measure = make_measure("auc:64", tied_pool)  # more thresholds than distinct scores: one bin per score
    s, y = tied_pool.scores[:, 0], tied_pool.labels.astype(float)
    exact = pairwise_auc(s, y, 1 - y)
    assert measure.value(census_R(measure, tied_pool))[0] == pytest.approx(exact, rel=1e-12)
    assert true_value(tied_pool, measure)[0] == pytest.approx(exact, rel=1e-12)
    # a design without replacement that labels every item ends at the exact value with no variance left
    session = Session(tied_pool, measure, make_design(design, tied_pool), seed=0, budget=tied_pool.n_items)
    session.run(TruthOracle(tied_pool), tied_pool.n_items, 4)
    est = session.estimate()
    assert est.value[0] == pytest.approx(exact, rel=1e-12) and est.cov[0, 0] == pytest.approx(0.0, abs=1e-15)


def test_binning_bias_is_within_the_tie_bound():
    pool = make_pool(3000, prevalence=0.1, separation=2.0, seed=4)
    measure = make_measure("auc:8", pool)  # deliberately coarse
    R = census_R(measure, pool)
    P, N = R[: measure.n_bins], R[measure.n_bins :]
    bound = 0.5 * np.sum(P * N) / (P.sum() * N.sum())
    gap = abs(measure.value(R)[0] - true_value(pool, measure)[0])
    assert 0 < gap <= bound


def test_default_grid_bounds_each_bins_share_of_items_and_of_expected_positives():
    """Half the thresholds at quantiles of the scores, half at those of the expected positives (1:500)."""
    pool = make_pool(20000, prevalence=0.002, seed=2)
    measure = make_measure("auc:64", pool)  # 32 + 32 quantiles: every share at most 1/33 (+ one item)
    assert np.all(np.isin(measure.thresholds, pool.scores[:, 0]))
    k = measure.loss_key(pool.outputs())
    p = pool.probs[:, 0]
    assert np.bincount(k).max() / pool.n_items <= 1 / 33 + 1 / pool.n_items
    assert np.bincount(k, weights=p).max() / p.sum() <= 1 / 33 + p.max() / p.sum()


def test_jacobian_matches_finite_differences():
    pool = make_pool(2000, prevalence=0.2, separation=1.5, seed=1)
    R = np.random.default_rng(2).uniform(0.01, 1, (3, 2 * 21))  # leading axis: several estimates at once
    for measure in (make_measure("auc:20", pool), make_measure("roc_curve:20", pool)):
        np.testing.assert_allclose(measure.jacobian(R), finite_difference_jacobian(measure.g, R), atol=1e-6)


def test_influence_norm_is_that_of_the_dense_loss():
    pool = make_pool(500, prevalence=0.3, separation=1.0, seed=5)
    for measure in (make_measure("auc:30", pool), make_measure("roc_curve:10", pool)):
        R = census_R(measure, pool)
        y = np.random.default_rng(0).integers(0, 2, pool.n_items)
        dense = measure.loss(pool.outputs(), y) @ measure.jacobian(R).T
        np.testing.assert_allclose(measure.influence_norm_sq(pool.outputs(), y, R), np.sum(dense**2, axis=1))
        probs = np.random.default_rng(1).dirichlet([1, 1], pool.n_items)
        np.testing.assert_allclose(measure.expected_loss_sum(pool.outputs(), probs),
                                   probs[:, 0] @ measure.loss(pool.outputs(), np.zeros(500, int))
                                   + probs[:, 1] @ measure.loss(pool.outputs(), np.ones(500, int)))


def test_delta_variance_of_a_uniform_sample_is_delongs(tied_pool):
    """Equal weights: the delta-method variance is DeLong's S10 / m + S01 / n (placement values, 1/m moments)."""
    rng = np.random.default_rng(3)
    s = np.round(rng.normal(size=60), 1)
    y = (rng.uniform(size=60) < 0.35 + 0.3 * (s > 0)).astype(int)
    pool = Pool.from_arrays(scores=s, probs=1 / (1 + np.exp(-s)), labels=y)
    measure = make_measure("auc:1000", pool)
    _, G, cov = importance_moments(measure, measure.loss(pool.outputs(), y), np.ones(60))
    pos, neg = s[y == 1], s[y == 0]
    K = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    A = K.mean()
    v10, v01 = K.mean(axis=1), K.mean(axis=0)
    delong = np.mean((v10 - A) ** 2) / pos.size + np.mean((v01 - A) ** 2) / neg.size
    assert G[0] == pytest.approx(A, rel=1e-12)
    assert cov[0, 0] == pytest.approx(delong, rel=1e-10)


def test_poisson_sampling_enumerated_u_statistic_is_unbiased(tied_pool):
    """Every subset of a Bernoulli design: the HT totals and the U-statistic's numerator are exactly unbiased.

    With independent inclusions, ``E[I_i I_j / (pi_i pi_j)] = 1`` for ``i != j``, and a positive and a
    negative are different items, so ``E[sum_b P_b-hat N_<b-hat ...]`` is the pool's numerator.
    """
    measure = make_measure("auc:64", tied_pool)
    n = tied_pool.n_items
    pi = np.linspace(0.3, 0.9, n)
    losses = measure.loss(tied_pool.outputs(), tied_pool.labels)
    B = measure.n_bins
    R_true = losses.mean(axis=0)
    mean_R, mean_num, mean_den = np.zeros_like(R_true), 0.0, 0.0
    for inc in product([0, 1], repeat=n):
        inc = np.array(inc, bool)
        prob = np.prod(np.where(inc, pi, 1 - pi))
        R = (losses[inc] / pi[inc, None]).sum(axis=0) / n
        P, N = R[:B], R[B:]
        mean_R += prob * R
        mean_num += prob * np.sum(P * (np.cumsum(N) - N / 2))
        mean_den += prob * P.sum() * N.sum()
    np.testing.assert_allclose(mean_R, R_true, atol=1e-14)
    P, N = R_true[:B], R_true[B:]
    assert mean_num == pytest.approx(np.sum(P * (np.cumsum(N) - N / 2)), rel=1e-12)
    assert mean_den == pytest.approx(P.sum() * N.sum(), rel=1e-12)
    assert mean_num / mean_den == pytest.approx(true_value(tied_pool, measure)[0], rel=1e-12)


def test_with_replacement_enumeration_converges_to_the_auc(tied_pool):
    """Every ordered sample of n draws from an importance proposal: E[R-hat] = R exactly, and the
    estimate's mean error and mean squared error shrink like 1/n and 1/n (consistency)."""
    measure = make_measure("auc:64", tied_pool)
    N = tied_pool.n_items
    q = np.linspace(1, 2, N) / np.linspace(1, 2, N).sum()
    losses = measure.loss(tied_pool.outputs(), tied_pool.labels)
    truth = true_value(tied_pool, measure)[0]
    mse = {}
    for n in (3, 6):
        seqs = np.array(list(product(range(N), repeat=n)))
        prob = np.prod(q[seqs], axis=1)
        R = np.einsum("sn,snd->sd", 1 / (N * q[seqs]), losses[seqs]) / n
        np.testing.assert_allclose(prob @ R, losses.mean(axis=0), atol=1e-13)
        G = measure.value(R)[:, 0]
        ok = np.isfinite(G)
        mse[n] = np.sum(prob[ok] * (G[ok] - truth) ** 2) / prob[ok].sum()
    assert mse[6] < mse[3]


def test_roc_points_are_exact_and_their_trapezoid_area_is_the_binned_auc():
    pool = make_pool(5000, prevalence=0.05, separation=2.0, seed=7)
    roc, auc = make_measure("roc_curve:40", pool), make_measure("auc:40", pool)
    np.testing.assert_array_equal(roc.thresholds, auc.thresholds)
    s, y = pool.scores[:, 0], pool.labels
    G = roc.value(census_R(roc, pool))
    above = s[:, None] >= roc.thresholds[None, :]
    np.testing.assert_allclose(G[: roc.L], above[y == 0].mean(axis=0))
    np.testing.assert_allclose(G[roc.L :], above[y == 1].mean(axis=0))
    assert roc_area(G) == pytest.approx(auc.value(census_R(auc, pool))[0], rel=1e-12)
    # the same holds for a design-weighted sample's estimates
    rng = np.random.default_rng(0)
    items = rng.choice(pool.n_items, 400, replace=False)
    w = rng.uniform(0.5, 3, 400)
    R = importance_moments(roc, roc.loss(pool.outputs(items), y[items]), w)[0]
    assert roc_area(roc.value(R)) == pytest.approx(auc.value(R)[0], rel=1e-12)


def test_names_specs_and_errors():
    pool = make_pool(1000, prevalence=0.1, seed=0)
    auc = make_measure("auc", pool)
    assert isinstance(auc, AUC) and auc.names == ("auc",) and auc.L <= DEFAULT_THRESHOLDS
    assert measure_from_spec(auc.spec()) == auc
    roc = make_measure("roc_curve:5", pool)
    assert isinstance(roc, ROCCurve) and roc.names[0].startswith("fpr@") and roc.names[-1].startswith("tpr@")
    with pytest.raises(ValueError, match=r"auc:<n_thresholds>"):
        make_measure("auc:x", pool)
    with pytest.raises(ValueError, match=r"roc_curve:<n_thresholds>"):
        make_measure("roc_curve:0", pool)


def test_binned_auc_broadcasts():
    rng = np.random.default_rng(1)
    P, N = rng.uniform(size=(4, 5)), rng.uniform(size=(4, 5))
    expected = [pairwise_auc(np.arange(5.0), p, q) for p, q in zip(P, N)]
    np.testing.assert_allclose(binned_auc(P, N), expected)


@pytest.mark.slow
@pytest.mark.parametrize("design", ["passive", "importance"])
def test_interval_covers(design):
    """Coverage of the 95% interval over 150 seeded runs within 3 standard errors of 0.95 (0.953 for both designs;
    with half the variance, half-widths over sqrt 2, passive's covered 0.86 and importance's 0.81: below 0.897)."""
    pool = make_pool(20000, prevalence=0.2, separation=1.5, seed=1)
    measure = make_measure("auc", pool)
    runs = 150
    res = simulate(pool, measure, design, budget=600, batch_size=100, repeats=runs, seed=11, checkpoints=[600])
    row = res.checkpoint_rows()[-1]
    assert abs(row["coverage"] - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / runs)
    # not needlessly wide: at most twice the width an interval of the true error would have
    assert row["mean_width"] <= 2 * 3.92 * np.sqrt(row["mse"])


def test_horvitz_thompson_census_has_no_variance(tied_pool):
    measure = make_measure("auc:64", tied_pool)
    losses = measure.loss(tied_pool.outputs(), tied_pool.labels)
    R, cov = horvitz_thompson_moments(measure, losses, np.ones(tied_pool.n_items), tied_pool.n_items)
    assert measure.value(R)[0] == pytest.approx(true_value(tied_pool, measure)[0])
    assert cov[0, 0] == 0.0


def test_truth_under_noisy_annotators_is_the_auc_of_the_expected_labels(tied_pool):
    """Annotators err with probability e: the estimand g(E[R]) weights every pair by p_i (1 - p_j)."""
    measure = make_measure("auc:64", tied_pool)
    e = 0.2
    p = np.where(tied_pool.labels == 1, 1 - e, e)
    s = tied_pool.scores[:, 0]
    expected = pairwise_auc(s, p, 1 - p)  # includes i = j, a tie, as the mean loss does
    assert true_value(tied_pool, measure, e)[0] == pytest.approx(expected, rel=1e-12)
    R = measure.expected_loss_sum(tied_pool.outputs(), np.stack([1 - p, p], axis=1)) / tied_pool.n_items
    assert measure.value(R)[0] == pytest.approx(expected, rel=1e-12)


def test_one_auc_per_system():
    pool = make_pool(3000, prevalence=0.1, separation=[1.0, 2.5], n_systems=2, seed=6)
    measure = make_measure("auc", pool, systems="all")
    truth = true_value(pool, measure)
    exact = [pairwise_auc(pool.scores[:, k], pool.labels.astype(float), 1.0 - pool.labels) for k in range(2)]
    np.testing.assert_allclose(truth, exact, rtol=1e-12)
    assert truth[0] < truth[1]


def test_command_line_census_prints_the_exact_auc_and_rejects_a_bad_grid(tmp_path, tied_pool):
    """init -> next (every item) -> label -> estimate --json: the exact AUC with ties, no variance."""
    invoke = lambda *args, **kw: CliRunner().invoke(app, [str(a) for a in args], **kw)
    pool_file, session = tmp_path / "pool.csv", tmp_path / "auc.lws"
    truth = dict(zip(tied_pool.item_ids.tolist(), tied_pool.labels.tolist()))
    pd.DataFrame({"item_id": tied_pool.item_ids, "score": tied_pool.scores[:, 0]}).to_csv(pool_file, index=False)
    assert invoke("init", pool_file, "--session", session, "--measure", "auc:64", "--design", "stratified").exit_code == 0
    batch = pd.read_csv(io.StringIO(invoke("next", session, "-n", tied_pool.n_items).stdout))
    batch["label"] = batch["item_id"].map(truth)
    assert invoke("label", session, "-", input=batch.to_csv(index=False)).exit_code == 0
    out = json.loads(invoke("estimate", session, "--json").stdout)["components"][0]
    s, y = tied_pool.scores[:, 0], tied_pool.labels.astype(float)
    assert out["value"] == pytest.approx(pairwise_auc(s, y, 1 - y), rel=1e-12) and out["std"] == pytest.approx(0.0)
    bad = invoke("init", pool_file, "--session", tmp_path / "bad.lws", "--measure", "auc:0")
    assert bad.exit_code == 1 and bad.stderr.strip().splitlines() == [
        "error: measure 'auc:0': write auc:<n_thresholds> with a positive integer, e.g. auc:256"]
