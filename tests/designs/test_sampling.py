"""Sampling machinery shared by the designs: drawing until n new items, batches, groups of items.

``draw_with_replacement`` and ``draw_batch`` (:mod:`labelwise.designs.sampling`)
and ``GroupedPool`` (:mod:`labelwise.designs.grouped`).
"""

import numpy as np
import pytest
from scipy import stats

from labelwise.designs.grouped import GroupedPool
from labelwise.designs.sampling import draw_batch, draw_with_replacement


def test_draw_with_replacement_stops_at_exactly_n_new_items():
    rng = np.random.default_rng(0)
    q = np.array([0.5, 0.3, 0.1, 0.05, 0.05])
    labeled = np.array([True, False, False, False, False])
    items = draw_with_replacement(np.cumsum(q), 3, labeled, rng)
    new = np.unique(items[~labeled[items]])
    assert new.size == 3
    # the last draw is the one that completed the batch
    assert not labeled[items[-1]] and items[-1] not in items[:-1]


# ---------------------------------------- draw_batch == i.i.d. drawing
def _batch_setup():
    q = np.array([0.30, 0.05, 0.20, 0.02, 0.15, 0.08, 0.12, 0.08])
    labeled = np.zeros(q.size, dtype=bool)
    labeled[[0, 2, 4, 6]] = True
    return q, labeled


@pytest.mark.slow
def test_draw_batch_labeled_draws_are_negative_binomial_and_multinomial():
    q, labeled = _batch_setup()
    lab_items = np.flatnonzero(labeled)
    unl_items = np.flatnonzero(~labeled)
    L, U = q[labeled].sum(), q[~labeled].sum()
    p_unl = U / (U + L)
    rng = np.random.default_rng(12)
    sample_unl = lambda k: rng.choice(unl_items, size=k, p=q[unl_items] / U)
    n_new, n_batches = 3, 4000
    n_lab_total = 0
    expected, variance = 0.0, 0.0
    per_item = np.zeros(q.size)
    for _ in range(n_batches):
        items, counts = draw_batch(sample_unl, U, lab_items, q[lab_items], n_new, rng)
        is_lab = labeled[items]
        m_u = int(np.sum(~is_lab))
        assert np.all(counts[~is_lab] == 1) and np.all(counts >= 1)
        assert np.unique(items[is_lab]).size == is_lab.sum()  # one row per labeled item
        assert np.array_equal(is_lab, np.arange(items.size) >= m_u)  # unlabeled draws first
        unl = items[~is_lab]
        assert np.unique(unl).size == n_new and unl[-1] not in unl[:-1]  # last draw completes the batch
        n_lab_total += int(counts[is_lab].sum())
        np.add.at(per_item, items[is_lab], counts[is_lab])
        # NegBin(M_U, P(unlabeled)): mean M_U L / U, variance M_U (1 - p) / p^2
        expected += m_u * L / U
        variance += m_u * (1 - p_unl) / p_unl**2
    z = (n_lab_total - expected) / np.sqrt(variance)
    assert abs(z) < 4, z
    assert n_lab_total == pytest.approx(expected, rel=0.05)
    share = q[lab_items] / L
    z_items = (per_item[lab_items] - n_lab_total * share) / np.sqrt(n_lab_total * share * (1 - share))
    assert np.all(np.abs(z_items) < 4), z_items


@pytest.mark.slow
def test_draw_batch_matches_naive_iid_drawing_in_distribution():
    """Aggregated batches vs plain draws from the full q until 3 new items (draw_with_replacement)."""
    q, labeled = _batch_setup()
    lab_items = np.flatnonzero(labeled)
    unl_items = np.flatnonzero(~labeled)
    U = q[~labeled].sum()
    rng = np.random.default_rng(21)
    sample_unl = lambda k: rng.choice(unl_items, size=k, p=q[unl_items] / U)
    n_new, n_batches = 3, 4000
    agg_total, agg_lab = np.empty(n_batches), np.empty(n_batches)
    naive_total, naive_lab = np.empty(n_batches), np.empty(n_batches)
    agg_items, naive_items = np.zeros(q.size), np.zeros(q.size)
    cdf = np.cumsum(q)
    for b in range(n_batches):
        items, counts = draw_batch(sample_unl, U, lab_items, q[lab_items], n_new, rng)
        agg_total[b], agg_lab[b] = counts.sum(), counts[labeled[items]].sum()
        np.add.at(agg_items, items, counts)
        drawn = draw_with_replacement(cdf, n_new, labeled, rng)
        naive_total[b], naive_lab[b] = drawn.size, labeled[drawn].sum()
        np.add.at(naive_items, drawn, 1)
    for a, n in ((agg_total, naive_total), (agg_lab, naive_lab)):
        se = np.sqrt(a.var(ddof=1) / a.size + n.var(ddof=1) / n.size)
        assert abs(a.mean() - n.mean()) < 4 * se, (a.mean(), n.mean(), se)
    # whole distributions of draws per batch, and the draws per item
    bins = np.array([0, 4, 6, 8, 10, 13, 17, 25, np.inf])
    table = np.stack([np.histogram(agg_total, bins)[0], np.histogram(naive_total, bins)[0]])
    assert stats.chi2_contingency(table[:, table.sum(axis=0) > 0])[1] > 1e-3
    assert stats.chi2_contingency(np.stack([agg_items, naive_items]))[1] > 1e-3
    # and both agree with i.i.d. theory: E[draws] = E[unlabeled draws] / P(unlabeled)
    assert agg_total.mean() == pytest.approx((agg_total - agg_lab).mean() / U, rel=0.05)


# --------------------------------------------------- groups
def test_grouped_pool_q_of_and_unlabeled_sampling():
    blocks = np.array([0, 0, 0, 1, 1, 1, 1, 2, 2])
    key = np.array([5, 5, 9, 5, 5, 9, 9, 5, 5])  # arbitrary key values are densified
    g = GroupedPool(blocks, key)
    assert g.n_groups == 5
    assert np.array_equal(g.sizes, [2, 1, 2, 2, 2])
    assert np.array_equal(g.of_item, [0, 0, 1, 2, 2, 3, 3, 4, 4])
    assert np.array_equal(g.block, [0, 0, 1, 1, 2])
    q_group = np.array([0.05, 0.10, 0.07, 0.12, 0.09])
    items = np.arange(9)
    np.testing.assert_array_equal(g.q_of(items, q_group, np.empty(0)), q_group[g.of_item])
    # labeled in two calls and out of order; q_labeled is aligned with labeled_items
    g.mark_labeled(np.array([5]))
    g.mark_labeled(np.array([2, 0]))
    assert np.array_equal(g.labeled_items, [5, 2, 0])
    assert np.array_equal(g.unlabeled, [1, 0, 2, 1, 2])
    q_lab = np.array([0.5, 0.3, 0.2])
    q = g.q_of(items, q_group, q_lab)
    expected = q_group[g.of_item].copy()
    expected[[5, 2, 0]] = q_lab
    np.testing.assert_array_equal(q, expected)
    np.testing.assert_array_equal(g.q_of(np.array([0, 1, 0, 6]), q_group, q_lab), [0.2, 0.05, 0.2, 0.12])

    mass = q_group * g.unlabeled  # group 1 (item 2 only) is fully labeled: no mass
    rng = np.random.default_rng(5)
    drawn = g.sample_unlabeled(20000, mass, rng)
    assert not np.any(g.known[drawn])
    assert set(np.unique(drawn)) == {1, 3, 4, 6, 7, 8}
    # a group with probability mass / total, then a uniform unlabeled member: each item q_group
    freq = np.bincount(drawn, minlength=9) / drawn.size
    target = np.where(g.known, 0.0, q_group[g.of_item]) / mass.sum()
    se = np.sqrt(target * (1 - target) / drawn.size)
    assert np.all(np.abs(freq - target) <= 4 * se + 1e-12)
    # a batch: probabilities and weights from q_of, rows of labeled items aggregated
    d = g.draw(q_group, q_lab, 2, n_pool=9, rng=rng)
    np.testing.assert_array_equal(d.prob, g.q_of(d.items, q_group, q_lab))
    np.testing.assert_allclose(d.weight, 1 / (9 * d.prob))
    assert np.unique(d.items[~g.known[d.items]]).size == 2
    g.reset()
    assert g.labeled_items.size == 0 and not g.known.any() and np.array_equal(g.unlabeled, g.sizes)


def test_grouped_pool_without_key_makes_one_group_per_item():
    g = GroupedPool(np.array([0, 0, 1, 1]), None)
    assert g.n_groups == 4 and np.all(g.sizes == 1)
    g.mark_labeled(np.array([1]))
    drawn = g.sample_unlabeled(500, np.array([0.25, 0.25, 0.25, 0.25]) * g.unlabeled, np.random.default_rng(0))
    assert 1 not in drawn and set(np.unique(drawn)) == {0, 2, 3}


@pytest.mark.slow
def test_grouped_sampling_draws_members_uniformly_and_never_labeled_ones():
    """Both paths of GroupedPool.sample_members (enumeration, rejection) give uniform distinct unlabeled members."""
    blocks = np.repeat([0, 1], [40, 400])
    groups = GroupedPool(blocks, np.zeros(440, dtype=int))
    groups.mark_labeled(np.array([0, 1, 2, 3, 400, 401]))
    rng = np.random.default_rng(0)
    freq = np.zeros(440)
    runs = 3000
    for _ in range(runs):
        picked = groups.sample_members(np.array([0, 1]), np.array([20, 5]), rng)  # enumerate / reject
        assert picked.size == 25 and np.unique(picked).size == 25 and not groups.known[picked].any()
        freq[picked] += 1
    for members, k in ((np.arange(4, 40), 20), (np.arange(40, 440)[~groups.known[40:440]], 5)):
        p = k / members.size
        z = (freq[members] - runs * p) / np.sqrt(runs * p * (1 - p))
        assert np.all(np.abs(z) < 4.5), z
    assert freq[groups.known].sum() == 0
    with pytest.raises(ValueError, match="counts"):
        groups.sample_members(np.array([0]), np.array([37]), rng)
