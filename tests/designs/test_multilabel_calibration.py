"""The default design on multi-label pools reads over-confident label probabilities through a temperature fitted
to the labels (one temperature for every label's logit: the tempered product of the marginals is the product of
the tempered marginals)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logit

import labelwise as lw
from labelwise.oracle.temperature import tempered
from labelwise.pool.multilabel import multilabel_joint


def overconfident_multilabel_pool(n_items: int = 20_000, prevalences=(0.05, 0.025, 0.0125, 0.00625), d: float = 2.0,
                                  k: float = 3.0, seed: int = 0) -> lw.Pool:
    """Independent labels, each a binary pool of the robustness grid: scores ``x = d y + N(0, 1)``, probabilities
    ``sigmoid(k x calibrated logit)`` (``k = 3``: over-confident), the top ``N+`` by score predicted positive."""
    rng = np.random.default_rng(seed)
    C = len(prevalences)
    labels = np.zeros((n_items, C), dtype=np.int64)
    for j, p in enumerate(prevalences):
        labels[rng.choice(n_items, size=round(p * n_items), replace=False), j] = 1
    x = rng.standard_normal((n_items, C)) + d * labels
    probs = expit(k * (logit(labels.mean(axis=0)) + d * x - d * d / 2))
    preds = np.zeros_like(labels)
    for j in range(C):
        preds[np.argsort(-x[:, j])[: labels[:, j].sum()], j] = 1
    return lw.Pool.from_multilabel(preds=preds, probs=probs, labels=labels, label_names=[f"l{j}" for j in range(C)])


def test_tempering_the_label_sets_tempers_every_label_alike():
    marginals = np.array([[0.9, 0.2, 0.01], [0.3, 0.6, 0.5]])
    T = 2.5
    np.testing.assert_allclose(tempered(multilabel_joint(marginals), T),
                               multilabel_joint(expit(logit(marginals) / T)), rtol=1e-12)


def test_the_default_multi_label_model_is_temperature_scaled():
    pool = overconfident_multilabel_pool(n_items=2_000)
    design = lw.make_design(lw.designs.default_design(pool), pool)
    model = design.group_model(pool, lw.make_measure("multilabel_macro_f1", pool), "deterministic")
    assert model.temper


def test_the_labels_soften_multi_label_probabilities_but_never_sharpen_them():
    """Under-confident probabilities fit a temperature below 1; on a multi-label pool the model keeps 1 (the rare
    labels' few positives fit one below 1 on calibrated pools too, and a sharpened tail under-covered)."""
    from labelwise.oracle.temperature import fit_temperature

    pool = overconfident_multilabel_pool(n_items=5_000, k=0.5)
    session = lw.Session(pool, lw.make_measure("multilabel_macro_f1", pool), "default", seed=0, budget=300)
    session.run(lw.TruthOracle(pool), 300, 50)
    session.estimate()  # the model learns when an interval asks
    gm = session.sampler.gm
    assert fit_temperature(gm.item_prior(gm._seen_items), gm._seen_y, gm._label_weights()) < 0.9
    assert gm.temperature == 1.0
    over = overconfident_multilabel_pool(n_items=5_000, k=3.0)
    session = lw.Session(over, lw.make_measure("multilabel_macro_f1", over), "default", seed=0, budget=300)
    session.run(lw.TruthOracle(over), 300, 50)
    session.estimate()
    assert session.sampler.gm.temperature > 1.5


def test_the_tempered_block_means_are_those_of_the_tempered_pool_and_kept_while_the_temperature_stays():
    """The model's prior is each block's mean tempered probability, computed once per temperature from the groups'
    sums; here against the block means of every item's tempered probabilities (an empty block at zero)."""
    pool = overconfident_multilabel_pool(n_items=3_000, k=3.0)
    session = lw.Session(pool, lw.make_measure("multilabel_macro_f1", pool), "default", seed=0, budget=200)
    session.run(lw.TruthOracle(pool), 200, 50)
    session.estimate()
    gm = session.sampler.gm
    assert gm.tempered_at == gm.temperature > 1.0
    prior = tempered(gm.item_prior(), gm.temperature)
    blocks, n_blocks = gm.hierarchy.blocks, gm.hierarchy.n_leaves
    size = np.bincount(blocks, minlength=n_blocks)[:, None]
    sums = np.stack([np.bincount(blocks, weights=prior[:, c], minlength=n_blocks) for c in range(pool.n_classes)], 1)
    expected = np.divide(sums, size, out=np.zeros_like(sums), where=size > 0)
    np.testing.assert_allclose(gm.tempered_blocks, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gm.model.block_prior, expected, rtol=1e-12, atol=1e-15)
    kept = gm.tempered_blocks
    gm._learn_prior(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))  # no new label: the same temperature
    assert gm.tempered_blocks is kept


@pytest.mark.slow
def test_macro_f1_covers_on_an_over_confident_pool():
    """Before the temperature the interval trusted probabilities three times too confident: 0.66 at 500 labels
    (100 runs), every miss an estimate too high (the rare labels' positives the probabilities put at ~0)."""
    pool = overconfident_multilabel_pool()
    repeats = 80
    result = lw.simulate(pool, lw.make_measure("multilabel_macro_f1", pool), "default", budget=500, batch_size=50,
                         repeats=repeats, seed=0, checkpoints=[500])
    (row,) = result.checkpoint_rows()
    assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / repeats), row
