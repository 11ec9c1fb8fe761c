"""The AUC's variance under ``importance``: the static proposal's variance with the unlabeled items from the
recalibrated model, against enumeration, and its coverage on an over-confident pool."""

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.special import expit

import labelwise as lw
from labelwise.measures import AUC
from labelwise.measures.auc_importance import with_importance_model_variance
from labelwise.measures.auc_variance import recalibrated_bins


def _tiny_session(variance: str) -> lw.Session:
    """12 items, 4 score bins, 6 labels drawn by ``importance``."""
    probs = np.array([0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.95])
    labels = np.array([0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1])
    pool = lw.Pool.from_arrays(None, preds=(probs > 0.5).astype(int), probs=probs, labels=labels)
    design = lw.ImportanceDesign(n_strata=4, branching=4, variance=variance)
    session = lw.Session(pool, AUC([0.12, 0.35, 0.65], system=0), design, seed=3)
    session.run(lw.TruthOracle(pool), budget=6, batch_size=3)
    return session


def test_the_model_variance_is_the_proposals_closed_form_item_by_item():
    """``var = (sum_x E[u_x^2] / (N^2 q(x)) - r^2) / n`` with ``u = Dg(R) l``: labeled items at their labels,
    unlabeled ones positive with their bin's mean recalibrated probability (``variance="model"``: no mixture)."""
    session = _tiny_session("model")
    pool, measure, sampler, sample = session.pool, session.measure, session.sampler, session.sample()
    design_estimate = sampler.estimate(measure, sample)
    zero = replace(design_estimate, cov=np.zeros((1, 1)))  # so the model's variance is what comes back
    got = with_importance_model_variance(measure, zero, pool, sampler, sample).cov[0, 0]

    N, B = pool.n_items, measure.n_bins
    J = measure.finite_jacobian(design_estimate.R)[0]
    bins = measure._k(pool.outputs())
    positives = recalibrated_bins(measure, pool, sample)[:B] / np.bincount(bins, minlength=B)
    label_of = dict(zip(sample.draws.items.tolist(), sample.labels.tolist()))
    second = 0.0
    for x in range(N):
        u_pos, u_neg = J[bins[x]], J[B + bins[x]]
        if x in label_of:
            mean_sq = u_pos**2 if label_of[x] == 1 else u_neg**2
        else:
            mean_sq = positives[bins[x]] * u_pos**2 + (1 - positives[bins[x]]) * u_neg**2
        second += mean_sq / (N**2 * sampler.q[x])
    expected = (second - (J @ design_estimate.R) ** 2) / sample.draws.n_draws
    assert got == pytest.approx(expected, rel=1e-10)


def test_a_larger_design_variance_is_kept_and_other_samplers_are_left_alone():
    session = _tiny_session("mixture")
    pool, measure, sampler, sample = session.pool, session.measure, session.sampler, session.sample()
    estimate = sampler.estimate(measure, sample)
    wide = replace(estimate, cov=np.array([[1.0]]))
    assert with_importance_model_variance(measure, wide, pool, sampler, sample) is wide
    assert with_importance_model_variance(measure, estimate, pool, sampler, sample).cov[0, 0] >= estimate.cov[0, 0]
    passive = lw.Session(pool, measure, "passive", seed=3)
    passive.run(lw.TruthOracle(pool), budget=6, batch_size=3)
    passive_estimate = passive.sampler.estimate(measure, passive.sample())
    assert with_importance_model_variance(measure, passive_estimate, pool, passive.sampler,
                                          passive.sample()) is passive_estimate
    plugin = _tiny_session("plugin")
    plugin_estimate = plugin.sampler.estimate(measure, plugin.sample())
    assert with_importance_model_variance(measure, plugin_estimate, pool, plugin.sampler,
                                          plugin.sample()) is plugin_estimate


@pytest.mark.slow
def test_importance_auc_intervals_cover_on_an_over_confident_pool(assert_interval_covers_and_is_tight):
    """1:100, separation 2, scores 3x over-confident logits (``3 x calibrated logit``), 100 runs of 2000
    labels: coverage >= 0.95 - 3 s.e. (0.885) and mean width <= 2 x 3.92 x RMSE.  Without the model's
    variance of the proposal 76 of these 100 intervals cover: the positives scored below most negatives
    have weights ~20x the others' and most runs draw none."""
    rng = np.random.default_rng(1)
    n_items, n_pos, d = 100_000, 1000, 2.0
    labels = np.zeros(n_items, dtype=np.int8)
    labels[rng.choice(n_items, n_pos, replace=False)] = 1
    x = rng.standard_normal(n_items) + d * labels
    logit = 3.0 * (math.log(n_pos / (n_items - n_pos)) + d * x - d * d / 2)
    pool = lw.Pool.from_arrays(None, preds=(logit > 0).astype(np.int8), scores=logit, probs=expit(logit),
                               labels=labels)
    runs = 100
    result = lw.simulate(pool, lw.make_measure("auc", pool), "importance", budget=2000, batch_size=50,
                         repeats=runs, seed=1, checkpoints=[2000])
    assert_interval_covers_and_is_tight(result)
