"""Passive sampling's interval for multi-label macro-F1: every label's own posterior, the labels' priors sharing
their centre, joined through a Bayesian bootstrap of the draws (:func:`label_posterior_draws`).

Coverage tolerances come from the binomial sampling error of a coverage estimated over R repeats:
sd = sqrt(0.95 * 0.05 / R).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from labelwise.datasets import make_multilabel_pool
from labelwise.estimators.posterior import (
    label_posterior_draws,
    label_states,
    label_support,
)
from labelwise.measures import make_measure
from labelwise.measures.base import CustomMeasure
from labelwise.measures.multilabel import MultiLabelMacroF1 as macro_f1
from labelwise.pool import Outputs, Pool
from labelwise.simulate import simulate


def test_a_labels_columns_give_its_state_and_anything_else_is_refused():
    measure = macro_f1(2)
    np.testing.assert_array_equal(measure.label_columns(), [[0, 2, 4], [1, 3, 5]])
    # predicted {0}, true {0, 1}: label 0 a true positive, label 1 a false negative; then nothing wrong or right
    losses = measure.loss(Outputs(np.array([[1], [0]]), None, None, 4), np.array([3, 0]))
    np.testing.assert_array_equal(label_states(losses, measure.label_columns()), [[1, 3], [0, 0]])
    with pytest.raises(ValueError, match="neither zero nor a single one"):
        label_states(np.array([[1.0, 0, 1, 0, 0, 0]]), measure.label_columns())


def precision_of(label: int, n_labels: int) -> CustomMeasure:
    """Label ``label``'s precision ``a / (a + b)`` from macro-F1's loss ``[a, b, c]`` (label by label)."""
    a, b = label, n_labels + label
    return CustomMeasure(loss_fn=None, g_fn=lambda R: R[..., a:a + 1] / (R[..., a:a + 1] + R[..., b:b + 1]),
                         dim=3 * n_labels, names=("precision",), lower=0.0, upper=1.0)


def test_a_label_with_many_draws_has_the_binomial_interval_of_its_precision():
    """1000 draws of one label: 300 true positives, 100 false positives, 50 false negatives.  The posterior of
    the precision is Beta(300 + kappa pi_TP, 100 + kappa pi_FP), within its 1.5 pseudo-draws (0.004 here) of
    Beta(300, 100); Monte Carlo error of a 2.5% quantile from 8000 draws about 0.003."""
    losses = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]])
    draws = label_posterior_draws(precision_of(0, 1), np.array([[0, 1, 2]]), losses, np.array([300, 100, 50, 550]))
    np.testing.assert_allclose(np.quantile(draws[:, 0], [0.025, 0.975]), stats.beta.ppf([0.025, 0.975], 300, 100),
                               atol=0.008)


def test_a_label_without_draws_leans_to_what_the_others_show():
    """Three labels each with 40 true positives and 2 false positives and negatives, the fourth never seen: its
    precision's posterior median is high (the labels' shared centre, about 0.9), not the 1/2 of a prior of its own."""
    columns = macro_f1(4).label_columns()
    rows = [np.eye(12)[col] for label in range(3) for col, n in ((label, 40), (4 + label, 2), (8 + label, 2))
            for _ in range(n)] + [np.zeros(12)] * 500
    draws = label_posterior_draws(precision_of(3, 4), columns, np.array(rows), np.ones(len(rows)))
    assert np.median(draws[:, 0]) > 0.75
    seen = label_posterior_draws(precision_of(0, 4), columns, np.array(rows), np.ones(len(rows)))
    assert np.quantile(seen[:, 0], 0.025) > 0.8  # 40 of 42 predicted positives


@pytest.mark.slow
def test_passive_macro_f1_covers_on_a_four_label_pool_with_rare_labels():
    """Labels of 80 / 40 / 20 / 10 positives in 40,000 items: at 1000 uniform labels the delta method (macro-F1
    has 256 loss cells, too many for the Dirichlet posterior of the cells) covered 0.18 (100 runs): the labels
    not drawn counted as precision and recall 0 with no variance."""
    pool = make_multilabel_pool(40_000, 4, prevalence=[0.002, 0.001, 0.0005, 0.00025], separation=4.0, seed=5)
    repeats = 60
    result = simulate(pool, make_measure("multilabel_macro_f1", pool), "passive", budget=1000, batch_size=1000,
                      repeats=repeats, seed=0, checkpoints=[1000])
    (row,) = result.checkpoint_rows()
    assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / repeats), row


def test_a_label_never_predicted_has_no_true_or_false_positives():
    """The pool's predictions allow label 1 only false negatives: its precision is 0 in every posterior draw, where
    the shared centre would give it about 0.9 (the other label's 40 of 42)."""
    measure = macro_f1(2)
    support = label_support(measure, measure.label_columns(), Outputs(np.array([[1], [0]]), None, None, 4), 4)
    np.testing.assert_array_equal(support, [[True, True, True], [False, False, True]])
    rows = [np.eye(6)[0]] * 40 + [np.eye(6)[2]] * 2 + [np.eye(6)[4]] * 2 + [np.eye(6)[5]] * 3 + [np.zeros(6)] * 500
    draws = label_posterior_draws(precision_of(1, 2), measure.label_columns(), np.array(rows), np.ones(len(rows)),
                                  support=support)
    assert np.nan_to_num(draws[:, 0]).max() == 0.0  # 0 / 0: never a true positive


@pytest.mark.slow
def test_passive_macro_f1_covers_when_a_label_is_never_predicted():
    """Three labels at 10% predicted with 3% of the bits flipped, a fourth at 0.2% never predicted (its F1 is 0 on
    the pool): the label-wise posterior without the pool's support gave that label true and false positives near
    the others' rates and covered 0.60 at 1000 labels (100 runs)."""
    rng = np.random.default_rng(3)
    labels = (rng.random((20_000, 4)) < [0.1, 0.1, 0.1, 0.002]).astype(int)
    preds = np.where(rng.random(labels.shape) < 0.03, 1 - labels, labels)
    preds[:, 3] = 0
    pool = Pool.from_multilabel(preds=preds, labels=labels)
    repeats = 60
    result = simulate(pool, make_measure("multilabel_macro_f1", pool), "passive", budget=1000, batch_size=1000,
                      repeats=repeats, seed=0, checkpoints=[1000])
    (row,) = result.checkpoint_rows()
    assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / repeats), row
