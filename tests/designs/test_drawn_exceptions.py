"""The conditional reading of online-poisson's interval (designs/unlabeled_covariance.py, ``drawn_variance``): a leaf
where the rounds drew an exception adds the second moment of its error given that draw, checked against the error
of a single Poisson round enumerated over the drawn and undrawn exceptions."""

import numpy as np
import pytest
from scipy import stats

from labelwise.designs.unlabeled_covariance import (
    DrawnExceptions,
    LeafModel,
    drawn_variance,
    missed_in_hindsight,
)
from labelwise.estimators import ModelCovariance
from labelwise.estimators.uncertain_tail import LeafMissed, leaf_missed_moments

SHIFT = 0.02


def _one_round(b: float, left: float, drawn: int) -> tuple[DrawnExceptions, np.ndarray, np.ndarray, np.ndarray]:
    """One block, one round of inclusion probability ``b`` that drew ``drawn`` exceptions (label 1, the block's
    mode 0); the model expects ``left`` exceptions left (Poisson)."""
    weights = np.full(drawn, 1.0 / b)  # c_n = w / b with one round of weight 1
    d = DrawnExceptions(np.zeros(drawn, dtype=np.int64), np.ones(drawn, dtype=np.int64), weights,
                        np.array([1.0 / b - 1.0]), np.array([1.0 - b]))
    return d, np.array([[SHIFT]]), np.array([left]), np.zeros(1, dtype=np.int64)


def _poisson_moments(left: float) -> LeafMissed:
    """E S and Var S of a Poisson(left) count of exceptions, each shifting the estimate by SHIFT."""
    return LeafMissed(np.array([[left * SHIFT]]), np.array([[left * SHIFT**2]]), np.array([left]), np.zeros((1, 0, 1)))


MODE, MOVING = np.zeros(1, dtype=np.int64), np.ones(1, dtype=bool)


def _labeled_part(b: float, drawn: int) -> float:
    """The drawn exceptions' terms in the engine's labeled part (``rounds_moments``: ``w^2 (1/b - 1) u_n^2`` per
    labeled item, the block's mode moving no loss)."""
    return drawn * (1.0 / b - 1.0) * SHIFT**2


@pytest.mark.parametrize("left", [0.2, 2.0])
def test_one_drawn_exception_adds_its_error_given_the_draw(left):
    """One exception drawn at b = 1e-3: the error is ((1/b - 1) - M) SHIFT, M ~ Poisson(left) the ones missed.
    With the labeled part, both readings (the design's given a draw, the model's given the labels) are its
    second moment to O(b)."""
    b = 1e-3
    d, shift, expected, leaf = _one_round(b, left, drawn=1)
    hit, _, variance, _ = drawn_variance(shift, expected, MODE, leaf, MOVING, d, _poisson_moments(left))
    m = np.arange(200)
    exact = stats.poisson.pmf(m, left) @ (((1.0 / b - 1.0) - m) * SHIFT) ** 2
    assert hit.tolist() == [True]
    assert variance[0] + _labeled_part(b, 1) == pytest.approx(exact, rel=3 * b * (1 + left))


def test_many_drawn_exceptions_with_the_labeled_part_add_the_exact_design_variance():
    """Exceptions drawn all the time (b = 0.3, 400 held before the round, the mean 120 drawn): a draw is
    certain, and the labeled part (the 120 drawn) plus this one (the 280 left) is the exact design variance
    of the Horvitz-Thompson sum of the leaf's exceptions, K_0 (1/b - 1) SHIFT^2; the labels' reading is below
    it when the drawn count is its mean."""
    b, before = 0.3, 400.0
    left = before * (1 - b)
    drawn = int(before * b)
    d, shift, expected, leaf = _one_round(b, left, drawn)
    _, _, variance, _ = drawn_variance(shift, expected, MODE, leaf, MOVING, d, _poisson_moments(left))
    assert variance[0] + _labeled_part(b, drawn) == pytest.approx(before * (1 / b - 1) * SHIFT**2, rel=1e-9)


def test_a_leaf_with_no_exception_drawn_adds_nothing_here():
    """Its exceptions left can only be missed: they stay in the hindsight part (not this one)."""
    b = 0.01
    d, shift, expected, leaf = _one_round(b, 3.0, drawn=2)
    d = d._replace(labels=np.zeros(2, dtype=np.int64))  # two labels, both the block's mode
    hit, _, variance, _ = drawn_variance(shift, expected, MODE, leaf, MOVING, d, _poisson_moments(3.0))
    assert hit.tolist() == [False] and variance[0] == 0.0


def test_leaf_moments_feed_the_labels_reading():
    """Two leaves, one hit: the labels' reading Var S_l + (E S_l - o_l)^2 uses the Beta-binomial moments of its
    leaf only (the max with the design's reading, small at b = 0.9 where a drawn exception barely moves)."""
    shift = np.array([[0.1], [0.2]])
    left, leaf = np.array([5.0, 7.0]), np.array([0, 1])
    alpha, beta = np.array([2.0, 1.0]), np.array([8.0, 9.0])
    moments = leaf_missed_moments(shift, left, leaf, alpha, beta)
    b = 0.9
    d = DrawnExceptions(np.array([1]), np.array([1]), np.array([1 / b]), np.array([1 / b - 1] * 2),
                        np.array([1 - b] * 2))
    expected = left * alpha / (alpha + beta)
    hit, _, variance, _ = drawn_variance(shift, expected, np.zeros(2, dtype=np.int64), leaf, np.ones(2, dtype=bool),
                                         d, moments)
    counted = (1 / b - 1) * 0.2
    labels_reading = moments[1][1, 0] + (moments[0][1, 0] - counted) ** 2
    assert hit.tolist() == [False, True]
    assert variance[0] == pytest.approx(labels_reading, rel=1e-12)


X, N_ITEMS = np.array([-2.0, -3.0]), 1000  # the two leaves' logits, the pool size
TWO_LEFT, TWO_SHIFT = np.array([50.0, 80.0]), np.array([[0.002], [0.003]])


def _two_leaves(a: float, b: float, cov: np.ndarray | None = None, strength: float = 40.0) -> LeafModel:
    """Two leaves of one block each, both mode 0, rate sigmoid(a x_l + b) at prior strength ``strength``; with
    ``cov``, the rates spread over a Platt recalibration (a, b) of that covariance by the delta method
    (``Sigma^(1/2)`` times their exact derivative)."""
    p = 1.0 / (1.0 + np.exp(-(a * X + b)))
    spread = None if cov is None else np.linalg.cholesky(cov).T @ (p * (1 - p) * np.stack([X, np.ones(2)]))
    return LeafModel(strength * p, strength * (1 - p), spread)


def _missed_given_hit(model: LeafModel, b: float):
    """missed_in_hindsight of the two leaves after one round of inclusion ``b`` drew an exception in leaf 0."""
    u = np.stack([np.zeros((2, 1)), TWO_SHIFT * N_ITEMS])  # label 0 moves nothing, label 1 by TWO_SHIFT
    d = DrawnExceptions(np.array([0]), np.array([1]), np.array([1 / b]), np.full(2, 1 / b - 1), np.full(2, 1 - b))
    zero = ModelCovariance(np.zeros((1, 1)), np.zeros((1, 1)), np.zeros(1), 0.0, 0.0)
    leaf = np.array([0, 1])
    return missed_in_hindsight(zero, u, model.posterior()[leaf], TWO_LEFT, N_ITEMS, leaf, model, d)


@pytest.mark.parametrize("b, held", [(0.9, [0, 1]), (0.01, [1])])
def test_recalibration_spreads_the_means_the_error_holds(b, held):
    """The Platt map moves E S_l of the leaves whose mean the error holds: the missed leaf 1, and the hit leaf 0
    where the model reads it (b = 0.9); read by the design (b = 0.01, a rare draw) its error has mean 0 whatever
    the map.  The delta method's grad^T Sigma grad takes grad = d(sum over those leaves of E S_l)/d(a, b), here
    by central finite differences."""
    a, c, h = 1.0, -0.5, 1e-6
    cov = np.array([[0.04, 0.01], [0.01, 0.09]])
    model = _two_leaves(a, c)
    reading = drawn_variance(TWO_SHIFT, TWO_LEFT * model.posterior()[:, 1], np.zeros(2, dtype=np.int64),
                             np.array([0, 1]), np.ones(2, dtype=bool),
                             DrawnExceptions(np.array([0]), np.array([1]), np.array([1 / b]), np.full(2, 1 / b - 1),
                                             np.full(2, 1 - b)), _two_leaf_moments(model))
    assert reading.by_model[0, 0] == (0 in held)

    def held_mean(a, c):
        return _two_leaf_moments(_two_leaves(a, c)).mean[held].sum()

    grad = np.array([(held_mean(a + h, c) - held_mean(a - h, c)) / (2 * h),
                     (held_mean(a, c + h) - held_mean(a, c - h)) / (2 * h)])
    spread = _missed_given_hit(_two_leaves(a, c, cov), b).miss - _missed_given_hit(model, b).miss
    assert spread[0] == pytest.approx(grad @ cov @ grad, rel=1e-6)


def _two_leaf_moments(model: LeafModel) -> LeafMissed:
    return leaf_missed_moments(TWO_SHIFT, TWO_LEFT, np.array([0, 1]), model.positive, model.negative)


def test_the_hit_leafs_bias_meets_the_other_leafs_missed_sum_in_one_square():
    """Given the labels the error is (o_0 - S_0) - S_1 with S_0, S_1 independent: its second moment is Var S_0 +
    Var S_1 + (o_0 - E S_0 - E S_1)^2 (b = 0.9: the model's reading is the larger), the hit leaf's part in
    ``modal``, the rest (with the cross term) in ``miss``."""
    b, model = 0.9, _two_leaves(1.0, -0.5)
    mean, variance, none_left, _ = _two_leaf_moments(model)
    counted = (1 / b - 1) * TWO_SHIFT[0, 0]
    out = _missed_given_hit(model, b)
    want = variance.sum() + (counted - mean.sum()) ** 2
    assert out.modal[0, 0] + out.miss[0] == pytest.approx(want, rel=1e-12)
    # the hit leaf's exceptions left are read with the draw: the missed case holds leaf 1's only
    assert out.modal[0, 0] == pytest.approx(variance[0, 0] + (counted - mean[0, 0]) ** 2, rel=1e-12)
    assert out.exceptions == pytest.approx(none_left[1], rel=1e-12)


def test_two_hit_leaves_read_by_the_model_add_their_biases_before_squaring():
    """Both leaves drew an exception (b = 0.9): Var S_0 + Var S_1 + (o_0 - E S_0 + o_1 - E S_1)^2."""
    b, model = 0.9, _two_leaves(1.0, -0.5)
    moments = _two_leaf_moments(model)
    d = DrawnExceptions(np.array([0, 1]), np.array([1, 1]), np.full(2, 1 / b), np.full(2, 1 / b - 1),
                        np.full(2, 1 - b))
    expected = TWO_LEFT * model.posterior()[:, 1]
    leaf = np.array([0, 1])
    hit, _, variance, bias = drawn_variance(TWO_SHIFT, expected, leaf * 0, leaf, np.ones(2, dtype=bool), d, moments)
    total_bias = ((1 / b - 1) * TWO_SHIFT[:, 0] - moments.mean[:, 0]).sum()
    assert hit.tolist() == [True, True]
    assert bias[0] == pytest.approx(total_bias, rel=1e-12)
    assert variance[0] == pytest.approx(moments.variance.sum() + total_bias**2, rel=1e-12)


def test_a_rare_draw_is_read_by_the_design():
    """One exception drawn at b = 0.01 with 2 expected left: the design's reading, D / P = (1/b - 1) SHIFT^2 2 /
    (1 - exp(-2 b / (1 - b))) ~ (SHIFT / b)^2, beats the labels' (2 + (2 - 99)^2) SHIFT^2; it has mean 0, so no
    bias crosses the other leaves' missed sum."""
    b, left = 0.01, 2.0
    d, shift, expected, leaf = _one_round(b, left, drawn=1)
    _, _, variance, bias = drawn_variance(shift, expected, MODE, leaf, MOVING, d, _poisson_moments(left))
    design = (1 / b - 1) * SHIFT**2 * left / -np.expm1(-left * b / (1 - b))
    assert design > (left + (left - (1 / b - 1)) ** 2) * SHIFT**2
    assert variance[0] == pytest.approx(design, rel=1e-12) and bias[0] == 0.0


def _three_leaves(b: np.ndarray, weights: np.ndarray, blocks: np.ndarray) -> tuple:
    """Three leaves of one block each (mode 0, 50 items left, shift SHIFT), Beta rates of mean 0.02 / 0.08 / 0.08;
    one round of inclusion ``b`` per block drew an exception (label 1) in each of ``blocks`` with coefficient
    ``weights``.  Returns the reading, the moments and each hit leaf's count beyond itself ``o_l``."""
    shift, left, leaf = np.full((3, 1), SHIFT), np.full(3, 50.0), np.arange(3)
    moments = leaf_missed_moments(shift, left, leaf, np.array([1.0, 4.0, 4.0]), np.array([49.0, 46.0, 46.0]))
    expected = left * np.array([0.02, 0.08, 0.08])
    d = DrawnExceptions(blocks, np.ones(blocks.size, dtype=np.int64), weights, 1 / b - 1, 1 - b)
    reading = drawn_variance(shift, expected, np.zeros(3, dtype=np.int64), leaf, np.ones(3, dtype=bool), d, moments)
    counted = np.bincount(blocks, weights=(weights - 1) * SHIFT, minlength=3)
    return reading, moments, counted, expected


def test_model_read_biases_of_opposite_signs_are_not_credited_with_cancelling():
    """Leaf 0 counts more exceptions than the model expects missed, leaf 1 fewer (b = 0.5, both read by the
    model): their biases' cross term would narrow the interval; each is squared on its own instead,
    Var S_0 + Var S_1 + B_0^2 + B_1^2, and the bias reported is their sum."""
    b = np.full(3, 0.5)
    reading, moments, counted, _ = _three_leaves(b, np.array([1 + 3 * 0.04 / SHIFT, 2.0]), np.array([0, 1]))
    biases = counted[:2] - moments.mean[:2, 0]
    assert biases[0] > 0 > biases[1] and reading.by_model[:2, 0].all()
    assert reading.variance[0] == pytest.approx(moments.variance[:2, 0].sum() + (biases**2).sum(), rel=1e-12)
    assert reading.variance[0] > moments.variance[:2, 0].sum() + biases.sum() ** 2
    assert reading.bias[0] == pytest.approx(biases.sum(), rel=1e-12)


def test_a_design_read_leaf_beside_a_model_read_one_adds_its_design_variance_and_no_bias():
    """Leaf 0 drew an exception at b = 0.01 (read by the design: D_0 / P_0, mean 0), leaf 1 at b = 0.5 (read by
    the model: Var S_1 + B_1^2); the bias is leaf 1's alone, so nothing of leaf 0's count crosses it."""
    b = np.array([0.01, 0.5, 0.5])
    reading, moments, counted, expected = _three_leaves(b, np.array([1 / 0.01, 2.0]), np.array([0, 1]))
    design = (1 / b[0] - 1) * SHIFT**2 * expected[0] / -np.expm1(-expected[0] / (1 - b[0]) * b[0])
    bias = counted[1] - moments.mean[1, 0]
    assert reading.hit.tolist() == [True, True, False] and reading.by_model[:, 0].tolist() == [False, True, False]
    assert reading.variance[0] == pytest.approx(design + moments.variance[1, 0] + bias**2, rel=1e-12)
    assert reading.bias[0] == pytest.approx(bias, rel=1e-12)
