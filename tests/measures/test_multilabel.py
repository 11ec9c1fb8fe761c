"""Multi-label micro and macro F1: exact values, calculus, fast paths and the registry.

Appendix D of E. Yilmaz, P. Hayes, R. Habib, J. Burgess and D. Barber, "Sample
Efficient Model Evaluation", arXiv:2109.12043, 2021 ("Yilmaz et al." below).
Multi-label pools are tested in ``pool/test_multilabel_pool.py``, designs on
them in ``designs/test_multilabel_designs.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import labelwise as lw
from labelwise.draws import Draws, Sample
from labelwise.measures import Measure, finite_difference_jacobian, measure_from_spec
from labelwise.pool import MAX_LABELS, Pool


# ----------------------------------------------------------------------------- exact values
def test_micro_and_macro_f1_of_the_hand_made_pool(tiny_multilabel_pool):
    pool = tiny_multilabel_pool
    micro = lw.make_measure("multilabel_micro_f1", pool)
    macro = lw.make_measure("multilabel_macro_f1", pool)
    # micro: TP 4, FP 2, FN 2 -> 2 * 4 / (2 * 4 + 2 + 2)
    assert lw.true_value(pool, micro)[0] == pytest.approx(2 / 3, abs=1e-15)
    # macro: P = (1 + 1/2 + 1/2) / 3, R = (1 + 1 + 1/3) / 3, F = 2PR / (P + R)
    P, R = 2 / 3, 7 / 9
    assert lw.true_value(pool, macro)[0] == pytest.approx(2 * P * R / (P + R), abs=1e-15)
    assert 2 * P * R / (P + R) == pytest.approx(28 / 39)
    # micro F_alpha (Yilmaz et al., eq. 90): alpha = 1 is precision 4/6, alpha = 0 recall 4/6; alpha = 0.25
    for alpha, value in ((1.0, 4 / 6), (0.0, 4 / 6), (0.25, 4 / (0.25 * 6 + 0.75 * 6))):
        assert lw.true_value(pool, lw.MultiLabelMicroF1(3, alpha=alpha))[0] == pytest.approx(value)


def test_macro_f1_zero_division_and_undefined():
    m = lw.MultiLabelMacroF1(2)
    # label 1 never predicted (a + b = 0): precision 0 (sklearn's zero_division=0), recall 0
    R = np.array([0.2, 0.0, 0.1, 0.0, 0.0, 0.3])
    P_, R_ = (2 / 3 + 0) / 2, (1 + 0) / 2
    assert m.value(R)[0] == pytest.approx(2 * P_ * R_ / (P_ + R_))
    # no true positive anywhere: the harmonic mean of two zeros is undefined, and so is its Jacobian
    assert np.isnan(m.value(np.array([0, 0, 0.1, 0, 0.2, 0.3])))[0]
    assert np.isnan(m.jacobian(np.array([0, 0, 0.1, 0, 0.2, 0.3]))).all()
    assert np.isnan(m.value(np.full(6, np.nan)))[0]
    assert np.isnan(lw.MultiLabelMicroF1(2).value(np.zeros(2)))[0]
    # an estimate before any true positive is sampled reports the whole range
    pool = Pool.from_multilabel(preds=[[1, 0], [0, 0]], labels=[[1, 0], [0, 1]])
    one_draw = Sample(Draws(np.array([1]), np.ones(1), np.ones(1), np.full(1, -1)), pool.labels[[1]], 1)
    est = lw.PassiveDesign().start(pool, m, rng=np.random.default_rng(0)).estimate(m, one_draw)
    assert not est.defined[0] and tuple(est.interval()) == (0.0, 1.0)


# ----------------------------------------------------------------------------- calculus and fast paths
@pytest.mark.parametrize("measure", [lw.MultiLabelMicroF1(4), lw.MultiLabelMicroF1(4, alpha=0.8),
                                     lw.MultiLabelMacroF1(1), lw.MultiLabelMacroF1(4)])
def test_jacobian_matches_finite_differences(measure):
    rng = np.random.default_rng(1)
    R = rng.uniform(0.05, 1.0, size=(3, 5, measure.dim))  # leading axes broadcast
    np.testing.assert_allclose(measure.jacobian(R), finite_difference_jacobian(measure.g, R), rtol=1e-6, atol=1e-9)
    if isinstance(measure, lw.MultiLabelMacroF1) and measure.n_labels > 1:  # label 0 never predicted: P_0 = 0
        R[..., 0] = R[..., measure.n_labels] = 0.0
        J = measure.jacobian(R)
        assert np.all(np.isfinite(J))
        np.testing.assert_array_equal(J[..., measure.n_labels], 0.0)


@pytest.mark.parametrize("name", ["multilabel_micro_f1", "multilabel_macro_f1"])
def test_fast_paths_equal_the_generic_definitions(name):
    pool = lw.make_multilabel_pool(300, 3, prevalence=[0.3, 0.1, 0.05], separation=1.5, seed=4)
    m = lw.make_measure(name, pool)
    out = pool.outputs()
    rng = np.random.default_rng(2)
    y = rng.integers(0, 8, pool.n_items)
    R = rng.uniform(0.05, 0.5, m.dim)
    np.testing.assert_allclose(m.influence_norm_sq(out, y, R), Measure.influence_norm_sq(m, out, y, R), rtol=1e-12)
    label_probs = pool.probs[:, 0]
    np.testing.assert_allclose(m.expected_loss_sum(out, label_probs), Measure.expected_loss_sum(m, out, label_probs))
    np.testing.assert_array_equal(m.loss_is_nonzero(out, y), np.any(m.loss(out, y) != 0, axis=1))
    np.testing.assert_array_equal(m.loss_key(out), pool.preds[:, 0])


def test_registry_specs_and_pool_checks(tmp_path):
    pool = lw.make_multilabel_pool(500, 3, prevalence=0.1, seed=0)
    both = lw.make_measure("multilabel_micro_f1,multilabel_macro_f1", pool)
    assert both.names == ("multilabel_micro_f1", "multilabel_macro_f1")
    for part in both.parts:
        assert part.n_labels == 3 and measure_from_spec(part.spec()) == part
    assert measure_from_spec(lw.MultiLabelMicroF1(3, alpha=0.2).spec()).alpha == 0.2
    # a multi-class pool of 2^C classes is not a multi-label pool: its classes are not label sets
    for n_classes in (3, 4, 8):
        multiclass = Pool.from_arrays(preds=np.arange(8) % n_classes, n_classes=n_classes)
        with pytest.raises(ValueError, match=f"needs a multi-label pool, but the pool has {n_classes} classes") as e:
            lw.make_measure("multilabel_micro_f1", multiclass)
        assert ("older labelwise" in str(e.value)) is (n_classes != 3)  # 2^C classes: maybe an old session file
    with pytest.raises(ValueError, match="label codes 0..7"):
        lw.MultiLabelMacroF1(3).loss(pool.outputs(), np.full(pool.n_items, 8))
    with pytest.raises(ValueError, match="n_labels"):
        lw.MultiLabelMicroF1(MAX_LABELS + 1)
