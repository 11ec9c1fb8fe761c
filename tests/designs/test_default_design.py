"""``default`` stands for the design labelwise picks for the pool, in Python, ``init`` and ``simulate``."""

import json

import numpy as np
import pytest
from scipy.special import expit
from typer.testing import CliRunner

import labelwise as lw
from labelwise.cli import app
from labelwise.designs import COMMON_POSITIVES, default_design, predicted_positive_share


def test_default_is_online_poisson_for_rare_positives_and_importance_for_multilabel_pools():
    binary = lw.make_pool(500, prevalence=0.05, seed=1)
    multi = lw.make_multilabel_pool(300, 3, prevalence=[0.2, 0.1, 0.05], seed=2)
    assert default_design(binary) == "online-poisson" and default_design(multi) == "importance"
    assert lw.make_design("default", binary) == lw.OnlinePoissonDesign()
    assert lw.make_design("default", multi, lam=0.9) == lw.ImportanceDesign(lam=0.9)
    session = lw.Session(binary, lw.make_measure("f1", binary), "default", seed=0)
    assert session.design == lw.OnlinePoissonDesign()
    with pytest.raises(ValueError, match="pass pool="):
        lw.make_design("default")


def test_measures_over_every_score_bin_get_stratified_on_any_binary_pool(tmp_path, write_pool_csv):
    rare = lw.make_pool(2000, prevalence=0.01, seed=4)
    assert default_design(rare) == default_design(rare, lw.make_measure("f1", rare)) == "online-poisson"
    for spec in ("auc", "roc_curve", "f1,auc"):
        measure = lw.make_measure(spec, rare)
        assert default_design(rare, measure) == "stratified", spec
        assert lw.make_design("default", rare, measure) == lw.StratifiedDesign()
    auc = lw.make_measure("auc", rare)
    assert lw.Session(rare, auc, "default", seed=0).design == lw.StratifiedDesign()
    assert lw.simulate(rare, auc, "default", budget=100, repeats=1).design_resolved == "stratified"
    multi = lw.make_multilabel_pool(300, 3, prevalence=[0.2, 0.1, 0.05], seed=2)
    assert default_design(multi, lw.make_measure("multilabel_micro_f1", multi)) == "importance"

    path = write_pool_csv(rare, tmp_path / "rare.csv")
    runner = CliRunner()
    cli = runner.invoke(app, ["simulate", "--pool", str(path), "--measure", "auc", "--budget", "100",
                              "--repeats", "1", "--json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout)["design_resolved"] == "stratified"
    init = runner.invoke(app, ["init", str(path), "--session", str(tmp_path / "auc.lws"), "--measure", "auc"])
    assert init.exit_code == 0, init.output
    assert "stratified" in init.output


def test_simulate_reports_the_resolved_design(tmp_path, write_pool_csv):
    pool = lw.make_pool(2000, prevalence=0.05, seed=3)
    result = lw.simulate(pool, lw.make_measure("f1", pool), "default", budget=100, repeats=2)
    out = result.to_dict()
    assert out["design"] == "default" and out["design_resolved"] == "online-poisson"
    same = lw.simulate(pool, lw.make_measure("f1", pool), "online-poisson", budget=100, repeats=2).to_dict()
    assert same["design_resolved"] == "online-poisson"
    assert same["checkpoints"] == out["checkpoints"]  # the same design, the same seed: the same numbers

    path = write_pool_csv(pool, tmp_path / "pool.csv")
    runner = CliRunner()
    cli = runner.invoke(app, ["simulate", "--pool", str(path), "--design", "default", "--budget", "100",
                              "--repeats", "2", "--json"])
    assert cli.exit_code == 0, cli.output
    got = json.loads(cli.stdout)
    assert got["design"] == "default" and got["design_resolved"] == "online-poisson"
    table = runner.invoke(app, ["simulate", "--pool", str(path), "--budget", "100", "--repeats", "2"])
    assert table.exit_code == 0, table.output
    assert "design default (online-poisson), 2 repeats" in " ".join(table.stdout.split())  # the title wraps
    init = runner.invoke(app, ["init", str(path), "--session", str(tmp_path / "s.lws"), "--design", "default"])
    assert init.exit_code == 0, init.output
    assert "online-poisson" in init.output


def _pool(preds, probs) -> lw.Pool:
    preds, probs = np.asarray(preds), np.asarray(probs, dtype=float)
    return lw.Pool.from_arrays(preds=preds, probs=probs, scores=np.log(probs / (1 - probs)))


def test_the_predicted_positive_share_is_the_larger_of_predictions_and_probabilities():
    few_preds = _pool(np.arange(20) < 2, np.full(20, 0.3))  # 2/20 predicted, mean probability 0.3
    few_probs = _pool(np.arange(20) < 4, np.full(20, 0.1))  # 4/20 predicted, mean probability 0.1
    assert predicted_positive_share(few_preds) == pytest.approx(0.3)
    assert predicted_positive_share(few_probs) == pytest.approx(0.2)
    # two systems: the one predicting more positives counts; probabilities are averaged over systems
    two = _pool(np.stack([np.arange(20) < 1, np.arange(20) < 5], axis=1), np.tile([[0.02, 0.06]], (20, 1)))
    assert predicted_positive_share(two) == pytest.approx(0.25)


def test_binary_pools_get_online_poisson_at_any_share_of_positives_and_stratified_for_auc():
    n = 100
    for predicted in (1, round(COMMON_POSITIVES * n), n // 2):
        pool = _pool(np.arange(n) < predicted, np.full(n, 0.5))
        assert default_design(pool) == default_design(pool, lw.make_measure("accuracy", pool)) == "online-poisson"
        assert default_design(pool, lw.make_measure("auc", pool)) == "stratified"
    assert lw.make_design("default", _pool(np.arange(n) < n // 2, np.full(n, 0.5))) == lw.OnlinePoissonDesign()


def test_multiclass_pools_get_stratified_from_common_classes_on():
    # 100 items in 3 classes: 90 - k predicted 0, k predicted 1 or 2; flat probabilities (share 2/3) would call
    # every pool common, so the most common class takes nearly all the probability
    n = 100
    at = round(COMMON_POSITIVES * n)
    probs = np.tile([0.98, 0.01, 0.01], (n, 1))[:, None, :]

    def pool(k: int) -> lw.Pool:
        return lw.Pool.from_arrays(None, preds=np.where(np.arange(n) < k, 1 + np.arange(n) % 2, 0), probs=probs,
                                   n_classes=3)

    assert default_design(pool(at)) == "stratified"
    assert default_design(pool(at - 1)) == "online-poisson"
    # flat probabilities call other classes common although few are predicted
    flat = lw.Pool.from_arrays(None, preds=np.zeros(n, dtype=int), probs=np.full((n, 1, 3), 1 / 3), n_classes=3)
    assert default_design(flat) == "stratified"


def _over_confident_balanced_pool(n: int, seed: int) -> lw.Pool:
    """30% positives, a weak system (d = 2) whose probabilities are over-confident (logit x 3)."""
    rng = np.random.default_rng(seed)
    y = (np.arange(n) < 0.3 * n).astype(int)
    x = rng.standard_normal(n) + 2.0 * y
    logit = 3.0 * (np.log(0.3 / 0.7) + 2.0 * x - 2.0)
    preds = (x >= np.sort(x)[-y.sum()]).astype(int)  # break-even: as many predicted as true positives
    return lw.Pool.from_arrays(preds=preds, scores=logit, probs=expit(logit), labels=y)


@pytest.mark.slow
def test_the_default_is_no_worse_than_uniform_sampling_on_a_balanced_over_confident_pool(
        assert_interval_covers_and_is_tight):
    """The pool where online-poisson in random order lost to passive: the default's F1 MSE is at most passive's
    within 3 standard errors of their difference, and its interval covers and is tight."""
    pool = _over_confident_balanced_pool(20_000, seed=4)
    assert default_design(pool) == "online-poisson"
    measure = lw.make_measure("f1", pool)
    runs = dict(budget=400, batch_size=50, repeats=300, seed=1, checkpoints=[400])
    default = lw.simulate(pool, measure, "default", **runs)
    passive = lw.simulate(pool, measure, "passive", **{**runs, "seed": 2})
    sq = [(r.values[0, :, 0] - r.true_value[0]) ** 2 for r in (default, passive)]
    se = np.sqrt(sum(np.var(e, ddof=1) / e.size for e in sq))
    assert sq[0].mean() <= sq[1].mean() + 3 * se, (sq[0].mean(), sq[1].mean(), se)
    assert_interval_covers_and_is_tight(default)


@pytest.mark.slow
def test_the_default_is_no_worse_than_uniform_sampling_on_the_auc_of_a_rare_pool(assert_interval_covers_and_is_tight):
    """AUC on a 1:100 pool, where online-poisson lost to passive: the default (stratified) has an MSE at most
    passive's within 3 standard errors of their difference, and its interval covers and is tight."""
    pool = lw.make_pool(20_000, prevalence=0.01, separation=2.0, seed=7)
    measure = lw.make_measure("auc", pool)
    runs = dict(budget=500, batch_size=50, repeats=100, seed=1, checkpoints=[500])
    default = lw.simulate(pool, measure, "default", **runs)
    assert default.design_resolved == "stratified"
    passive = lw.simulate(pool, measure, "passive", **{**runs, "seed": 2})
    sq = [(r.values[0, :, 0] - r.true_value[0]) ** 2 for r in (default, passive)]
    se = np.sqrt(sum(np.var(e, ddof=1) / e.size for e in sq))
    assert sq[0].mean() <= sq[1].mean() + 3 * se, (sq[0].mean(), sq[1].mean(), se)
    assert_interval_covers_and_is_tight(default)


def test_a_design_reads_the_scores_of_the_one_system_the_measure_evaluates():
    """Two systems: a measure of the second gets designs on its scores (unless a system is set); a measure of both
    the mean of their probabilities (``benchmarks/system_scores.py`` measures both against the first system's)."""
    pool = lw.make_pool(2000, prevalence=0.05, separation=[2.0, 4.0], n_systems=2, seed=1)
    second = lw.make_measure("f1", pool, systems=1)
    both = lw.make_measure("f1", pool, systems="all")
    for name in ("online-poisson", "stratified", "default", "importance"):
        design = lw.make_design(name, pool, second)
        assert getattr(design, "system", 1) == 1, name
        assert getattr(lw.make_design(name, pool, both), "system", "mean") == "mean", name
        assert getattr(lw.make_design(name, pool, second, system=0), "system", 0) == 0, name
    assert lw.Session(pool, lw.make_measure("precision,recall", pool, systems=1), "online-poisson",
                      seed=0).design.system == 1
    assert lw.make_design("passive", pool, second) == lw.make_design("passive")
