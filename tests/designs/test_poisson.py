"""Poisson and online Poisson designs: water-filling inclusion probabilities, systematic samples, rounds.

Algorithm 3 and appendix E of E. Yilmaz, P. Hayes, R. Habib, J. Burgess and
D. Barber, "Sample Efficient Model Evaluation", arXiv:2109.12043, 2021
("Yilmaz et al." below).
"""

import numpy as np
import pytest
from scipy.optimize import minimize

from labelwise import Session, TruthOracle, make_measure, make_pool
from labelwise.designs import OnlinePoissonDesign, PoissonDesign, systematic_sample
from labelwise.designs.poisson import inclusion_probabilities
from labelwise.simulate import simulate, true_risk, true_value


def _objective(h, b):
    return np.sum(h**2 / b)


@pytest.mark.parametrize("seed", range(5))
def test_matches_a_generic_convex_solver(seed):
    rng = np.random.default_rng(seed)
    h = rng.lognormal(0, 1.5, size=12)  # heavy tail: several items saturate
    M = 5.0
    b = inclusion_probabilities(h, M)
    assert b.sum() == pytest.approx(M)
    assert np.all((b > 0) & (b <= 1))
    res = minimize(lambda x: _objective(h, x), np.full(h.size, M / h.size), method="SLSQP",
                   bounds=[(1e-9, 1.0)] * h.size, constraints=[{"type": "eq", "fun": lambda x: x.sum() - M}],
                   options={"ftol": 1e-14, "maxiter": 1000})
    assert _objective(h, b) <= res.fun * (1 + 1e-7)
    np.testing.assert_allclose(b, res.x, atol=1e-4)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("budget", [3.0, 17.5, 60.0, 500.0])
def test_grouped_probabilities_equal_those_of_the_expanded_items(seed, budget):
    """``h`` per group with ``counts`` members gives each member the item-level Algorithm 3 answer."""
    rng = np.random.default_rng(seed)
    h = np.round(rng.lognormal(0, 1.5, size=30), 1)  # rounding makes ties between groups
    h[:3] = 0.0
    counts = rng.integers(0, 8, size=30)
    b = inclusion_probabilities(h, budget, counts=counts)
    expanded = inclusion_probabilities(np.repeat(h, counts), budget)
    np.testing.assert_allclose(np.repeat(b, counts), expanded, rtol=1e-12, atol=1e-15)
    assert (counts * b).sum() == pytest.approx(min(budget, counts[h > 0].sum()))


@pytest.mark.slow
def test_online_round_includes_each_item_with_its_probability():
    """First round of online-poisson: empirical inclusion frequencies match b (4 s.e.) and the size is exact."""
    pool = make_pool(600, prevalence=0.05, seed=4)
    measure = make_measure("f1", pool)
    design = OnlinePoissonDesign(n_strata=8, branching=8)
    sampler = None
    labeled = np.zeros(pool.n_items, dtype=bool)
    freq = np.zeros(pool.n_items)
    runs = 2000
    for seed in range(runs):  # the draw is a function of the hash seed: one per run
        sampler = design.start(pool, measure, rng=np.random.default_rng(seed))
        d = sampler.draw(40, labeled)
        assert len(d) == 40 and np.unique(d.items).size == 40
        freq[d.items] += 1
    b = sampler._inclusion[-1][sampler.block]
    z = (freq - runs * b) / np.sqrt(runs * b * (1 - b) + 1e-12)
    assert np.all(np.abs(z[b < 1]) < 4.5) and np.all(freq[b == 1] == runs)


def test_optimality_conditions():
    """Saturated items have the largest h; the others are proportional to h (Yilmaz et al. eq. 74)."""
    rng = np.random.default_rng(7)
    h = np.concatenate([rng.random(1000), [50.0, 40.0, 30.0]])
    b = inclusion_probabilities(h, 40.0)
    sure = b == 1.0
    assert sure.sum() == 3
    ratio = b[~sure] / h[~sure]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
    assert h[sure].min() >= h[~sure].max()
    # without saturation, b is simply proportional to h
    b2 = inclusion_probabilities(rng.random(100) + 1.0, 10.0)
    assert b2.max() < 1 and b2.sum() == pytest.approx(10.0)


def test_budget_beyond_informative_items():
    h = np.array([0.0, 2.0, 0.0, 1.0])
    np.testing.assert_array_equal(inclusion_probabilities(h, 3.0), [0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(inclusion_probabilities(np.ones(3), 10.0), [1.0, 1.0, 1.0])


def test_ties_and_fractional_budget():
    b = inclusion_probabilities(np.ones(4), 2.5)
    np.testing.assert_allclose(b, 0.625)
    b = inclusion_probabilities(np.array([10.0, 10.0, 1.0, 1.0]), 2.5)
    np.testing.assert_allclose(b, [1.0, 1.0, 0.25, 0.25])


@pytest.mark.parametrize("h, budget, match", [
    (np.array([1.0, -1.0]), 1.0, "non-negative"),
    (np.array([1.0, np.nan]), 1.0, "finite"),
    (np.array([[1.0]]), 1.0, "1-d"),
    (np.array([1.0, 2.0]), 0.0, "budget"),
])
def test_bad_input(h, budget, match):
    with pytest.raises(ValueError, match=match):
        inclusion_probabilities(h, budget)


# ------------------------------------------------------------- the design


@pytest.mark.slow
def test_systematic_sample_has_the_inclusion_probabilities_and_a_fixed_size():
    rng = np.random.default_rng(0)
    b = inclusion_probabilities(np.array([5.0, 3.0, 1.0, 1.0, 0.5, 0.5, 0.2, 0.1]), 3.0)
    reps = 20000
    counts = np.zeros(b.size)
    for _ in range(reps):
        s = systematic_sample(b, rng)
        assert s.size == 3 and np.unique(s).size == 3
        counts[s] += 1
    # binomial standard errors: every frequency within 4.5 s.e. of b
    se = np.sqrt(b * (1 - b) / reps) + 1e-12
    assert np.all(np.abs(counts / reps - b) <= 4.5 * se + 1e-9), (counts / reps, b)


def _assert_unbiased(design, seed: int, n_items: int, batch: int, runs: int, batches: int = 1) -> None:
    """Mean of R-hat over seeded runs of ``batches`` batches is within 4 standard errors of the true R.

    The runs copy one started sampler (:meth:`~labelwise.designs.base.Sampler.copy`, as ``simulate`` does): the
    design's set-up, the same for every run, is made once."""
    pool = make_pool(n_items, prevalence=0.03, seed=seed)
    measure = make_measure("f1", pool)
    oracle = TruthOracle(pool)
    base = design.start(pool, measure, rng=np.random.default_rng(0))
    estimates = []
    for run in range(runs):
        rng = np.random.default_rng(run)
        session = Session(pool, measure, design, seed=rng, sampler=base.copy(rng))
        for _ in range(batches):
            ids = session.next_batch(batch)
            session.add_labels(ids, oracle(ids))
        estimates.append(session.estimate().R)
    estimates = np.array(estimates)
    R = true_risk(pool, measure)
    se = estimates.std(axis=0) / np.sqrt(runs)
    assert np.all(np.abs(estimates.mean(axis=0) - R) <= 4 * se), (estimates.mean(axis=0), R, se)


@pytest.mark.slow
def test_horvitz_thompson_estimate_is_unbiased_at_a_checkpoint():
    """60 of 150 planned labels: inclusion probabilities b k / M keep the HT estimate unbiased."""
    _assert_unbiased(PoissonDesign(budget=150), seed=5, n_items=3000, batch=60, runs=3000)


def test_labelling_every_informative_item_is_exact():
    pool = make_pool(400, prevalence=0.05, seed=2)
    measure = make_measure("f1,precision,recall", pool)
    session = Session(pool, measure, PoissonDesign(), seed=1)
    est = session.run(TruthOracle(pool), 400, 50)
    np.testing.assert_allclose(est.value, true_value(pool, measure), rtol=1e-12)
    np.testing.assert_allclose(est.std, 0.0, atol=1e-12)


def test_poisson_session_resumes_exactly_and_respects_its_plan(tmp_path):
    pool = make_pool(2000, prevalence=0.02, seed=3)
    measure = make_measure("f1", pool)
    oracle = TruthOracle(pool)
    path = tmp_path / "p.lw"
    first = Session(pool, measure, PoissonDesign(budget=300), seed=9, path=path)
    first.run(oracle, 100, 50)
    first.close()
    resumed = Session.open(path)
    est = resumed.run(oracle, 300, 50)
    straight = Session(pool, measure, PoissonDesign(budget=300), seed=9)
    est2 = straight.run(oracle, 300, 50)
    np.testing.assert_array_equal(resumed.draws.items, straight.draws.items)
    np.testing.assert_allclose(est.value, est2.value, rtol=1e-12)
    with pytest.raises(ValueError, match="planned for 300"):
        resumed.next_batch(1)
    resumed.close()


def test_poisson_needs_a_budget_outside_run():
    pool = make_pool(200, prevalence=0.05, seed=1)
    session = Session(pool, make_measure("f1", pool), PoissonDesign(), seed=0)
    with pytest.raises(ValueError, match="budget"):
        session.next_batch(10)


# ------------------------------------------------------- online rounds
def test_online_rounds_draw_exactly_the_batch_among_unlabeled_items():
    pool = make_pool(3000, prevalence=0.02, seed=8)
    measure = make_measure("f1", pool)
    session = Session(pool, measure, OnlinePoissonDesign(), seed=3)
    oracle = TruthOracle(pool)
    seen = set()
    for _ in range(6):
        ids = session.next_batch(40)
        assert len(ids) == 40 and not seen.intersection(ids.tolist())
        seen.update(ids.tolist())
        session.add_labels(ids, oracle(ids))
    assert session.draws.round.max() == 5 and session.n_labels == 240


@pytest.mark.slow
def test_online_first_round_is_unbiased_and_labelling_everything_is_exact():
    _assert_unbiased(OnlinePoissonDesign(), seed=6, n_items=2000, batch=50, runs=1500)
    small = make_pool(300, prevalence=0.05, seed=2)
    m_small = make_measure("f1,precision", small)
    est = Session(small, m_small, OnlinePoissonDesign(), seed=1).run(TruthOracle(small), 300, 60)
    np.testing.assert_allclose(est.value, true_value(small, m_small), rtol=1e-12)


@pytest.mark.slow
def test_online_rounds_with_labels_in_between_stay_unbiased():
    """Rounds 2 and 3 depend on the labels of the earlier ones; fixed weights keep R-hat unbiased."""
    _assert_unbiased(OnlinePoissonDesign(), seed=7, n_items=1500, batch=30, runs=800, batches=3)


@pytest.mark.slow
def test_online_poisson_intervals_cover():
    """95% intervals for F1 at every checkpoint; the hindsight covariance is conservative by design.

    150 runs: a coverage of 0.95 has a binomial standard error of 0.0178, so
    the bound 0.95 - 3 x 0.0178 fails with probability < 0.2% if it holds.
    """
    pool = make_pool(4000, prevalence=0.02, seed=11)
    result = simulate(pool, make_measure("f1", pool), "online-poisson", budget=300, batch_size=50,
                      repeats=150, seed=3, checkpoints=[100, 200, 300])
    for row in result.checkpoint_rows():
        assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 150), row


@pytest.mark.parametrize("params, match", [({"gamma": -1}, "gamma"), ({"deviation": "max"}, "deviation"),
                                           ({"defensive": 0}, "defensive")])
def test_online_poisson_rejects_bad_options(params, match):
    with pytest.raises(ValueError, match=match):
        OnlinePoissonDesign(**params)


def test_online_poisson_resumes_exactly(tmp_path):
    pool = make_pool(2000, prevalence=0.02, seed=4)
    measure = make_measure("f1", pool)
    oracle = TruthOracle(pool)
    path = tmp_path / "o.lw"
    first = Session(pool, measure, OnlinePoissonDesign(), seed=5, path=path)
    first.run(oracle, 100, 50)
    first.close()
    resumed = Session.open(path)
    est = resumed.run(oracle, 250, 50)
    resumed.close()
    straight = Session(pool, measure, OnlinePoissonDesign(), seed=5)
    est2 = straight.run(oracle, 250, 50)
    np.testing.assert_array_equal(resumed.draws.items, straight.draws.items)
    np.testing.assert_allclose(est.value, est2.value, rtol=1e-12)
    np.testing.assert_allclose(est.cov, est2.cov, rtol=1e-9)
