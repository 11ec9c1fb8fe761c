"""``importance``'s interval: the draws' plug-in, widened by the oracle model's view of the items not
labeled yet (the static proposal's rare heavy-weight positives)."""

import math

import numpy as np
import pytest
from scipy.special import expit

import labelwise as lw
from labelwise.designs.group_model import MODEL_BASIS
from labelwise.designs.importance import ImportanceSampler
from labelwise.estimators import importance_moments
from labelwise.estimators.fieller import FIELLER_BASIS


def _session(pool, design, seed=1, budget=400, **kw):
    session = lw.Session(pool, lw.make_measure("f1", pool), design, seed=seed, **kw)
    session.run(lw.TruthOracle(pool), budget=budget)
    return session


def test_plugin_is_the_draws_covariance_and_the_model_never_narrows_it():
    pool = lw.make_pool(4000, prevalence=0.02, seed=3)
    design = lw.ImportanceDesign(n_strata=16, branching=16)
    session = _session(pool, design)
    plugin = _session(pool, lw.ImportanceDesign(n_strata=16, branching=16, variance="plugin"))
    d, labels = session.sample().draws, session.sample().labels
    measure = session.measure
    _, _, cov = importance_moments(measure, measure.loss(pool.outputs(d.items), labels), d.weight, counts=d.count)
    est, est_plugin = session.estimate(), plugin.estimate()
    np.testing.assert_array_equal(est.value, est_plugin.value)  # same seed, same draws: only the interval differs
    np.testing.assert_allclose(est_plugin.cov, cov, rtol=1e-12)
    assert est_plugin.basis == FIELLER_BASIS  # F1, a ratio of totals: its interval also holds Fieller's
    assert est.cov[0, 0] >= cov[0, 0] * (1 - 1e-12)
    assert est.basis == f"{MODEL_BASIS}; {FIELLER_BASIS}"


def test_a_stochastic_oracle_keeps_the_plugin_and_other_measures_the_model():
    pool = lw.make_pool(4000, prevalence=0.02, seed=3)
    session = _session(pool, lw.ImportanceDesign(n_strata=16, branching=16))
    # sample reuse on score blocks gets the model's part too (tests/designs/test_reused_curves.py)
    assert session.estimate(lw.make_measure("recall", pool)).basis == session.estimate().basis != FIELLER_BASIS
    noisy = lw.Session(pool, lw.make_measure("f1", pool), lw.ImportanceDesign(n_strata=16, branching=16), seed=1,
                       oracle="stochastic")
    noisy.run(lw.NoisyOracle(pool, 0.1, 2), budget=200)
    assert noisy.estimate().basis == FIELLER_BASIS
    assert noisy.sampler.gm.groups.labeled_items.size == 0  # the model is never fitted there


def test_the_model_learns_at_the_estimate_as_it_would_batch_by_batch():
    """Labels stored until an interval asks, then learnt at once: the recalibration and the model's posterior
    are those of learning after every batch (to the model's EM tolerance).  A two-level tree keeps the per-item
    sampler and its strata model (score blocks run depth 1)."""
    pool = lw.make_pool(4000, prevalence=0.02, seed=3)
    design = lw.ImportanceDesign(n_strata=16, branching=4, depth=2)
    session = _session(pool, design, budget=300)
    sampler: ImportanceSampler = session.sampler
    sampler.estimate(session.measure, session.sample())
    eager = design.group_model(pool, session.measure, "deterministic")
    d = session.sample()
    first = np.unique(d.draws.items, return_index=True)[1]
    items = d.draws.items[np.sort(first)]  # labeled items in the order they were labeled
    for batch in np.array_split(np.arange(items.size), 6):
        eager.observe(items[batch], pool.labels[items[batch]])
    np.testing.assert_allclose(sampler.gm.posterior(interval=True), eager.posterior(interval=True), atol=1e-5)
    assert (sampler.gm.platt.a, sampler.gm.platt.b) == pytest.approx((eager.platt.a, eager.platt.b), rel=1e-9)


def test_a_reopened_session_gives_the_same_interval(tmp_path):
    pool = lw.make_pool(4000, prevalence=0.02, seed=3)
    design = lw.ImportanceDesign(n_strata=16, branching=16)
    path = tmp_path / "eval.lw"
    session = _session(pool, design, budget=200, path=path)
    before = session.estimate()
    session.close()
    again = lw.Session.open(path)
    after = again.estimate()
    np.testing.assert_allclose(after.cov, before.cov, rtol=1e-9)
    np.testing.assert_allclose(after.interval(), before.interval(), rtol=1e-9)


def _over_confident_pool(n_items, prevalence, d, k, seed):
    """A pool whose probabilities are ``sigmoid(k x calibrated logit)`` and whose system predicts its top
    ``N+`` scores positive (the generated pools of ``benchmarks/robustness.py``)."""
    rng = np.random.default_rng(seed)
    n_pos = round(prevalence * n_items)
    labels = np.zeros(n_items, dtype=np.int8)
    labels[rng.choice(n_items, n_pos, replace=False)] = 1
    x = rng.standard_normal(n_items) + d * labels
    logit = k * (math.log(n_pos / (n_items - n_pos)) + d * x - d * d / 2)
    preds = np.zeros(n_items, dtype=np.int8)
    preds[np.argsort(-x)[:n_pos]] = 1
    return lw.Pool.from_arrays(None, preds=preds, probs=expit(logit), labels=labels)


@pytest.mark.slow
def test_intervals_cover_on_an_over_confident_rare_pool(assert_interval_covers_and_is_tight):
    """1:1000, probabilities 3x over-confident, 60 runs of 1000 labels, the recalibration averaged over its
    posterior: coverage >= 0.95 - 3 s.e. (0.866) and mean width <= 2 x 3.92 x RMSE.  The plug-in interval
    covers 0.77 here: the positives the scores call certain negatives are drawn with weight 1 / defensive in
    almost no run."""
    pool = _over_confident_pool(40_000, 1e-3, 4.0, 3.0, seed=1)
    runs = 60
    result = lw.simulate(pool, lw.make_measure("f1", pool), "importance", budget=1000, batch_size=50, repeats=runs,
                         seed=0, checkpoints=[1000], design_params={"calibration": "platt-posterior"})
    assert_interval_covers_and_is_tight(result)
