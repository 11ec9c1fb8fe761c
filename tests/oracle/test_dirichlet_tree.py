"""Tests of the Dirichlet-tree oracle model.

Section 4 (hyperparameters of section 5.2) of N. G. Marchant and
B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation under
Extreme Class Imbalance", KDD 2021.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax

from labelwise.oracle.tree import DirichletTreeModel
from labelwise.partition import Hierarchy, score_hierarchy


# ---------------------------------------------------------------- brute force helpers (loops over nodes)
def node_leaves(h: Hierarchy, level: int, j: int) -> list[int]:
    span = h.branching ** (h.depth - level)
    return list(range(j * span, (j + 1) * span))


def brute_hyper(h: Hierarchy, probs: np.ndarray, lam: float = 1.0):
    C = probs.shape[1]
    s = np.zeros((h.n_leaves, C))
    for k in range(h.n_leaves):
        members = h.blocks == k
        if members.any():
            s[k] = probs[members].mean(axis=0)
    alpha = 1 + lam * s.sum(axis=0)
    beta = {}
    for level in range(1, h.depth + 1):
        for j in range(h.branching**level):
            beta[level, j] = level**2 + lam * s[node_leaves(h, level, j)].sum(axis=0)
    return s, alpha, beta


def brute_leaf_psi(h: Hierarchy, branch: dict) -> np.ndarray:
    """psi_y(k) as the product of branch probabilities on the root-to-leaf path."""
    C = next(iter(branch.values())).shape[0]
    psi = np.ones((h.n_leaves, C))
    for k in range(h.n_leaves):
        for level in range(1, h.depth + 1):
            psi[k] *= branch[level, k // h.branching ** (h.depth - level)]
    return psi


def brute_m_step(h: Hierarchy, counts: np.ndarray, alpha: np.ndarray, beta: dict):
    """MAP theta and branch probabilities psi_y(c|v) from expected counts n[k, y]."""
    theta = alpha - 1 + counts.sum(axis=0)
    theta = theta / theta.sum()
    b = h.branching
    branch = {}
    for level in range(1, h.depth + 1):
        for parent in range(b ** (level - 1)):
            kids = [parent * b + c for c in range(b)]
            num = np.array([beta[level, j] - 1 + counts[node_leaves(h, level, j)].sum(axis=0) for j in kids])
            for c, j in enumerate(kids):
                branch[level, j] = num[c] / num.sum(axis=0)
    return theta, branch


def brute_e_step(theta: np.ndarray, psi: np.ndarray) -> np.ndarray:
    joint = theta * psi
    return joint / joint.sum(axis=1, keepdims=True)


def brute_objective(h, alpha, beta, theta, branch, O, U) -> float:
    val = np.sum((alpha - 1) * np.log(theta))
    for key, p in branch.items():
        val += np.sum((beta[key] - 1) * np.log(p))
    joint = theta * brute_leaf_psi(h, branch)
    val += np.sum(O * np.log(joint)) + np.sum(U * np.log(joint.sum(axis=1)))
    return float(val)


def model_branch(model: DirichletTreeModel) -> dict:
    bp = model.branch_probs
    return {(level, j): bp[level][j] for level in range(1, model.hierarchy.depth + 1)
            for j in range(model.hierarchy.branching**level)}


def tiny_problem(seed: int = 0, depth: int = 2, b: int = 2, C: int = 2, n: int = 40, n_labeled: int = 12):
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, b**depth, n)
    h = Hierarchy(depth=depth, branching=b, blocks=blocks)
    probs = rng.dirichlet(np.ones(C), n)
    truth = rng.integers(0, C, n)
    labeled = rng.choice(n, n_labeled, replace=False)
    return h, probs, truth, labeled


# ---------------------------------------------------------------- hyperparameters
@pytest.mark.parametrize("depth,b,lam", [(2, 2, 1.0), (3, 2, 2.5), (1, 5, 1.0), (2, 3, 0.0)])
def test_hyperparameters_follow_section_5_2(depth, b, lam):
    h, probs, _, _ = tiny_problem(depth=depth, b=b, C=3, n=60)
    m = DirichletTreeModel(h, probs, prior_strength=lam)
    s, alpha, beta = brute_hyper(h, probs, lam)
    np.testing.assert_allclose(m.block_prior, s)
    np.testing.assert_allclose(m.alpha, alpha)
    assert m.beta[0] is None and len(m.beta) == depth + 1
    for (level, j), val in beta.items():
        np.testing.assert_allclose(m.beta[level][j], val)


# ---------------------------------------------------------------- EM fixed point
@pytest.mark.parametrize("accelerate", [True, False])
def test_em_satisfies_fixed_point_equations(accelerate):
    h, probs, truth, labeled = tiny_problem(seed=1, depth=3, b=2, C=3, n=80, n_labeled=20)
    m = DirichletTreeModel(h, probs, tol=1e-13, max_iter=20000, accelerate=accelerate)
    m.observe(h.blocks[labeled], truth[labeled])
    assert m.converged_last
    r = m.predictive()
    _, alpha, beta = brute_hyper(h, probs)
    O = np.zeros((h.n_leaves, 3))
    np.add.at(O, (h.blocks[labeled], truth[labeled]), 1)
    U = h.block_sizes - O.sum(axis=1)
    np.testing.assert_allclose(m.observed_counts, O)
    np.testing.assert_allclose(m.unlabeled_counts, U)
    # M-step: theta and psi are the MAP estimates given the expected counts from r
    theta, branch = brute_m_step(h, O + U[:, None] * r, alpha, beta)
    np.testing.assert_allclose(m.theta, theta, atol=1e-9)
    for key, val in model_branch(m).items():
        np.testing.assert_allclose(val, branch[key], atol=1e-9)
    np.testing.assert_allclose(m.leaf_probs, brute_leaf_psi(h, branch), atol=1e-9)
    # E-step: r is the posterior label of an unlabeled item given theta, psi
    np.testing.assert_allclose(r, brute_e_step(m.theta, m.leaf_probs), atol=1e-12)
    np.testing.assert_allclose(m.item_probs(), r[h.blocks])
    np.testing.assert_allclose(m.item_probs(np.array([3, 0])), r[h.blocks[[3, 0]]])


def test_em_matches_direct_maximisation_of_log_posterior():
    h, probs, truth, labeled = tiny_problem(seed=2, depth=2, b=2, C=2, n=40, n_labeled=15)
    m = DirichletTreeModel(h, probs, tol=1e-13, max_iter=20000)
    m.observe(h.blocks[labeled], truth[labeled])
    _, alpha, beta = brute_hyper(h, probs)
    O, U = m.observed_counts, m.unlabeled_counts
    C, b = 2, 2
    groups = [("theta", 0)] + [(level, p) for level in (1, 2) for p in range(b ** (level - 1))]

    def unpack(z):
        z = z.reshape(len(groups), b, C)  # theta uses its first row only (C == b here)
        theta = np.exp(log_softmax(z[0, 0]))
        branch = {}
        for g, (level, parent) in enumerate(groups[1:], start=1):
            p = np.exp(log_softmax(z[g], axis=0))
            for c in range(b):
                branch[level, parent * b + c] = p[c]
        return theta, branch

    def negobj(z):
        theta, branch = unpack(z)
        return -brute_objective(h, alpha, beta, theta, branch, O, U)

    best = min(
        (minimize(negobj, np.random.default_rng(i).normal(size=len(groups) * b * C), method="BFGS",
                  options={"gtol": 1e-9}) for i in range(3)),
        key=lambda res: res.fun,
    )
    theta, branch = unpack(best.x)
    em_obj = brute_objective(h, alpha, beta, m.theta, model_branch(m), O, U)
    assert em_obj >= -best.fun - 1e-7  # EM reaches the (local = global here) maximum
    np.testing.assert_allclose(m.log_posterior(), em_obj, rtol=1e-10)
    np.testing.assert_allclose(m.theta, theta, atol=1e-4)
    for key, val in model_branch(m).items():
        np.testing.assert_allclose(val, branch[key], atol=1e-4)


def test_plain_em_is_monotone_and_agrees_with_accelerated():
    h, probs, truth, labeled = tiny_problem(seed=3, depth=3, b=2, C=2, n=200, n_labeled=30)
    plain = DirichletTreeModel(h, probs, max_iter=1, accelerate=False)
    plain.observe(h.blocks[labeled], truth[labeled], refit=False)
    values = []
    for _ in range(300):
        plain.fit()
        values.append(plain.log_posterior())
    assert np.all(np.diff(values) >= -1e-9)
    fast = DirichletTreeModel(h, probs, tol=1e-12, max_iter=5000)
    fast.observe(h.blocks[labeled], truth[labeled])
    plain.max_iter = 50000
    plain.tol = 1e-12
    plain.fit()
    assert plain.converged_last and fast.converged_last
    assert fast.n_iter_last < 200
    np.testing.assert_allclose(fast.predictive(), plain.predictive(), atol=1e-7)


@pytest.mark.parametrize("lam", [1.0, 3.0])
def test_flat_tree_is_dirichlet_categorical_per_block(lam):
    """Depth 1: the fixed point is r[k, y] = (lam s(y|k) + O[k, y]) / (lam + L_k) (module docstring)."""
    rng = np.random.default_rng(4)
    K, C, n = 6, 3, 300
    h = Hierarchy(depth=1, branching=K, blocks=rng.integers(0, K, n))
    probs = rng.dirichlet(np.ones(C), n)
    m = DirichletTreeModel(h, probs, prior_strength=lam, tol=1e-12, max_iter=5000)
    np.testing.assert_allclose(m.predictive(), m.block_prior, atol=1e-8)  # no labels: the prior
    truth = rng.integers(0, C, n)
    for batch in np.array_split(rng.permutation(n)[:120], 4):
        m.observe(h.blocks[batch], truth[batch])
        O = m.observed_counts
        expected = (lam * m.block_prior + O) / (lam + O.sum(axis=1, keepdims=True))
        np.testing.assert_allclose(m.predictive(), expected, atol=1e-7)


# ---------------------------------------------------------------- behaviour with labels
def test_all_items_labeled_gives_truth_counts_and_prior_blend():
    rng = np.random.default_rng(5)
    h = Hierarchy(depth=2, branching=3, blocks=rng.integers(0, 9, 150))
    probs = rng.dirichlet(np.ones(2), 150)
    truth = rng.integers(0, 2, 150)
    m = DirichletTreeModel(h, probs)
    for batch in np.array_split(rng.permutation(150), 3):
        m.observe(h.blocks[batch], truth[batch])
    O = np.zeros((9, 2))
    np.add.at(O, (h.blocks, truth), 1)
    np.testing.assert_array_equal(m.unlabeled_counts, 0)
    np.testing.assert_allclose(m.observed_counts, O)
    np.testing.assert_allclose(m.expected_counts(), O)  # r no longer matters
    assert m.converged_last and m.n_iter_last <= 2  # nothing left to infer: one EM step
    # the predictive blends the empirical frequencies with the prior only
    _, alpha, beta = brute_hyper(h, probs)
    theta, branch = brute_m_step(h, O, alpha, beta)
    np.testing.assert_allclose(m.predictive(), brute_e_step(theta, brute_leaf_psi(h, branch)), atol=1e-12)
    flat = DirichletTreeModel(Hierarchy(depth=1, branching=9, blocks=h.blocks), probs)
    flat.observe(h.blocks, truth)
    s = flat.block_prior
    np.testing.assert_allclose(flat.predictive(), (s + O) / (1 + O.sum(axis=1, keepdims=True)), atol=1e-12)


def test_positive_labels_push_block_rate_to_one():
    n_per = 400
    h = Hierarchy(depth=3, branching=2, blocks=np.repeat(np.arange(8), n_per))
    probs = np.full((8 * n_per, 2), 0.5)
    m = DirichletTreeModel(h, probs)
    rates = [m.predictive()[5, 1]]
    for _ in range(20):
        m.observe(np.full(15, 5), np.ones(15, dtype=int))
        rates.append(m.predictive()[5, 1])
    assert np.all(np.diff(rates) > 0)
    assert rates[0] == pytest.approx(0.5, abs=0.05)
    assert rates[-1] > 0.95
    # the evidence is shared with the sibling block more than with a distant one
    p = m.predictive()[:, 1]
    assert p[4] > p[0] and p[4] > 0.5


def test_warm_start_needs_fewer_iterations_than_cold_start():
    rng = np.random.default_rng(6)
    scores = rng.normal(size=20000)
    p = 1 / (1 + np.exp(-(2 * scores - 3)))
    truth = (rng.random(20000) < p).astype(int)
    h = score_hierarchy(scores, n_blocks=64, depth=6, branching=2)
    m = DirichletTreeModel(h, np.column_stack([1 - p, p]))
    order = rng.permutation(20000)
    m.observe(h.blocks[order[:2000]], truth[order[:2000]])
    m.observe(h.blocks[order[2000:2010]], truth[order[2000:2010]])
    warm = m.n_iter_last
    assert m.converged_last
    cold = m.copy().fit(warm_start=False)
    assert cold.converged_last
    assert warm < cold.n_iter_last
    np.testing.assert_allclose(cold.predictive(), m.predictive(), atol=1e-6)


def test_depth_20_does_not_underflow():
    rng = np.random.default_rng(7)
    n = 300
    h = Hierarchy(depth=20, branching=2, blocks=np.sort(rng.integers(0, 2**20, n)))
    probs = np.column_stack([np.linspace(0.99, 0.01, n), np.linspace(0.01, 0.99, n)])
    m = DirichletTreeModel(h, probs, prior_strength=50.0, max_iter=2)
    m.observe(h.blocks[-20:], np.ones(20, dtype=int))
    r = m.predictive()
    assert np.isfinite(r).all() and np.all(r >= 0)
    np.testing.assert_allclose(r.sum(axis=1), 1.0)
    assert np.isfinite(m.log_posterior())
    assert np.isfinite(m.theta).all()
    items = m.item_probs()
    assert items[-1, 1] > 0.9 and items[0, 1] < 0.1


def test_stochastic_oracle_conflicting_labels():
    h = Hierarchy(depth=2, branching=2, blocks=np.repeat(np.arange(4), 10))
    probs = np.full((40, 2), 0.5)

    def fitted(labels, new):
        m = DirichletTreeModel(h, probs, oracle="stochastic")
        m.observe(np.full(len(labels), 2), np.array(labels), new=np.array(new))
        return m

    only_neg, only_pos = fitted([0, 0], [True, False]), fitted([1, 1], [True, False])
    mixed = fitted([0, 1], [True, False])  # one item, two conflicting labels
    lo, hi, mid = only_neg.predictive()[2, 1], only_pos.predictive()[2, 1], mixed.predictive()[2, 1]
    assert lo < mid < hi
    assert mid == pytest.approx(0.5, abs=1e-6)
    assert mixed.unlabeled_counts[2] == 9  # one item left the unlabeled pool
    np.testing.assert_allclose(mixed.observed_counts[2], [1, 1])  # every label counted
    # a deterministic model ignores a repeated (non-new) label of an item
    det = DirichletTreeModel(h, probs)
    det.observe(np.array([2, 2]), np.array([0, 1]), new=np.array([True, False]))
    np.testing.assert_allclose(det.observed_counts[2], [1, 0])
    assert det.predictive()[2, 1] < 0.5


# ---------------------------------------------------------------- reuse and validation
def test_fresh_reset_and_copy():
    h, probs, truth, labeled = tiny_problem(seed=8, depth=3, b=2, C=2, n=100, n_labeled=30)
    m = DirichletTreeModel(h, probs)
    start = m.predictive()
    f = m.fresh()
    m.observe(h.blocks[labeled], truth[labeled])
    after = m.predictive()
    assert not np.allclose(after, start)
    assert f.hierarchy is m.hierarchy and f.alpha is m.alpha  # hyperparameters shared, not recomputed
    np.testing.assert_array_equal(f.predictive(), start)
    np.testing.assert_array_equal(f.observed_counts, 0)
    np.testing.assert_array_equal(f.unlabeled_counts, h.block_sizes)
    c = m.copy()
    f.observe(h.blocks[labeled], truth[labeled])
    np.testing.assert_allclose(f.predictive(), after, atol=1e-7)  # same data, same fixed point
    c.observe(h.blocks[:1], truth[:1], new=False)  # a deterministic repeat changes nothing
    np.testing.assert_allclose(c.predictive(), after, atol=1e-7)
    np.testing.assert_array_equal(m.observed_counts, c.observed_counts)
    m.reset()
    np.testing.assert_array_equal(m.predictive(), start)
    np.testing.assert_array_equal(m.observed_counts, 0)
    np.testing.assert_allclose(c.predictive(), after, atol=1e-7)  # the copy kept its labels


def test_empty_leaves_have_finite_predictive():
    h = score_hierarchy(np.array([0.0, 0.0, 1.0, 1.0, 2.0]), n_blocks=3, depth=4, branching=2)
    m = DirichletTreeModel(h, np.array([0.1, 0.1, 0.5, 0.5, 0.9]))  # 1-d: binary s(y=1|x)
    assert np.isfinite(m.predictive()).all()
    np.testing.assert_allclose(m.predictive().sum(axis=1), 1.0)
    m.observe(np.array([h.blocks[4]]), np.array([1]))
    assert m.item_probs()[4, 1] > m.item_probs()[0, 1]


def test_validation_names_the_argument():
    h = Hierarchy(depth=2, branching=2, blocks=np.array([0, 1, 1, 3]))
    probs = np.full((4, 2), 0.5)
    with pytest.raises(ValueError, match="prior_probs"):
        DirichletTreeModel(h, np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match="prior_probs"):
        DirichletTreeModel(h, -probs)
    with pytest.raises(ValueError, match="oracle"):
        DirichletTreeModel(h, probs, oracle="noisy")
    with pytest.raises(ValueError, match="prior_strength"):
        DirichletTreeModel(h, probs, prior_strength=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        DirichletTreeModel(h, probs, max_iter=0)
    with pytest.raises(ValueError, match="hierarchy"):
        DirichletTreeModel(h.blocks, probs)
    m = DirichletTreeModel(h, probs)
    with pytest.raises(ValueError, match="blocks"):
        m.observe(np.array([4]), np.array([0]))
    with pytest.raises(ValueError, match="labels"):
        m.observe(np.array([0]), np.array([2]))
    with pytest.raises(ValueError, match="blocks"):
        m.observe(np.array([0, 0]), np.array([0, 1]))  # block 0 holds one item only
    np.testing.assert_array_equal(m.observed_counts, 0)  # a rejected batch leaves no trace


def test_set_prior_keeps_the_labels_and_reset_restores_the_prior():
    """Flat model: after set_prior the fixed point is (lam s' + O) / (lam + L) with the new prior and strength."""
    from labelwise.partition import Hierarchy

    h = Hierarchy(depth=1, branching=4, blocks=np.repeat(np.arange(4), 25))
    m = DirichletTreeModel(h, np.full(100, 0.3), prior_strength=5.0)
    original = m.predictive().copy()
    m.observe(np.array([0, 0, 1, 2]), np.array([1, 1, 0, 1]))
    s1 = np.array([0.1, 0.4, 0.6, 0.9])
    new_prior = np.stack([1 - s1, s1], axis=1)
    m.set_prior(new_prior, 20.0)
    O = m.observed_counts
    expected = (20.0 * new_prior + O) / (20.0 + O.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(m.predictive(), expected, atol=1e-5)
    m.reset()
    np.testing.assert_allclose(m.predictive(), original, atol=1e-8)
