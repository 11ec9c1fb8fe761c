"""Tests of the generalized measures.

The measures are Definition 1 and Table 1 of N. G. Marchant and
B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation under
Extreme Class Imbalance", KDD 2021.

Every measure is checked against a direct computation from a confusion matrix
(or its definition), every analytic Jacobian against central finite
differences, and the fast pool-wide paths (influence norms, expected losses,
loss support) against brute force from ``loss`` and ``jacobian``.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from labelwise.measures import (
    MCC,
    Accuracy,
    BalancedAccuracy,
    Brier,
    CombinedMeasure,
    CustomMeasure,
    FBeta,
    FowlkesMallows,
    MacroF1,
    Measure,
    MicroF1,
    MultiLabelMacroF1,
    MultiLabelMicroF1,
    PerClassPrecision,
    PerClassRecall,
    PRCurve,
    Precision,
    Recall,
    combine,
    finite_difference_jacobian,
    make_measure,
    measure_from_spec,
    measure_names,
    register_measure,
    registry,
)
from labelwise.measures.base import RatioOfTotals
from labelwise.measures.binary import BinaryMeasure
from labelwise.pool import Outputs, Pool, PoolError

N_BIN = 300
N_MC = 400
C_MC = 4
THRESHOLDS = [0.2, 0.5, 0.8]


# --------------------------------------------------------------------------- data
def _binary_pool(with_probs: bool = True) -> Pool:
    rng = np.random.default_rng(20240601)
    scores = rng.random((N_BIN, 2))
    preds = (scores >= 0.5).astype(int)
    preds[:, 1] = (scores[:, 1] >= 0.35).astype(int)
    labels = (rng.random(N_BIN) < 0.15 + 0.6 * scores[:, 0]).astype(int)
    probs = np.clip(0.8 * scores + 0.1, 0.0, 1.0) if with_probs else None
    return Pool.from_arrays(preds=preds, scores=scores, probs=probs, labels=labels)


def _multiclass_pool() -> Pool:
    rng = np.random.default_rng(7)
    labels = rng.integers(0, C_MC, N_MC)
    noise = rng.integers(0, C_MC, N_MC)
    preds = np.where(rng.random(N_MC) < 0.6, labels, noise)
    probs = rng.dirichlet(np.ones(C_MC), size=(N_MC, 1))
    return Pool.from_arrays(preds=preds, probs=probs, labels=labels, n_classes=C_MC)


BIN = _binary_pool()
MC = _multiclass_pool()
assert BIN.n_systems == 2 and MC.n_classes == C_MC
assert set(np.unique(MC.labels)) == set(range(C_MC)) and set(np.unique(MC.preds)) == set(range(C_MC))


def _mean_loss(m: Measure, pool: Pool, y: np.ndarray | None = None) -> np.ndarray:
    return m.loss(pool.outputs(), pool.labels if y is None else y).mean(axis=0)


# ------------------------------------------------------------------ direct metrics
def _counts(y, f, positive=1):
    yb, fb = np.asarray(y) == positive, np.asarray(f) == positive
    tp = np.sum(yb & fb)
    fp = np.sum(~yb & fb)
    fn = np.sum(yb & ~fb)
    tn = np.sum(~yb & ~fb)
    return float(tp), float(fp), float(fn), float(tn)


def _direct_binary(kind, y, f, beta=1.0):
    tp, fp, fn, tn = _counts(y, f)
    if kind == "accuracy":
        return (tp + tn) / (tp + fp + fn + tn)
    if kind == "balanced_accuracy":
        return (tp / (tp + fn) + tn / (tn + fp)) / 2
    if kind == "precision":
        return tp / (tp + fp)
    if kind == "recall":
        return tp / (tp + fn)
    if kind == "fbeta":
        b2 = beta**2
        return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)
    if kind == "mcc":
        return (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    if kind == "fowlkes_mallows":
        return tp / np.sqrt((tp + fp) * (tp + fn))
    raise AssertionError(kind)


def _direct_brier(y, p1):
    # Two-class Brier score: sum over both classes of (p_c - 1{y=c})^2.
    p = np.stack([1 - p1, p1], axis=1)
    onehot = np.eye(2)[y]
    return np.mean(np.sum((p - onehot) ** 2, axis=1))


def _direct_pr_curve(y, scores, thresholds):
    prec, rec = [], []
    for t in thresholds:
        above = scores >= t
        tp = np.sum(above & (y == 1))
        prec.append(tp / np.sum(above))
        rec.append(tp / np.sum(y == 1))
    return np.array(prec + rec)


def _confusion(y, f, C):
    M = np.zeros((C, C))
    np.add.at(M, (y, f), 1)
    return M  # rows: truth, columns: prediction


def _direct_per_class(y, f, C):
    M = _confusion(y, f, C)
    tp = np.diag(M)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = tp / M.sum(axis=0)
        recall = tp / M.sum(axis=1)
        f1 = 2 * tp / (2 * tp + (M.sum(axis=0) - tp) + (M.sum(axis=1) - tp))
    return precision, recall, f1


def _direct_macro_f1(y, f, C):
    # Mean of per-class F1 over the classes that occur in truth or predictions.
    _, _, f1 = _direct_per_class(y, f, C)
    present = np.isin(np.arange(C), np.concatenate([y, f]))
    return np.mean(f1[present])


def _direct_micro_f1(y, f, C):
    M = _confusion(y, f, C)
    tp = np.trace(M)
    fp = M.sum() - tp  # every off-diagonal item is one FP (of its prediction)...
    fn = M.sum() - tp  # ...and one FN (of its true class)
    return 2 * tp / (2 * tp + fp + fn)


# ------------------------------------------------------------------ custom measure
def _custom_loss(outputs: Outputs, y):
    f = outputs.preds[:, 0]
    return np.stack([(f == 0) & (y == 1), f == 0], axis=1).astype(float)


def _custom_g(R):
    R = np.asarray(R, dtype=float)
    r = R[..., 0] / R[..., 1]  # false omission rate FN / (FN + TN)
    return np.stack([r, np.sqrt(R[..., 1]) * (1 - r)], axis=-1)


def _custom_jac(R):
    R = np.asarray(R, dtype=float)
    R1, R2 = R[..., 0], R[..., 1]
    # second component: sqrt(R2) - R1 / sqrt(R2)
    row1 = np.stack([1 / R2, -R1 / R2**2], axis=-1)
    row2 = np.stack([-1 / np.sqrt(R2), 0.5 / np.sqrt(R2) + 0.5 * R1 / R2**1.5], axis=-1)
    return np.stack([row1, row2], axis=-2)


def _custom() -> CustomMeasure:
    return CustomMeasure(_custom_loss, _custom_g, dim=2, names=("for", "sqrt_npv"), lower=0.0, upper=1.0)


def _direct_custom(y, f):
    _tp, _fp, fn, tn = _counts(y, f)
    r = fn / (fn + tn)
    return np.array([r, np.sqrt((fn + tn) / len(y)) * (1 - r)])


def _combined() -> CombinedMeasure:
    return CombinedMeasure(
        [FBeta(1.0, system=0, system_name="a"), MCC(system=1, system_name="b"), Brier(system=0),
         PRCurve(THRESHOLDS, system=1), MacroF1(2, system=0)]
    )


def _direct_combined():
    y, f = BIN.labels, BIN.preds
    return np.concatenate([
        [_direct_binary("fbeta", y, f[:, 0])],
        [_direct_binary("mcc", y, f[:, 1])],
        [_direct_brier(y, BIN.probs[:, 0])],
        _direct_pr_curve(y, BIN.scores[:, 1], THRESHOLDS),
        [_direct_macro_f1(y, f[:, 0], 2)],
    ])


# (id, pool, factory, direct value)
def _cases():
    y, f = BIN.labels, BIN.preds
    ym, fm = MC.labels, MC.preds[:, 0]
    prec, rec, _ = _direct_per_class(ym, fm, C_MC)
    cases = []
    for s in (0, 1):
        cases += [
            (f"accuracy-s{s}", BIN, lambda s=s: Accuracy(system=s), [_direct_binary("accuracy", y, f[:, s])]),
            (f"balanced_accuracy-s{s}", BIN, lambda s=s: BalancedAccuracy(system=s),
             [_direct_binary("balanced_accuracy", y, f[:, s])]),
            (f"precision-s{s}", BIN, lambda s=s: Precision(system=s), [_direct_binary("precision", y, f[:, s])]),
            (f"recall-s{s}", BIN, lambda s=s: Recall(system=s), [_direct_binary("recall", y, f[:, s])]),
            (f"f1-s{s}", BIN, lambda s=s: FBeta(1.0, system=s), [_direct_binary("fbeta", y, f[:, s])]),
            (f"f0.5-s{s}", BIN, lambda s=s: FBeta(0.5, system=s),
             [_direct_binary("fbeta", y, f[:, s], beta=0.5)]),
            (f"mcc-s{s}", BIN, lambda s=s: MCC(system=s), [_direct_binary("mcc", y, f[:, s])]),
            (f"fowlkes_mallows-s{s}", BIN, lambda s=s: FowlkesMallows(system=s),
             [_direct_binary("fowlkes_mallows", y, f[:, s])]),
            (f"brier-s{s}", BIN, lambda s=s: Brier(system=s), [_direct_brier(y, BIN.probs[:, s])]),
            (f"pr_curve-s{s}", BIN, lambda s=s: PRCurve(THRESHOLDS, system=s),
             _direct_pr_curve(y, BIN.scores[:, s], THRESHOLDS)),
        ]
    cases += [
        ("class_precision", MC, lambda: PerClassPrecision(C_MC), prec),
        ("class_recall", MC, lambda: PerClassRecall(C_MC), rec),
        ("macro_f1", MC, lambda: MacroF1(C_MC), [_direct_macro_f1(ym, fm, C_MC)]),
        ("micro_f1", MC, lambda: MicroF1(C_MC), [_direct_micro_f1(ym, fm, C_MC)]),
        ("micro_f1-is-accuracy", MC, lambda: MicroF1(C_MC), [np.mean(ym == fm)]),
        # On a binary pool the one-vs-rest class-1 measures are the binary ones.
        ("class_precision-binary", BIN, lambda: PerClassPrecision(2, system=1),
         [_direct_binary("precision", 1 - y, 1 - f[:, 1]), _direct_binary("precision", y, f[:, 1])]),
        ("class_recall-binary", BIN, lambda: PerClassRecall(2, system=1),
         [_direct_binary("recall", 1 - y, 1 - f[:, 1]), _direct_binary("recall", y, f[:, 1])]),
        ("macro_f1-binary", BIN, lambda: MacroF1(2),
         [(_direct_binary("fbeta", y, f[:, 0]) + _direct_binary("fbeta", 1 - y, 1 - f[:, 0])) / 2]),
        ("combined", BIN, _combined, _direct_combined()),
        ("custom", BIN, _custom, _direct_custom(y, f[:, 0])),
    ]
    return cases


CASES = _cases()
CASE_IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_g_of_mean_loss_equals_direct_metric(case):
    _, pool, factory, expected = case
    m = factory()
    L = m.loss(pool.outputs(), pool.labels)
    assert L.shape == (pool.n_items, m.dim)
    assert np.all(np.isfinite(L))
    G = m.g(L.mean(axis=0))
    assert G.shape == (m.size,)
    assert_allclose(G, np.asarray(expected, dtype=float), rtol=1e-12, atol=1e-12)
    assert m.lower.shape == m.upper.shape == (m.size,)
    assert np.all((G >= m.lower - 1e-12) & (G <= m.upper + 1e-12))


def test_direct_metrics_are_sane():
    # Guard the test oracles themselves with hand-computed values.
    y = np.array([1, 1, 1, 0, 0, 0, 0, 1])
    f = np.array([1, 1, 0, 1, 0, 0, 0, 0])
    assert _counts(y, f) == (2.0, 1.0, 2.0, 3.0)
    assert_allclose(_direct_binary("fbeta", y, f), 4 / 7)
    assert_allclose(_direct_binary("mcc", y, f), (6 - 2) / np.sqrt(3 * 4 * 4 * 5))
    assert_allclose(_direct_binary("balanced_accuracy", y, f), (2 / 4 + 3 / 4) / 2)
    ym = np.array([0, 0, 1, 2, 2, 2])
    fm = np.array([0, 1, 1, 2, 0, 2])
    # F1: class 0: 2*1/(2+1+1)=.5, class 1: 2/(2+1+0)=2/3, class 2: 4/(4+0+1)=.8
    assert_allclose(_direct_macro_f1(ym, fm, 4), np.mean([0.5, 2 / 3, 0.8]))
    assert_allclose(_direct_micro_f1(ym, fm, 3), 4 / 6)


# ---------------------------------------------------------------- multi-class specifics
def test_multiclass_layout_names_and_bounds():
    m = PerClassPrecision(3, system=1, system_name="sysB")
    assert m.names == ("precision[class=0][sysB]", "precision[class=1][sysB]", "precision[class=2][sysB]")
    assert m.dim == 6 and m.size == 3
    assert PerClassRecall(3).names == ("recall[class=0]", "recall[class=1]", "recall[class=2]")
    assert MacroF1(5).names == ("macro_f1",) and MacroF1(5).dim == 10
    assert MicroF1(5, system_name="x").names == ("micro_f1[x]",) and MicroF1(5).dim == 2
    for cls in (PerClassPrecision, PerClassRecall, MacroF1, MicroF1):
        mm = cls(3)
        assert_array_equal(mm.lower, 0.0)
        assert_array_equal(mm.upper, 1.0)

    outputs = Outputs(np.array([[0, 2], [1, 1], [2, 0]]), None, None, 3)
    y = np.array([0, 1, 2])
    # system 1 predicts [2, 1, 0]: only item 1 correct.
    assert_array_equal(
        m.loss(outputs, y),
        [[0, 0, 0, 0, 0, 1], [0, 1, 0, 0, 1, 0], [0, 0, 0, 1, 0, 0]],
    )
    assert_array_equal(
        PerClassRecall(3, system=1).loss(outputs, y),
        [[0, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]],
    )
    assert_array_equal(
        MacroF1(3, system=1).loss(outputs, y),
        [[0, 0, 0, 0.5, 0, 0.5], [0, 1, 0, 0, 1, 0], [0, 0, 0, 0.5, 0, 0.5]],
    )
    assert_array_equal(MicroF1(3, system=1).loss(outputs, y), [[0, 1], [1, 1], [0, 1]])


def test_multiclass_rejects_bad_input():
    for bad in (1, 0, 2.5, "3"):
        with pytest.raises(ValueError):
            MacroF1(bad)
    m = PerClassPrecision(3)
    outputs = Outputs(np.array([[0], [1]]), None, None, 3)
    with pytest.raises(ValueError, match="labels"):
        m.loss(outputs, np.array([0, 3]))
    with pytest.raises(ValueError, match="predictions"):
        m.loss(Outputs(np.array([[0], [5]]), None, None, 6), np.array([0, 1]))
    with pytest.raises(PoolError, match="preds"):
        MicroF1(3).loss(Outputs(None, np.zeros((2, 1)), None, 3), np.array([0, 1]))


def test_macro_f1_absent_class_is_excluded():
    # A 6-class measure on data using only 4 classes: classes 4 and 5 have a zero
    # denominator and are left out of the average (sklearn's convention).
    m = MacroF1(6)
    ym, fm = MC.labels, MC.preds[:, 0]
    R = _mean_loss(m, MC)
    assert_array_equal(R[[4, 5, 10, 11]], 0.0)
    assert_allclose(m.g(R), [_direct_macro_f1(ym, fm, 6)], rtol=1e-12)
    assert_allclose(m.g(R), MacroF1(C_MC).g(_mean_loss(MacroF1(C_MC), MC)), rtol=1e-12)
    # A class that occurs only in predictions (F1 = 0) is *not* excluded.
    f2 = fm.copy()
    f2[:3] = 5
    out2 = Outputs(f2[:, None], None, None, 6)
    R2 = m.loss(out2, ym).mean(axis=0)
    assert R2[11] > 0
    assert_allclose(m.g(R2), [_direct_macro_f1(ym, f2, 6)], rtol=1e-12)
    _, _, f1 = _direct_per_class(ym, f2, 6)
    assert_allclose(m.g(R2), [np.mean(f1[[0, 1, 2, 3, 5]])], rtol=1e-12)
    # Jacobian: zero columns for the excluded classes, finite elsewhere; FD agrees on the others.
    J = m.jacobian(R)
    assert J.shape == (1, 12)
    assert_array_equal(J[0, [4, 5, 10, 11]], 0.0)
    assert np.all(np.isfinite(J))
    keep = [0, 1, 2, 3, 6, 7, 8, 9]
    J_fd = finite_difference_jacobian(m.g, R)
    assert_allclose(J[0, keep], J_fd[0, keep], rtol=1e-5, atol=1e-8)
    # No active class: undefined.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(m.g(np.zeros(12))).all()
        assert np.isnan(m.jacobian(np.zeros(12))).all()


# ---------------------------------------------------------------------- Jacobians
def _jacobian_measures():
    return [
        ("accuracy", Accuracy()),
        ("balanced_accuracy", BalancedAccuracy()),
        ("precision", Precision()),
        ("recall", Recall()),
        ("f1", FBeta(1.0)),
        ("f0.5", FBeta(0.5)),
        ("f2", FBeta(2.0)),
        ("mcc", MCC()),
        ("fowlkes_mallows", FowlkesMallows()),
        ("brier", Brier()),
        ("pr_curve", PRCurve([0.1, 0.3, 0.6, 0.9])),
        ("class_precision", PerClassPrecision(3)),
        ("class_recall", PerClassRecall(3)),
        ("macro_f1", MacroF1(4)),
        ("micro_f1", MicroF1(3)),
        ("combined", _combined()),
    ]


JAC = _jacobian_measures()


def _interior_points(d, shape=(), seed=0):
    # Components in (0.1, 0.45): valid for every measure (e.g. R2, R3 in (0, 1)
    # and R2 + R3 - R1 <= 1 for balanced accuracy / MCC).
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 0.45, size=shape + (d,))


@pytest.mark.parametrize("m", [j[1] for j in JAC], ids=[j[0] for j in JAC])
def test_analytic_jacobian_matches_finite_differences(m):
    for seed in range(4):
        R = _interior_points(m.dim, seed=seed)
        J = m.jacobian(R)
        assert J.shape == (m.size, m.dim)
        assert_allclose(J, finite_difference_jacobian(m.g, R), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("m", [j[1] for j in JAC], ids=[j[0] for j in JAC])
def test_g_and_jacobian_broadcast_over_leading_axes(m):
    R = _interior_points(m.dim, shape=(5,), seed=11)
    G = m.g(R)
    J = m.jacobian(R)
    assert G.shape == (5, m.size)
    assert J.shape == (5, m.size, m.dim)
    assert_allclose(J, finite_difference_jacobian(m.g, R), rtol=1e-5, atol=1e-7)
    for k in range(5):
        assert_allclose(G[k], m.g(R[k]), rtol=1e-14)
        assert_allclose(J[k], m.jacobian(R[k]), rtol=1e-14)
    R2 = _interior_points(m.dim, shape=(2, 3), seed=12)
    assert m.g(R2).shape == (2, 3, m.size)
    assert m.jacobian(R2).shape == (2, 3, m.size, m.dim)
    assert_allclose(m.jacobian(R2)[1, 2], m.jacobian(R2[1, 2]), rtol=1e-14)


def test_custom_measure_finite_difference_jacobian_is_right():
    m = _custom()
    for seed in range(3):
        R = _interior_points(2, shape=(5,), seed=seed)
        assert m.jacobian(R).shape == (5, 2, 2)
        assert_allclose(m.jacobian(R), _custom_jac(R), rtol=1e-5, atol=1e-8)
    with_jac = CustomMeasure(_custom_loss, _custom_g, dim=2, names=("a", "b"), jacobian_fn=_custom_jac)
    R = _interior_points(2, seed=5)
    assert_allclose(with_jac.jacobian(R), _custom_jac(R))
    assert m.spec() is None


# --------------------------------------------------- fast paths against brute force
def _brute_influence(m: Measure, outputs: Outputs, y, R):
    with np.errstate(divide="ignore", invalid="ignore"):
        J = np.nan_to_num(m.jacobian(np.asarray(R, dtype=float)), nan=0.0, posinf=0.0, neginf=0.0)
    u = m.loss(outputs, y) @ J.T
    return np.sum(u * u, axis=1)


def _brute_expected(m: Measure, outputs: Outputs, label_probs):
    n = label_probs.shape[0]
    return sum(label_probs[:, c] @ m.loss(outputs, np.full(n, c)) for c in range(label_probs.shape[1]))


# Thresholds 1.5 and 2 lie above every score: their R_i are 0 (undefined precision).
PR_WIDE = [-0.5, 0.1, 0.25, 0.5, 0.75, 0.95, 1.5, 2.0]


def _influence_cases():
    pr = PRCurve(PR_WIDE, system=0)
    R_pr = _mean_loss(pr, BIN)
    assert np.sum(R_pr[: pr.L] == 0) == 2 and np.sum(R_pr[pr.L : 2 * pr.L] == 0) == 2
    R_pr_noneg = _mean_loss(pr, BIN, np.zeros(N_BIN, dtype=int))  # no positives: recall undefined
    comb = combine(pr, FBeta(1.0, system=1), MCC(system=0), MacroF1(2, system=1), PerClassRecall(2))
    cases = [
        ("pr_curve", BIN, pr, R_pr),
        ("pr_curve-no-positives", BIN, pr, R_pr_noneg),
        ("pr_curve-random-R", BIN, pr, _interior_points(pr.dim, seed=3)),
        ("combined", BIN, comb, _mean_loss(comb, BIN)),
    ]
    # Multi-class: a 6-class measure on 4-class data has zero denominators.
    for name, m in [("class_precision", PerClassPrecision(6)), ("class_recall", PerClassRecall(6)),
                    ("macro_f1", MacroF1(6)), ("micro_f1", MicroF1(6))]:
        cases.append((name, MC, m, _mean_loss(m, MC)))
        cases.append((f"{name}-random-R", MC, m, _interior_points(m.dim, seed=4)))
    return cases


INF_CASES = _influence_cases()


@pytest.mark.parametrize("case", INF_CASES, ids=[c[0] for c in INF_CASES])
def test_influence_norm_sq_matches_brute_force(case):
    _, pool, m, R = case
    outputs = pool.outputs()
    C = getattr(m, "n_classes", pool.n_classes)  # every label the measure accepts, used or not
    label_sets = [pool.labels] + [np.full(pool.n_items, c) for c in range(C)]
    for y in label_sets:
        fast = m.influence_norm_sq(outputs, y, R)
        assert fast.shape == (pool.n_items,)
        assert np.all(np.isfinite(fast))
        brute = _brute_influence(m, outputs, y, R)
        assert_allclose(fast, brute, rtol=1e-9, atol=1e-12)
        # and the generic base-class implementation agrees too
        assert_allclose(Measure.influence_norm_sq(m, outputs, y, R), brute, rtol=1e-9, atol=1e-12)
    assert np.any(m.influence_norm_sq(outputs, pool.labels, R) > 0)


def test_pr_curve_influence_is_not_trivially_zero():
    pr = PRCurve(PR_WIDE)
    R = _mean_loss(pr, BIN)
    v0 = pr.influence_norm_sq(BIN.outputs(), np.zeros(N_BIN, dtype=int), R)
    v1 = pr.influence_norm_sq(BIN.outputs(), np.ones(N_BIN, dtype=int), R)
    assert np.all(v1 > 0)  # positives always move recall
    # negatives scored below every threshold but -0.5 still move precision at -0.5
    assert np.all(v0 > 0)
    assert not np.allclose(v0, v1)


def _expected_cases():
    rng = np.random.default_rng(99)
    P2 = rng.dirichlet(np.ones(2), size=N_BIN)
    P4 = rng.dirichlet(np.ones(C_MC), size=N_MC)
    pr = PRCurve(PR_WIDE, system=1)
    comb = combine(PRCurve(THRESHOLDS), FBeta(0.5, system=1), BalancedAccuracy(), PerClassPrecision(2, system=1),
                   MicroF1(2))
    return [
        ("pr_curve", BIN, pr, P2),
        ("pr_curve-onehot", BIN, pr, np.eye(2)[BIN.labels]),
        ("combined", BIN, comb, P2),
        ("class_precision", MC, PerClassPrecision(C_MC), P4),
        ("class_recall", MC, PerClassRecall(C_MC), P4),
        ("macro_f1", MC, MacroF1(C_MC), P4),
        ("micro_f1", MC, MicroF1(C_MC), P4),
        # rows not summing to one, and fewer columns than classes
        ("macro_f1-unnormalised", MC, MacroF1(6), 0.7 * P4),
        ("class_precision-unnormalised", MC, PerClassPrecision(5), rng.random((N_MC, C_MC))),
        ("class_recall-unnormalised", MC, PerClassRecall(5), rng.random((N_MC, C_MC))),
        ("micro_f1-unnormalised", MC, MicroF1(5), rng.random((N_MC, C_MC))),
    ]


EXP_CASES = _expected_cases()


@pytest.mark.parametrize("case", EXP_CASES, ids=[c[0] for c in EXP_CASES])
def test_expected_loss_sum_matches_brute_force(case):
    _, pool, m, P = case
    fast = m.expected_loss_sum(pool.outputs(), P)
    assert fast.shape == (m.dim,)
    assert_allclose(fast, _brute_expected(m, pool.outputs(), P), rtol=1e-10, atol=1e-9)
    assert_allclose(Measure.expected_loss_sum(m, pool.outputs(), P), fast, rtol=1e-10, atol=1e-9)


def test_expected_loss_sum_with_onehot_labels_is_loss_sum():
    for m, pool in [(PRCurve(PR_WIDE), BIN), (MacroF1(C_MC), MC), (PerClassRecall(C_MC), MC)]:
        onehot = np.eye(pool.n_classes)[pool.labels]
        assert_allclose(m.expected_loss_sum(pool.outputs(), onehot),
                        m.loss(pool.outputs(), pool.labels).sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("y_kind", ["true", "zeros", "ones"])
def test_loss_is_nonzero_matches_loss(y_kind):
    y = {"true": BIN.labels, "zeros": np.zeros(N_BIN, dtype=int), "ones": np.ones(N_BIN, dtype=int)}[y_kind]
    outputs = BIN.outputs()
    # With the lowest threshold at 0.3 some items have an all-zero loss when y = 0.
    for m in [PRCurve([0.3, 0.6, 1.5]), PRCurve([1.5, 2.0]), combine(PRCurve([0.7]), PRCurve([0.9], system=1))]:
        expected = np.any(m.loss(outputs, y) != 0, axis=1)
        got = m.loss_is_nonzero(outputs, y)
        assert got.dtype == bool
        assert_array_equal(got, expected)
        if y_kind == "zeros":
            assert not expected.all()  # the check is not vacuous
    for m in [PerClassPrecision(6), PerClassRecall(6), MacroF1(6), MicroF1(6)]:
        assert_array_equal(m.loss_is_nonzero(MC.outputs(), MC.labels),
                           np.any(m.loss(MC.outputs(), MC.labels) != 0, axis=1))


# ---------------------------------------------------------------- registry & specs
SPEC_MEASURES = [
    Accuracy(system=1, system_name="b"),
    BalancedAccuracy(),
    Precision(positive=0),
    Recall(system=1),
    FBeta(1.0),
    FBeta(0.5, system=1, system_name="b"),
    MCC(),
    FowlkesMallows(),
    Brier(system=1),
    PRCurve(THRESHOLDS, system=1, system_name="b"),
    PerClassPrecision(C_MC, system=0, system_name="s"),
    PerClassRecall(C_MC),
    MacroF1(C_MC, system_name="s"),
    MicroF1(C_MC),
    combine(FBeta(1.0, system=0, system_name="a"), FBeta(1.0, system=1, system_name="b"), MacroF1(2)),
]


@pytest.mark.parametrize("m", SPEC_MEASURES, ids=[repr(m)[:40] for m in SPEC_MEASURES])
def test_spec_round_trip(m):
    spec = m.spec()
    assert spec is not None
    rebuilt = measure_from_spec(json.loads(json.dumps(spec)))
    assert type(rebuilt) is type(m)
    assert rebuilt.names == m.names and rebuilt.dim == m.dim
    assert rebuilt.spec() == spec
    assert rebuilt == m and hash(rebuilt) == hash(m)
    R = _interior_points(m.dim, shape=(3,), seed=21)
    assert_allclose(rebuilt.g(R), m.g(R), rtol=1e-15)
    pool = MC if getattr(m, "n_classes", 2) == C_MC else BIN
    assert_allclose(rebuilt.loss(pool.outputs(), pool.labels), m.loss(pool.outputs(), pool.labels))


def test_multiclass_spec_format_and_equality():
    m = MacroF1(5, system=2, system_name="z")
    assert m.spec() == {"measure": "macro_f1", "n_classes": 5, "system": 2, "system_name": "z"}
    assert PerClassPrecision(3).spec()["measure"] == "class_precision"
    assert PerClassRecall(3).spec()["measure"] == "class_recall"
    assert MicroF1(3).spec()["measure"] == "micro_f1"
    assert measure_from_spec(m.spec()) == m
    assert MacroF1(5) != MacroF1(6) and MacroF1(5) != MicroF1(5)


def test_measures_with_equal_specs_are_equal():
    """Equal specs make equal measures with equal hashes, for every kind; no spec means identity."""
    pairs = [
        (make_measure("f1", BIN), make_measure("f1", BIN)),
        (Precision(), Precision()),
        (FBeta(2.0, system=1), FBeta(2, system=1)),
        (PerClassRecall(C_MC, system_name="s"), PerClassRecall(C_MC, system_name="s")),
        (MultiLabelMacroF1(3), MultiLabelMacroF1(3)),
        (make_measure("f1,precision", BIN, systems="all"), make_measure("f1,precision", BIN, systems="all")),
        (PRCurve([0.2, 0.5, 0.8]), PRCurve([0.8, 0.5, 0.2, 0.5])),
    ]
    for a, b in pairs:
        assert a is not b and a == b and hash(a) == hash(b)
    assert len({Precision(), Precision(), Recall()}) == 2
    unequal = [
        (FBeta(2), FBeta(1)),
        (Precision(), Recall()),
        (Precision(), Precision(system=1)),
        (Precision(), Precision(positive=0)),
        (MacroF1(C_MC), MicroF1(C_MC)),
        (MultiLabelMicroF1(3), MultiLabelMicroF1(3, alpha=0.2)),
        (combine(Precision(system=0, system_name="a"), Recall(system=0, system_name="a")),
         combine(Recall(system=0, system_name="a"), Precision(system=0, system_name="a"))),
        (PRCurve([0.2, 0.5]), PRCurve([0.2, 0.6])),
        (Precision(), "precision"),
    ]
    for a, b in unequal:
        assert a != b
    custom = _custom()
    same = custom
    assert same == custom and hash(same) == hash(custom)
    assert custom != _custom() and combine(custom, Precision()) != combine(custom, Precision())


def test_build_measure_all_systems():
    m = make_measure("f1,precision", BIN, systems="all")
    assert m.size == 4
    assert m.names == ("f1[system0]", "f1[system1]", "precision[system0]", "precision[system1]")
    y, f = BIN.labels, BIN.preds
    expected = [_direct_binary("fbeta", y, f[:, 0]), _direct_binary("fbeta", y, f[:, 1]),
                _direct_binary("precision", y, f[:, 0]), _direct_binary("precision", y, f[:, 1])]
    assert_allclose(m.g(_mean_loss(m, BIN)), expected, rtol=1e-12)
    # one system of a multi-system pool still gets its name; names list and spaces are accepted
    single = make_measure([" recall "], BIN, systems=1)
    assert single.names == ("recall[system1]",)


def test_build_measure_multiclass_and_errors():
    m = make_measure("macro_f1,class_recall,micro_f1", MC)
    assert m.names == ("macro_f1",) + tuple(f"recall[class={c}]" for c in range(C_MC)) + ("micro_f1",)
    ym, fm = MC.labels, MC.preds[:, 0]
    _, rec, _ = _direct_per_class(ym, fm, C_MC)
    assert_allclose(m.g(_mean_loss(m, MC)),
                    np.concatenate([[_direct_macro_f1(ym, fm, C_MC)], rec, [np.mean(ym == fm)]]), rtol=1e-12)
    assert measure_from_spec(m.spec()).names == m.names
    for bad in ("nope", "f1,bogus", "fbeta:abc"):
        with pytest.raises(ValueError):
            make_measure(bad, BIN)
    with pytest.raises(ValueError):
        make_measure("", BIN)
    with pytest.raises(ValueError):
        make_measure("f1", BIN, systems=2)
    with pytest.raises(ValueError):
        measure_from_spec({"measure": "nope"})


def test_register_measure_builds_by_name_and_from_spec(monkeypatch):
    with monkeypatch.context() as mp:
        mp.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # undone when the block ends

        @register_measure("specificity")
        class Specificity(RatioOfTotals, BinaryMeasure):
            """True negative rate: ``l = [(1 - y)(1 - f(x)), 1 - y]``, ``g = R1 / R2``."""

            kind = "specificity"
            dim = 2

            def loss(self, outputs, y):
                yb, f = self._yf(outputs, y)
                return np.stack([(1 - yb) * (1 - f), 1 - yb], axis=1)

        assert measure_names()[-1] == "specificity"
        m = make_measure("f1, specificity", BIN, systems="all")
        assert m.names[2:] == ("specificity[system0]", "specificity[system1]")
        y, f = BIN.labels, BIN.preds
        assert_allclose(m.g(_mean_loss(m, BIN))[2:], [np.mean(f[y == 0, s] == 0) for s in (0, 1)], rtol=1e-12)
        rebuilt = measure_from_spec(json.loads(json.dumps(m.spec())))
        assert rebuilt == m and type(rebuilt.parts[2]) is Specificity
        with pytest.raises(ValueError, match="already registered"):
            register_measure("specificity", Specificity)
        with pytest.raises(ValueError, match="choose from .*, specificity"):
            make_measure("nope", BIN)
        # options: constructor arguments from the pool and the text after the colon; an unlisted alias
        register_measure("npv", Specificity, options=lambda pool, system, arg: {"positive": int(arg or 0)}, usage=())
        assert make_measure("npv:1", BIN) == Specificity(positive=1, system_name="system0")
        assert "npv" not in measure_names()
        for bad in ("", "Upper", "a:b", "a,b"):
            with pytest.raises(ValueError, match="register_measure: name"):
                register_measure(bad, Specificity)
    assert "specificity" not in measure_names()
    with pytest.raises(ValueError, match="unknown measure 'specificity'; registered: accuracy, "):
        measure_from_spec(m.spec()["combine"][2])


def test_measure_needing_probs_on_pool_without_probs():
    pool = _binary_pool(with_probs=False)
    with pytest.raises(PoolError, match="probs"):  # found when the measure is made, not at the first estimate
        make_measure("brier", pool)
    m = make_measure("brier", _binary_pool())
    with pytest.raises(PoolError, match="probs"):
        m.loss(pool.outputs(), pool.labels)
    with pytest.raises(PoolError, match="probs"):
        m.influence_norm_sq(pool.outputs(), pool.labels, np.array([0.3]))
    no_preds = Pool.from_arrays(scores=BIN.scores[:, 0], labels=BIN.labels)
    with pytest.raises(PoolError, match="preds"):
        make_measure("macro_f1", no_preds)


# ------------------------------------------------------------- undefined values
UNDEFINED = [
    (BalancedAccuracy(), [0.0, 0.0, 0.3]),
    (Precision(), [0.0, 0.0]),
    (Recall(), [0.0, 0.0]),
    (FBeta(0.5), [0.0, 0.0]),
    (MCC(), [0.0, 0.0, 0.4]),
    (FowlkesMallows(), [0.0, 0.2, 0.0]),
    (PRCurve([0.5, 0.9]), [0.4, 0.0, 0.2, 0.0, 0.0]),
    (PerClassPrecision(3), [0.1, 0.0, 0.2, 0.3, 0.0, 0.4]),
    (PerClassRecall(3), [0.0] * 6),
    (MacroF1(3), [0.0] * 6),
    (MicroF1(3), [0.0, 0.0]),
    (_custom(), [0.0, 0.0]),
]


@pytest.mark.parametrize("m,R", UNDEFINED, ids=[repr(u[0])[:30] for u in UNDEFINED])
def test_zero_denominator_gives_non_finite_without_warnings(m, R):
    R = np.asarray(R, dtype=float)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        G = m.value(R)
        Gb = m.value(np.stack([R, R]))
    assert G.shape == (m.size,) and Gb.shape == (2, m.size)
    assert not np.all(np.isfinite(G))
    assert_array_equal(np.isfinite(Gb[0]), np.isfinite(G))


def test_zero_denominator_only_affects_its_components():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        G = PerClassPrecision(3).value([0.1, 0.0, 0.2, 0.3, 0.0, 0.4])
        assert_allclose(G[[0, 2]], [1 / 3, 0.5])
        assert np.isnan(G[1])
        G = PRCurve([0.5, 0.9]).value([0.4, 0.0, 0.2, 0.0, 0.5])
        assert_allclose(G[[0, 2, 3]], [0.5, 0.4, 0.0])
        assert np.isnan(G[1])
        # Macro F1 with one undefined class averages the others.
        assert_allclose(MacroF1(3).value([0.1, 0.0, 0.2, 0.2, 0.0, 0.4]), [(0.5 + 0.5) / 2])


def test_a_measure_of_several_systems_is_named_once_per_measure():
    """``simulate --json`` printed ``"measure": "recall+recall"`` for recall of two systems."""
    from labelwise import make_measure, make_pool

    pool = make_pool(500, prevalence=0.1, n_systems=2, seed=1)
    recall = make_measure("recall", pool, systems="all")
    assert recall.name == "recall" and recall.names == ("recall[system0]", "recall[system1]")
    assert make_measure("f1,precision", pool, systems="all").name == "f1+precision"


def test_a_two_class_measure_is_refused_by_name_on_a_pool_of_more_naming_exactly_the_measures_that_fit():
    """``f1``, ``auc``, ``mcc`` and the other two-class measures took class 1 against the rest on a pool of more
    classes, silently; built by name they are refused, naming every measure that builds on the pool.  The refusal
    said they "score class 1 against the rest" (not what ``mcc`` or ``balanced_accuracy`` do), and on a multi-label
    pool it named only the ``multilabel_*`` measures, though accuracy, brier and the other measures of any number of
    classes work there too, on the label sets as classes."""
    ml = Pool.from_multilabel(preds=[[1, 0], [0, 1]], probs=[[0.9, 0.2], [0.3, 0.7]], labels=[[1, 0], [1, 1]],
                              label_names=["a", "b"])
    of_any = ["accuracy", "brier", "class_precision", "class_recall", "macro_f1", "micro_f1"]
    of_labels = ["multilabel_micro_f1", "multilabel_macro_f1"]
    of_label_sets = f"{', '.join(of_labels)}, or of the label sets as classes: {', '.join(of_any)}"
    three = Pool.from_arrays(preds=[0, 1, 2], scores=[0.1, 0.5, 0.9], probs=np.full((3, 1, 3), 1 / 3),
                             labels=[0, 1, 1])  # not 2^C classes: no multi-label reading
    cases = ((three, f"3 classes; choose a measure of them all: {', '.join(of_any)}", of_any),
             (ml, f"2 labels; choose a measure of them all: {of_label_sets}", of_labels + of_any))
    for pool, end, fit in cases:
        built = []
        for name in dict.fromkeys(u.partition(":")[0] for u in measure_names()):
            try:
                make_measure(name, pool)
            except ValueError as refused:
                if name not in of_labels:  # those refuse a pool of other than 2^C classes themselves
                    assert str(refused) == f"measure {name!r} is defined for two classes, and this pool has {end}"
            else:
                built.append(name)
        assert sorted(built) == sorted(fit)  # the list is exactly what builds
    assert FBeta(positive=2).loss(MC.outputs(), MC.labels).shape == (MC.n_items, 2)  # by hand: one class
    # on the label sets (codes 1, 3; predicted 1, 2): accuracy is exact match, brier sums over the joint probabilities
    assert_array_equal(make_measure("accuracy", ml).loss(ml.outputs(), ml.labels)[:, 0], [0.0, 1.0])
    joint = [[0.1 * 0.8, 0.9 * 0.8, 0.1 * 0.2, 0.9 * 0.2], [0.7 * 0.3, 0.3 * 0.3, 0.7 * 0.7, 0.3 * 0.7]]
    truth = np.eye(4)[[1, 3]]
    assert_allclose(make_measure("brier", ml).loss(ml.outputs(), ml.labels)[:, 0],
                    ((np.array(joint) - truth) ** 2).sum(axis=1), rtol=1e-12)


def test_the_brier_score_of_class_probabilities_sums_over_every_class():
    """On a multi-class pool the Brier score took class 1's probability against the rest; it is
    ``sum_c (p_c - 1{y=c})^2``, whose two-class form is the binary loss ``2 (p1 - y)^2``."""
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]])
    pool = Pool.from_arrays(preds=probs.argmax(axis=1), probs=probs[:, None, :], labels=[0, 2, 0])
    loss = make_measure("brier", pool).loss(pool.outputs(), pool.labels)[:, 0]
    assert_allclose(loss, [0.09 + 0.04 + 0.01, 0.01 + 0.09 + 0.16, 0.64 + 0.25 + 0.09], rtol=1e-12)
    assert_allclose(make_measure("brier", BIN).loss(BIN.outputs(), BIN.labels).mean(),
                    _direct_brier(BIN.labels, BIN.probs[:, 0]), rtol=1e-12)
