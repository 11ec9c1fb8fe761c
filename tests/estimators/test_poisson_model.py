"""The hindsight covariance of a Poisson sample (estimators/poisson_model.py) against an enumeration."""

from itertools import product

import numpy as np
import pytest

from labelwise.estimators.poisson_model import poisson_model_covariance


def test_full_covariance_with_the_true_labels_is_the_enumerated_design_variance():
    # 7 items in 3 groups; every inclusion pattern of a Poisson sample, enumerated exactly
    group = np.array([0, 0, 0, 1, 1, 2, 2])
    label = np.array([1, 0, 0, 1, 1, 0, 1])
    u_of = np.array([[[0.0], [1.0], [-0.5]], [[2.0], [-1.0], [3.0]]])  # (label, group, m=1)
    inclusion = np.array([0.3, 0.6, 0.9])
    u = u_of[label, group, 0]
    pi = inclusion[group]
    N = group.size
    estimates, probs = [], []
    for s in product((0, 1), repeat=N):
        s = np.array(s)
        probs.append(np.prod(np.where(s == 1, pi, 1 - pi)))
        estimates.append(np.sum(s * u / pi) / N)
    probs, estimates = np.array(probs), np.array(estimates)
    exact = probs @ estimates**2 - (probs @ estimates) ** 2

    # labeled: items 0 and 3; the others unlabeled, at the model whose label shares are their true ones
    labeled = np.array([0, 3])
    rest = np.setdiff1d(np.arange(N), labeled)
    unlabeled = np.bincount(group[rest], minlength=3).astype(float)
    shares = np.bincount(group[rest], weights=label[rest], minlength=3) / unlabeled
    model = np.stack([1 - shares, shares], axis=1)
    cov = poisson_model_covariance(u_of, model, unlabeled, inclusion, u[labeled, None], pi[labeled], N)
    assert cov.full[0, 0] == pytest.approx(exact, rel=1e-12)
    # the modal reading puts every unlabeled item at its group's most likely label, and an item labeled for
    # sure (inclusion 1) adds nothing
    assert cov.modal[0, 0] <= cov.full[0, 0]
    certain = poisson_model_covariance(u_of, model, unlabeled, np.ones(3), u[labeled, None], np.ones(2), N)
    assert certain.full[0, 0] == 0.0


def test_expected_exceptions_and_hits_follow_the_model_and_the_inclusion():
    u_of = np.array([[[0.0], [0.0]], [[1.0], [1.0]]])  # a positive moves u by 1 in both groups
    model = np.array([[0.9, 0.1], [0.99, 0.01]])
    unlabeled = np.array([10.0, 200.0])
    inclusion = np.array([0.5, 0.01])
    cov = poisson_model_covariance(u_of, model, unlabeled, inclusion, np.zeros((0, 1)), np.zeros(0), 1000)
    assert cov.exceptions == pytest.approx(10 * 0.1 + 200 * 0.01)
    assert cov.hits == pytest.approx(10 * 0.1 * 0.5 + 200 * 0.01 * 0.01)
