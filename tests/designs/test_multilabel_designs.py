"""Designs on multi-label pools: exact unbiasedness, coverage, resumed sessions and censuses.

Micro and macro F1 over label sets (Appendix D of E. Yilmaz, P. Hayes,
R. Habib, J. Burgess and D. Barber, "Sample Efficient Model Evaluation",
arXiv:2109.12043, 2021, "Yilmaz et al." below); the measures themselves are
tested in ``measures/test_multilabel.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import labelwise as lw
from labelwise.draws import Draws, Sample
from labelwise.pool import Pool
from labelwise.simulate import true_risk


@pytest.fixture(scope="module")
def rare_pool() -> Pool:
    """Six labels, 1-3% prevalence, 20,000 items."""
    return lw.make_multilabel_pool(20_000, 6, prevalence=[0.03, 0.01, 0.02, 0.01, 0.01, 0.01], separation=4.5,
                                   seed=3)


# ----------------------------------------------------------------------------- unbiasedness, enumerated
def test_importance_estimate_of_R_is_exactly_unbiased(tiny_multilabel_pool):
    """All ordered pairs of draws from the design's proposal: E[R-hat] = R exactly.

    Eq. 1 of N. G. Marchant and B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation under
    Extreme Class Imbalance", KDD 2021.
    """
    pool = tiny_multilabel_pool
    measure = lw.make_measure("multilabel_macro_f1", pool)
    design = lw.ImportanceDesign(defensive=0.2).start(pool, measure, rng=np.random.default_rng(0))
    q, N = design.q, pool.n_items
    assert np.all(q > 0) and not np.allclose(q, 1 / N)
    mean = np.zeros(measure.dim)
    for i, j in itertools.product(range(N), repeat=2):
        items = np.array([i, j])
        draws = Draws(items, 1 / (N * q[items]), q[items], np.full(2, -1))
        est = design.estimate(measure, Sample(draws, pool.labels[items], len({i, j})))
        mean += q[i] * q[j] * est.R
    np.testing.assert_allclose(mean, true_risk(pool, measure), rtol=1e-12, atol=1e-15)


def _systematic_distribution(b: np.ndarray) -> dict[tuple[int, ...], float]:
    """Exact distribution of the randomised systematic sample: every order of the pool, every start u."""
    N = b.size
    dist: dict[tuple[int, ...], float] = {}
    for order in itertools.permutations(range(N)):
        cum = np.cumsum(b[list(order)])
        prev = np.concatenate([[0.0], cum[:-1]])
        cuts = np.unique(np.concatenate([[0.0, 1.0], np.mod(cum, 1.0)]))
        for lo, hi in itertools.pairwise(cuts):
            if hi - lo < 1e-12:  # a rounding sliver of sum(b) = 3
                continue
            u = (lo + hi) / 2
            hits = np.floor(cum - u) - np.floor(prev - u)
            chosen = tuple(sorted(np.array(order)[hits > 0].tolist()))
            dist[chosen] = dist.get(chosen, 0.0) + (hi - lo) / math.factorial(N)
    return dist


@pytest.mark.parametrize("name", ["multilabel_micro_f1", "multilabel_macro_f1"])
def test_poisson_horvitz_thompson_total_is_exactly_unbiased(tiny_multilabel_pool, name):
    """Every possible sample of the fixed-size Poisson design: E[R-hat] = R (Yilmaz et al., eq. 18)."""
    pool = tiny_multilabel_pool
    measure = lw.make_measure(name, pool)
    design = lw.PoissonDesign(budget=3).start(pool, measure, rng=np.random.default_rng(0))
    design.draw(3, np.zeros(pool.n_items, bool))  # plans the inclusion probabilities
    b = design.b
    assert b.sum() == pytest.approx(3) and len(np.unique(np.round(b, 12))) > 1
    dist = _systematic_distribution(b)
    assert sum(dist.values()) == pytest.approx(1.0)
    mean = np.zeros(measure.dim)
    inclusion = np.zeros(pool.n_items)
    for items, p in dist.items():
        items = np.array(items)
        assert items.size == 3
        draws = Draws(items, 1 / b[items], b[items], np.full(3, -1))
        mean += p * design.estimate(measure, Sample(draws, pool.labels[items], 3)).R
        inclusion[items] += p
    np.testing.assert_allclose(inclusion, b, atol=1e-12)
    np.testing.assert_allclose(mean, true_risk(pool, measure), rtol=1e-12, atol=1e-15)


# ----------------------------------------------------------------------------- designs end to end
@pytest.mark.slow
@pytest.mark.parametrize("name", ["multilabel_micro_f1", "multilabel_macro_f1"])
def test_simulation_coverage_and_efficiency(rare_pool, name):
    """Importance and Poisson sampling: nominal 95% coverage and far lower MSE than passive sampling.

    (On this pool, 2000 repeats gave coverage 0.943 and 0.943 for micro F1,
    0.951 and 0.935 for macro F1, and 5-9 times lower MSE than passive.)
    """
    measure = lw.make_measure(name, rare_pool)
    repeats = 120
    tolerance = 3 * math.sqrt(0.95 * 0.05 / repeats)  # binomial 3 sigma
    rows = {}
    for design in ("passive", "importance", "poisson"):
        result = lw.simulate(rare_pool, measure, design, budget=1000, batch_size=1000, repeats=repeats, seed=11,
                             checkpoints=[1000])
        rows[design] = result.checkpoint_rows()[0]
        assert rows[design]["undefined_fraction"] == 0.0
    for design in ("importance", "poisson"):
        assert abs(rows[design]["coverage"] - 0.95) <= tolerance, (design, rows[design])
        assert rows[design]["mse"] < rows["passive"]["mse"] / 3, (design, rows)


DESIGNS = ["passive", "importance", "poisson", "online-poisson", "ais"]


@pytest.mark.parametrize("design", DESIGNS)
def test_sessions_resume_and_estimate_both_measures(design, tmp_path):
    pool = lw.make_multilabel_pool(3000, 4, prevalence=[0.08, 0.04, 0.02, 0.03], seed=5)
    measure = lw.make_measure("multilabel_micro_f1,multilabel_macro_f1", pool)
    truth = lw.true_value(pool, measure)
    path = tmp_path / "ml.lwsession"
    session = lw.Session(pool, measure, lw.make_design(design), seed=7, path=path)
    est = session.run(lw.TruthOracle(pool), 400, 100)
    session.close()
    assert est.all_defined and np.all(np.abs(est.value - truth) <= 4 * est.std), (est, truth)
    with lw.Session.open(path) as again:
        assert again.pool.n_classes == 16 and again.n_labels == 400
        np.testing.assert_allclose(again.estimate().value, est.value, rtol=1e-12)


@pytest.mark.parametrize("design", ["poisson", "online-poisson"])
def test_labelling_every_item_is_exact(design):
    pool = lw.make_multilabel_pool(300, 3, prevalence=[0.2, 0.1, 0.05], seed=6)
    measure = lw.make_measure("multilabel_micro_f1,multilabel_macro_f1", pool)
    est = lw.Session(pool, measure, lw.make_design(design), seed=1).run(lw.TruthOracle(pool), 300, 100)
    np.testing.assert_allclose(est.value, lw.true_value(pool, measure), rtol=1e-12)
    np.testing.assert_allclose(est.std, 0.0, atol=1e-12)
