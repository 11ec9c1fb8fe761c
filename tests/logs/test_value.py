"""Policy value from a subsampled log: exact unbiasedness by enumeration, coverage by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.logs import (
    effective_size,
    keep_weights,
    policy_value,
    target_probabilities,
)

# six logged rows: rewards (three zero), propensities, the new policy's probabilities of the logged action
REWARD = np.array([0.0, 1.0, 0.0, 0.5, 0.0, 1.0])
PROPENSITY = np.array([0.5, 0.25, 0.2, 0.5, 1.0, 0.4])
TARGET = np.array([1.0, 1.0, 0.5, 0.3, 1.0, 0.0])
KEEP = np.array([0.3, 0.7, 0.1, 0.5, 0.9, 0.2])  # rows with a non-zero reward are kept whatever their rate


def test_keep_weights_count_a_kept_zero_as_one_over_the_keep_rate():
    np.testing.assert_allclose(keep_weights(REWARD, KEEP), [1 / 0.3, 1, 10, 1, 1 / 0.9, 1])
    assert effective_size(REWARD, KEEP) == pytest.approx(1 / 0.3 + 10 + 1 / 0.9 + 3)


@pytest.mark.parametrize("clip", [None, 2.0])
def test_horvitz_thompson_is_unbiased_over_every_keep_pattern(keep_patterns, clip):
    ratio = TARGET / PROPENSITY if clip is None else np.minimum(TARGET / PROPENSITY, clip)
    full_log = np.mean(REWARD * ratio)  # the estimator on the log before subsampling
    expected, total = 0.0, 0.0
    for kept, prob in keep_patterns(REWARD, KEEP):
        est = policy_value(REWARD[kept], PROPENSITY[kept], TARGET[kept], KEEP[kept], n_logged=REWARD.size,
                           clip=clip)
        assert est.method == "ht"
        expected += prob * est.estimate
        total += prob
    assert total == pytest.approx(1.0)
    assert expected == pytest.approx(full_log, rel=1e-12)


def test_effective_size_is_unbiased_for_the_logged_row_count(keep_patterns):
    expected = sum(prob * effective_size(REWARD[kept], KEEP[kept]) for kept, prob in keep_patterns(REWARD, KEEP))
    assert expected == pytest.approx(REWARD.size, rel=1e-12)


def test_n_dropped_gives_the_horvitz_thompson_count():
    kept = np.array([True, True, False, True, True, True])
    args = (REWARD[kept], PROPENSITY[kept], TARGET[kept], KEEP[kept])
    by_dropped = policy_value(*args, n_dropped=1)
    assert by_dropped == policy_value(*args, n_logged=6)
    assert by_dropped.effective_size == 6
    assert by_dropped.estimate == pytest.approx(np.sum(REWARD * TARGET / PROPENSITY) / 6)


def test_eta_and_self_normalized_forms_on_a_hand_example():
    w = keep_weights(REWARD, KEEP)
    y = REWARD * TARGET / PROPENSITY
    eta = policy_value(REWARD, PROPENSITY, TARGET, KEEP)
    assert eta.method == "eta" and eta.effective_size == pytest.approx(w.sum())
    assert eta.estimate == pytest.approx(y.sum() / w.sum())
    snips = policy_value(REWARD, PROPENSITY, TARGET, KEEP, method="snips")
    assert snips.estimate == pytest.approx(y.sum() / (w @ (TARGET / PROPENSITY)))


def test_target_probabilities_of_a_deterministic_policy():
    np.testing.assert_array_equal(target_probabilities([1, 2, 0], [1, 0, 0]), [1.0, 0.0, 1.0])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"propensity": [0.5, 0.0]}, "propensity: row 1"),
    ({"keep_rate": [0.5, 1.5]}, "keep_rate: row 1"),
    ({"keep_rate": 0.0}, "keep_rate: row 0"),
    ({"method": "ht"}, "needs the logged row count"),
    ({"n_logged": 1}, "cannot have left 2 kept rows"),
])
def test_bad_input_names_the_row_or_the_argument(kwargs, message):
    args = {"reward": [0.0, 1.0], "propensity": [0.5, 0.5], "target_prob": [1.0, 1.0], "keep_rate": 0.5} | kwargs
    method, n_logged = args.pop("method", None), args.pop("n_logged", None)
    with pytest.raises(ValueError, match=message):
        policy_value(**args, method=method, n_logged=n_logged)


@pytest.mark.slow
@pytest.mark.parametrize("keep_rate", [1.0, 0.1, 0.01])
@pytest.mark.parametrize("method", ["eta", "ht", "snips"])
def test_intervals_cover_at_their_level(bandit, keep_rate, method):
    repeats, rng = 300, np.random.default_rng(11)
    hits, errors, widths = [], [], []
    for _ in range(repeats):
        log = bandit(4000, keep_rate, rng)
        est = policy_value(log["reward"], log["propensity"], log["target"], log["keep_rate"], method=method,
                           n_logged=log["n_logged"] if method == "ht" else None)
        hits.append(est.lower <= bandit.value <= est.upper)
        errors.append(est.estimate - bandit.value)
        widths.append(est.upper - est.lower)
    coverage, se = np.mean(hits), np.sqrt(0.95 * 0.05 / repeats)
    assert abs(coverage - 0.95) <= 3 * se
    assert np.mean(widths) <= 2 * 3.92 * np.sqrt(np.mean(np.square(errors)))
