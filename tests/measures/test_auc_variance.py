"""The AUC's prior variance: DeLong's at no pseudo-count, the prior's alone at many, and coverage with few positives."""

import numpy as np
import pytest

from labelwise import Session, TruthOracle, make_design
from labelwise.datasets import make_pool
from labelwise.estimators import importance_moments
from labelwise.measures import AUC, make_measure
from labelwise.measures.auc_variance import (
    PRIOR_BASIS,
    prior_variance,
    recalibrated_bins,
)
from labelwise.oracle.calibration import fit_platt, logits_of
from labelwise.simulate import simulate


def tallies(cells: np.ndarray, weight: np.ndarray, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.bincount(cells, weights=weight, minlength=n_cells),
            np.bincount(cells, weights=weight**2, minlength=n_cells))


def test_without_pseudo_counts_it_is_the_importance_estimators_delong_variance():
    rng = np.random.default_rng(4)
    measure = AUC(np.arange(1, 6) / 6)  # 6 bins, 12 cells
    cells = rng.integers(0, 12, 40)
    weight = rng.uniform(0.3, 3.0, 40)
    losses = np.eye(12)[cells]
    _, G, cov = importance_moments(measure, losses, weight)
    total, total_sq = tallies(cells, weight, 12)
    prior = rng.uniform(size=12)  # ignored at pseudo-count 0
    assert prior_variance(total, total_sq, prior, float(G[0]), pseudo_count=0.0) == pytest.approx(cov[0, 0],
                                                                                                  rel=1e-10)


def test_with_a_dominant_prior_it_is_the_priors_spread_over_the_effective_sizes():
    # two bins; prior positives 1:3, negatives 3:1 over the bins; 4 labeled positives, 6 + 2 negatives
    total = np.array([0.0, 4.0, 6.0, 2.0])
    prior = np.array([1.0, 3.0, 3.0, 1.0])
    # placements under the prior: positives 0.375 (bin 0), 0.875 (bin 1); negatives 0.875, 0.375
    spread = 0.25 * (0.375 - 0.8) ** 2 + 0.75 * (0.875 - 0.8) ** 2
    assert prior_variance(total, total, prior, 0.8, pseudo_count=1e12) == pytest.approx(spread / 4 + spread / 8,
                                                                                        rel=1e-9)


def test_the_prior_weighs_alpha_labeled_items_of_each_class():
    # two bins, unit weights (n = 4 per class): the empirical spread and the prior's, mixed n : alpha
    total = np.array([3.0, 1.0, 2.0, 2.0])
    prior = np.array([1.0, 1.0, 1.0, 1.0])
    alpha, auc = 4.0, 0.7
    pos = (4 * total[:2] / 4 + alpha * 0.5) / (4 + alpha)  # posterior mean of the positives' distribution
    neg = (4 * total[2:] / 4 + alpha * 0.5) / (4 + alpha)
    v = np.cumsum(neg) - neg / 2
    u = pos[::-1].cumsum()[::-1] - pos / 2
    s_pos = (total[:2] @ (v - auc) ** 2 + alpha * 0.5 * np.sum((v - auc) ** 2)) / (4 + alpha)
    s_neg = (total[2:] @ (u - auc) ** 2 + alpha * 0.5 * np.sum((u - auc) ** 2)) / (4 + alpha)
    assert prior_variance(total, total, prior, auc, pseudo_count=alpha) == pytest.approx(s_pos / 4 + s_neg / 4,
                                                                                         rel=1e-12)


def test_recalibrated_bins_are_the_platt_recalibrated_probabilities_summed_per_bin():
    pool = make_pool(300, prevalence=0.1, separation=2.0, calibration_error=1.5, seed=6)
    measure = make_measure("auc:1000", pool)  # a bin per distinct score: the quadrature is exact
    session = Session(pool, measure, make_design("importance", pool), budget=120, seed=4)
    session.run(TruthOracle(pool), 120, 60)
    sample = session.sample()
    logits = logits_of(pool.probs[:, 0])
    d = sample.draws
    platt = fit_platt(logits[d.items], sample.labels.astype(float), d.weight * d.count)
    assert platt.b < -0.5  # the probabilities, shifted up by 1.5 on the logit scale, are moved back down
    bins = measure._k(pool.outputs())
    p = platt(logits)
    expected = np.r_[np.bincount(bins, weights=p, minlength=measure.n_bins),
                     np.bincount(bins, weights=1 - p, minlength=measure.n_bins)]
    np.testing.assert_allclose(recalibrated_bins(measure, pool, sample), expected, rtol=1e-12, atol=1e-12)


def test_a_session_only_raises_the_design_variance_and_says_so():
    pool = make_pool(5000, prevalence=0.01, separation=2.0, seed=3)
    measure = make_measure("auc", pool)
    session = Session(pool, measure, make_design("passive", pool), budget=400, seed=3)
    session.run(TruthOracle(pool), 400, 100)
    design_est = session.sampler.estimate(measure, session.sample())
    est = session.estimate()
    assert est.value == pytest.approx(design_est.value)
    assert 1 <= int(session.sample().labels.sum()) <= 6  # a handful of positives, scored high: DeLong's variance collapses
    assert est.cov[0, 0] > 3 * design_est.cov[0, 0]
    assert PRIOR_BASIS in est.basis


def test_a_stratified_sample_keeps_its_gain_over_a_uniform_one_under_the_prior():
    """The floor is the prior's variance less the strata's gain (weighted DeLong minus the design's)."""
    pool = make_pool(4000, prevalence=0.5, separation=2.0, seed=4)
    measure = make_measure("auc", pool)
    session = Session(pool, measure, make_design("stratified", pool), budget=600, seed=4)
    session.run(TruthOracle(pool), 600, 100)
    sample = session.sample()
    design_var = session.sampler.estimate(measure, sample).cov[0, 0]
    d = sample.draws
    losses = session.sampler.losses(measure, sample)
    total, total_sq = (d.count * d.weight) @ losses, (d.count * d.weight**2) @ losses
    bins, auc = recalibrated_bins(measure, pool, sample), float(session.estimate().value[0])
    prior, delong = prior_variance(total, total_sq, bins, auc), prior_variance(total, total_sq, bins, auc, 0.0)
    assert delong > design_var  # the strata gain over a uniform sample ...
    expected = max(design_var, prior - (delong - design_var))
    assert session.estimate().cov[0, 0] == pytest.approx(expected, rel=1e-12)
    assert expected < 0.8 * prior  # ... and the floor keeps that gain


def test_the_auc_takes_its_prior_and_no_stratum_label_floor_besides():
    pool = make_pool(4000, prevalence=0.01, separation=2.0, seed=4)
    session = Session(pool, make_measure("auc", pool), make_design("stratified", pool), budget=200, seed=4)
    session.run(TruthOracle(pool), 200, 100)
    sampler, sample = session.sampler, session.sample()
    assert sampler.label_floor_inputs(make_measure("auc", pool), sample) == {}
    assert set(sampler.label_floor_inputs(make_measure("f1", pool), sample)) == {
        "slope_moments", "positive"}


@pytest.mark.slow
@pytest.mark.parametrize("prevalence", [0.5, 0.02])
def test_stratified_interval_covers_and_is_not_needlessly_wide(prevalence):
    """Balanced and 1:50 pools: coverage within 3 standard errors of 0.95 or above, width at most 2 x 3.92 RMSE."""
    pool = make_pool(20000, prevalence=prevalence, separation=2.0, seed=6)
    measure = make_measure("auc", pool)
    runs = 100
    res = simulate(pool, measure, "stratified", budget=600, batch_size=100, repeats=runs, seed=13,
                   checkpoints=[600])
    row = res.checkpoint_rows()[-1]
    assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)
    assert row["mean_width"] <= 2 * 3.92 * np.sqrt(row["mse"])


@pytest.mark.slow
@pytest.mark.parametrize(("design", "calibration_error"), [("passive", 0.0), ("importance", 0.0),
                                                           ("passive", 2.0)])
def test_interval_covers_with_a_handful_of_positives(design, calibration_error):
    """About 6 positives among 300 labels (1:50 pool): coverage within 3 standard errors of 0.95 or above."""
    pool = make_pool(20000, prevalence=0.02, separation=2.0, calibration_error=calibration_error, seed=5)
    measure = make_measure("auc", pool)
    runs = 100
    res = simulate(pool, measure, design, budget=300, batch_size=100, repeats=runs, seed=12, checkpoints=[300])
    row = res.checkpoint_rows()[-1]
    assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)
    assert row["mean_width"] <= 2 * 3.92 * np.sqrt(row["mse"])
