"""Temperature scaling of multi-class probabilities from weighted labels."""

import math

import numpy as np
import pytest
from scipy.special import softmax

from labelwise.oracle.temperature import fit_temperature, tempered


def test_tempered_is_the_softmax_of_the_log_probabilities_over_t():
    p = np.random.default_rng(0).dirichlet([1.0, 2.0, 3.0], size=50)
    assert tempered(p, 2.5) == pytest.approx(softmax(np.log(p) / 2.5, axis=1), abs=1e-12)
    assert tempered(p, 1.0) == pytest.approx(p, abs=1e-12)
    assert np.all(np.argmax(tempered(p, 4.0), axis=1) == np.argmax(p, axis=1))  # the ranking within an item stays


def test_the_fitted_temperature_matches_the_labels_frequencies_by_hand():
    """Every item at p = (0.8, 0.1, 0.1) with labels 60/20/20: the likelihood is largest where the tempered first
    class has probability 0.6, 0.8^x / (0.8^x + 2 0.1^x) = 0.6 with x = 1/T, i.e. 8^x = 3: T = ln 8 / ln 3."""
    p = np.tile([0.8, 0.1, 0.1], (10, 1))
    labels = np.array([0] * 6 + [1] * 2 + [2] * 2)
    assert fit_temperature(p, labels) == pytest.approx(math.log(8) / math.log(3), rel=1e-4)
    # weights count labels: the first class's labels at weight 2 make its share 12/16 = 0.75, 8^x = 6
    weights = np.where(labels == 0, 2.0, 1.0)
    assert fit_temperature(p, labels, weights) == pytest.approx(math.log(8) / math.log(6), rel=1e-4)
    assert fit_temperature(p[:0], labels[:0]) == 1.0


@pytest.mark.parametrize("scale", [1.0, 3.0, 0.5])
def test_the_temperature_fitted_to_a_generated_pool_undoes_its_logit_scale(scale):
    """``make_multiclass_pool`` multiplies the Bayes posterior's logits by ``logit_scale``; fitted to every label
    of 30,000 items the temperature is that factor (standard error about 1% here)."""
    import labelwise as lw

    pool = lw.make_multiclass_pool(30_000, class_shares=(0.6, 0.3, 0.1), separation=1.5, logit_scale=scale, seed=2)
    assert pool.n_classes == 3 and np.bincount(pool.labels) / pool.n_items == pytest.approx([0.6, 0.3, 0.1], abs=0.01)
    assert fit_temperature(pool.probs[:, 0, :], pool.labels) == pytest.approx(scale, rel=0.05)


def test_a_multiclass_pool_refuses_shares_that_do_not_sum_to_one():
    import labelwise as lw

    with pytest.raises(ValueError, match=r"class_shares: at least two positive shares summing to 1, got \[0.5, 0.4\]"):
        lw.make_multiclass_pool(100, class_shares=(0.5, 0.4))
