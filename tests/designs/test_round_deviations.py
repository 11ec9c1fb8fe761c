"""online-poisson's deviations: the mean while exceptions are rare, the root mean square once they are common."""

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs.poisson_rounds import COMMON_EXCEPTIONS, round_deviations

# three groups, two classes (posterior (G, C) = (3, 2), so an axis mix-up changes the shares): group 0 almost
# surely class 0, group 1 a coin, group 2 class 1 at 0.8; squared influences (C, G)
PI = np.array([[0.999, 0.001], [0.5, 0.5], [0.2, 0.8]])
INF = np.array([[0.0, 4.0, 1.0], [9.0, 1.0, 0.0]])
MEAN = np.array([0.001 * 3.0, 0.5 * 2.0 + 0.5 * 1.0, 0.2 * 1.0])  # sum_c pi_c sqrt(inf_c)
RMS = np.sqrt([0.001 * 9.0, 0.5 * 4.0 + 0.5 * 1.0, 0.2 * 1.0])  # sqrt(sum_c pi_c inf_c)


def test_mean_and_rms_by_hand():
    U = np.array([10.0, 10.0, 10.0])
    np.testing.assert_allclose(round_deviations("mean", PI, INF, U), MEAN)
    np.testing.assert_allclose(round_deviations("rms", PI, INF, U), RMS)


@pytest.mark.parametrize("unlabeled, expected", [
    # exceptions expected among the unlabeled: (1000 * 0.001 + 0 * 0.5 + 0 * 0.2) / 1000 = 0.001 -> the mean
    ((1000.0, 0.0, 0.0), MEAN),
    # (1000 * 0.001 + 10 * 0.5) / 1010 = 0.0059 -> the root mean square
    ((1000.0, 10.0, 0.0), RMS),
    # (1000 * 0.001 + 6 * 0.5) / 1006 = 0.00398, just under 0.004 -> the mean
    ((1000.0, 6.0, 0.0), MEAN),
    # (1000 * 0.001 + 15 * 0.2) / 1015 = 0.00394 -> the mean; 16 of them: 0.00413 -> the root mean square
    ((1000.0, 0.0, 15.0), MEAN),
    ((1000.0, 0.0, 16.0), RMS),
])
def test_auto_takes_the_root_mean_square_once_exceptions_are_common(unlabeled, expected):
    assert COMMON_EXCEPTIONS == 0.004  # the cases above straddle it
    np.testing.assert_allclose(round_deviations("auto", PI, INF, np.array(unlabeled)), expected)


@pytest.mark.slow
def test_the_default_beats_uniform_sampling_on_accuracy_where_errors_are_common():
    """5% positives, a weak system (d = 2, about 5% errors): the mean deviations sample in proportion to
    the chance of an error, which under the model is no better than uniform sampling (their MSE was 1.15
    times passive's at 1000 labels); the root mean square is Neyman's allocation (0.48 times)."""
    pool = lw.make_pool(20_000, prevalence=0.05, separation=2.0, seed=1)
    measure = lw.make_measure("accuracy", pool)

    def mse(design: str) -> float:
        result = lw.simulate(pool, measure, design, budget=1000, batch_size=50, repeats=100, seed=0)
        truth = float(np.atleast_1d(result.true_value)[0])
        return float(np.mean((result.values[-1, :, 0] - truth) ** 2))

    # 100 runs each: the log of the MSE ratio has a standard error of about sqrt(2/100 + 2/100) = 0.2
    assert mse("online-poisson") < 0.75 * mse("passive")
