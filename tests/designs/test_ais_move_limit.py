"""``move_limit``: the largest ``|u|`` whose draw moves an AIS estimate of ``n`` draws by at most the measure's range."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from labelwise.designs.ais import move_limit


def test_a_draw_at_the_limit_moves_the_estimate_by_exactly_the_range():
    # N = 1000 items, n = 50 draws: a draw of proposal q moves the estimate by u / (N q n)
    N, n = 1000, 50
    q = np.array([0.0, 1e-20, 2e-3, 0.5])
    span = np.array([1.0, 2.0, np.inf])
    limit = move_limit(q, N * n, span)
    assert limit.shape == (4, 3)
    assert_array_equal(limit[0], np.inf)  # q = 0: no draw, nothing to hold
    assert_array_equal(limit[:, 2], np.inf)  # an unbounded component: no range
    assert_allclose(limit[1:, :2] / (N * q[1:, None] * n), np.broadcast_to(span[:2], (3, 2)), rtol=1e-14)


def test_the_model_variance_holds_each_item_by_its_own_proposal_and_the_draws_of_the_estimate():
    """One stage, item by item: ``full = sum_x E_pi[h_x^2] / (N^2 q_x) - r^2`` with ``h_x = clip(u, +-span N n q_x)``,
    the unlabeled items at the model's labels and the labeled ones at their own. With ``n = 3`` draws the limit binds
    on the items of small ``q``; a limit ``n`` times tighter, or labeled items left unheld, differ."""
    import labelwise as lw
    from labelwise.designs import AISDesign

    rng = np.random.default_rng(0)
    n_items = 400
    labels = (rng.random(n_items) < 0.2).astype(np.int8)
    x = rng.standard_normal(n_items) + 2.0 * labels
    logit = 3.0 * (2.0 * x - 2.0 - np.log(4.0))  # over-confident: tiny proposals where the model later sees errors
    pool = lw.Pool.from_arrays(None, preds=(x > 1).astype(np.int8), scores=logit, probs=1 / (1 + np.exp(-logit)),
                               labels=labels)
    measure = lw.make_measure("accuracy", pool)
    session = lw.Session(pool, measure, AISDesign(), seed=1, budget=40)
    session.run(lw.TruthOracle(pool), 40, 40)  # one batch: one stage
    sampler = session.sampler
    ((_, q_group, _, _),) = sampler._history
    gm = sampler.gm
    R = gm.influence()[1]
    J = measure.finite_jacobian(R)
    n_draws = 3
    full = sampler._model_covariance(R, n_draws).full[0, 0]
    # item by item
    q = q_group[gm.groups.of_item]  # every item's proposal at the stage (a labeled one's too: drawn at it)
    pi = gm.posterior(interval=True)[gm.groups.of_item]  # (N, C)
    labeled = np.zeros(n_items, dtype=bool)
    labeled[gm.groups.labeled_items] = True
    outputs = pool.outputs()
    u = np.stack([measure.loss(outputs, np.full(n_items, c)) @ J.T for c in (0, 1)])[..., 0]  # (C, N)
    limit = 1.0 * n_items * n_draws * q
    held = np.clip(u, -limit, limit)
    second = np.where(labeled, held[pool.labels.astype(int), np.arange(n_items)] ** 2, (pi.T * held**2).sum(axis=0))
    expected = np.sum(second / q) / n_items**2 - (J @ R)[0] ** 2
    assert np.any(np.abs(u) > limit)  # the limit binds somewhere
    assert full == pytest.approx(expected, rel=1e-9)
