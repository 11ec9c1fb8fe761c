"""The covariance of a static importance-sampling draw as an oracle model sees it, against enumeration."""

import numpy as np
import pytest

from labelwise.estimators import exception_terms, proposal_model_covariance

# 6 items in 3 groups, 2 labels, m = 2 components of Dg l per (label, group)
GROUP = np.array([0, 0, 1, 1, 2, 2])
U_OF = np.array([  # (C, G, m): u of a group's item for each label
    [[0.0, 0.0], [0.5, -0.2], [0.0, 0.3]],
    [[1.0, 0.4], [-0.7, 0.1], [2.0, -1.0]],
])
Q = np.array([0.30, 0.25, 0.15, 0.15, 0.10, 0.05])


def _groups_of(unlabeled_items):
    U = np.bincount(GROUP[unlabeled_items], minlength=3).astype(float)
    inv_q = np.bincount(GROUP[unlabeled_items], 1.0 / Q[unlabeled_items], minlength=3)
    q = np.bincount(GROUP[unlabeled_items], Q[unlabeled_items], minlength=3)
    return U, inv_q, q


def test_a_model_that_knows_every_label_gives_the_draws_exact_covariance():
    """Nothing labeled, the model a point mass on each group's true label: ``full`` is the covariance of
    ``w u`` under one draw from q, enumerated over the items (``w = 1 / (N q)``), and ``modal`` equals it."""
    truth = np.array([1, 0, 1])  # every item of a group shares its label here
    pi = np.eye(2)[truth]
    N = Q.size
    u_items = U_OF[truth[GROUP], GROUP]  # (N, m)
    wu = u_items / (N * Q[:, None])
    mean = Q @ wu
    exact = np.einsum("x,xi,xj->ij", Q, wu, wu) - np.outer(mean, mean)
    U, inv_q, q = _groups_of(np.arange(N))
    model = proposal_model_covariance(U_OF, pi, U, inv_q, q, np.zeros((0, 2)), np.zeros(0), mean, 40, N)
    np.testing.assert_allclose(model.full, exact, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.modal, exact, rtol=1e-12, atol=1e-15)
    assert model.exceptions == 0 and model.hits == 0


def test_labeled_items_at_their_labels_and_the_rest_at_the_model():
    """Items 0 and 3 labeled; the others at the model's label distribution of their group, item by item."""
    pi = np.array([[0.9, 0.1], [0.2, 0.8], [0.97, 0.03]])
    labeled = np.array([0, 3])
    labels = np.array([1, 0])
    unlabeled = np.setdiff1d(np.arange(6), labeled)
    N, n_draws = 6, 25
    r = np.array([0.1, -0.05])
    u_lab = U_OF[labels, GROUP[labeled]]
    expected_second = sum(np.outer(u, u) / Q[x] for x, u in zip(labeled, u_lab))
    expected_second = expected_second + sum(
        pi[GROUP[x], c] * np.outer(U_OF[c, GROUP[x]], U_OF[c, GROUP[x]]) / Q[x] for x in unlabeled for c in (0, 1))
    mode = np.argmax(pi, axis=1)
    expected_modal = sum(np.outer(u, u) / Q[x] for x, u in zip(labeled, u_lab))
    expected_modal = expected_modal + sum(
        np.outer(U_OF[mode[GROUP[x]], GROUP[x]], U_OF[mode[GROUP[x]], GROUP[x]]) / Q[x] for x in unlabeled)
    U, inv_q, q = _groups_of(unlabeled)
    model = proposal_model_covariance(U_OF, pi, U, inv_q, q, u_lab, Q[labeled], r, n_draws, N)
    np.testing.assert_allclose(model.full, expected_second / N**2 - np.outer(r, r), rtol=1e-12)
    np.testing.assert_allclose(model.modal, expected_modal / N**2 - np.outer(r, r), rtol=1e-12)
    # exceptions: unlabeled items off their group's mode; hits: draws expected to land on one
    _, per_group, miss = exception_terms(U_OF, pi, U, N)
    off_mode = np.array([pi[g, 1 - mode[g]] for g in GROUP[unlabeled]])
    assert model.exceptions == pytest.approx(off_mode.sum())
    assert model.hits == pytest.approx(n_draws * np.sum(off_mode * Q[unlabeled]))
    np.testing.assert_allclose(model.miss, miss)
    np.testing.assert_allclose(per_group.sum(), off_mode.sum())
