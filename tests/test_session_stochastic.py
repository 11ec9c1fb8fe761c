"""Sessions and simulations with a stochastic oracle (noisy or several annotators): a label per draw.

The target is R = (1/N) sum_x sum_y p(y|x) l(x, y) (section 2 of Marchant &
Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation under Extreme
Class Imbalance", KDD 2021, with a stochastic oracle); a draw's label is a
fresh answer from p(y|x).  The oracle itself is tested in
``oracle/test_oracles.py``, the exact two-stage AIS expectation in
``designs/test_ais.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.datasets import make_pool
from labelwise.designs import AISDesign, make_design
from labelwise.measures import make_measure
from labelwise.oracle.annotators import NoisyOracle
from labelwise.pool import Pool
from labelwise.session import LabelError, Session
from labelwise.simulate import simulate, true_value


@pytest.fixture(scope="module")
def pool():
    return make_pool(3000, prevalence=0.1, separation=2.0, seed=31)


# ---------------------------------------------------------------- sessions
def _labels_for(pool: Pool, ids, rng) -> np.ndarray:
    return NoisyOracle(pool, 0.2, rng)(np.asarray(ids))


@pytest.mark.parametrize("design", ["ais", "importance", "passive"])
def test_an_item_drawn_twice_is_labeled_twice_and_may_disagree(design):
    pool = make_pool(30, prevalence=0.3, seed=2)
    s = Session(pool, make_measure("f1", pool), make_design(design), oracle="stochastic", seed=1)
    ids = s.next_batch(60)  # more draws than items: every draw is its own label request
    assert ids.size == 60 and np.unique(ids).size < 60
    repeated = ids[np.flatnonzero(np.bincount(pool.positions(ids)) > 1)[:1]]
    item = pool.item_ids[np.flatnonzero(np.bincount(pool.positions(ids)) > 1)[0]]
    k = int(np.sum(ids == item))
    labels = _labels_for(pool, ids, 3)
    labels[ids == item] = np.arange(k) % 2  # the annotators disagree on this item
    assert repeated.size == 1
    assert s.add_labels(ids, labels) == 60
    assert s.n_labels == 60 and s.pending.size == 0
    sample = s.sample()
    assert len(sample.draws) == 60 and sample.n_labels == 60
    np.testing.assert_array_equal(sample.labels, labels)  # each draw keeps its own answer
    # labeling the item again, with no draw of it waiting, is refused
    with pytest.raises(LabelError, match="0 draw\\(s\\) waiting"):
        s.add_labels([item], [1])


def test_labels_are_matched_to_pending_draws_and_bad_calls_store_nothing(tmp_path, pool):
    path = tmp_path / "noisy.lws"
    design = AISDesign(n_strata=16, branching=16)
    s = Session(pool, make_measure("f1", pool), design, oracle="stochastic", seed=4, path=path)
    ids = s.next_batch(20)
    before = s.store.conn.execute("SELECT COUNT(*) FROM labels").fetchone()[0]
    once = ids[np.flatnonzero([np.sum(ids == i) == 1 for i in ids])[0]]
    # two labels for an id drawn once: refused, nothing stored
    with pytest.raises(LabelError, match="1 draw\\(s\\) waiting for a label but 2 label\\(s\\) were given"):
        s.add_labels([ids[1], once, once], [0, 1, 0])
    never_drawn = np.setdiff1d(pool.item_ids, ids)[0]
    with pytest.raises(LabelError, match="0 draw\\(s\\) waiting"):
        s.add_labels([never_drawn], [1])
    with pytest.raises(LabelError, match="not in the pool"):
        s.add_labels(["no-such-item"], [1])
    assert s.store.conn.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == before
    assert s.n_labels == 0 and s.pending.size == 20
    # out of order: the second half first; the estimate uses the labeled prefix only
    labels = _labels_for(pool, ids, 8)
    assert s.add_labels(ids[10:], labels[10:]) == 10
    assert len(s.sample().draws) == 0 and s.pending.size == 10
    assert s.add_labels(ids[:10], labels[:10]) == 10
    assert len(s.sample().draws) == 20
    stored = s.store.conn.execute("SELECT draw, label FROM labels ORDER BY draw").fetchall()
    assert stored == [(i, int(y)) for i, y in enumerate(labels)]
    s.close()


def test_labels_with_their_draws_store_once_and_answer_that_draw(tmp_path, pool):
    """With draw numbers a label answers its own draw, and a resubmitted answer is skipped."""
    path = tmp_path / "noisy.lws"
    s = Session(pool, make_measure("f1", pool), make_design("importance"), oracle="stochastic", seed=3, path=path)
    ids = s.next_batch(400)  # a small pool: some items are drawn more than once
    draws = s.pending_draws
    np.testing.assert_array_equal(draws, np.arange(400))
    np.testing.assert_array_equal(pool.item_ids[s.draws.items[draws]], ids)
    labels = _labels_for(pool, ids, 9)
    twice = np.flatnonzero(np.bincount(pool.positions(ids)) > 1)[0]
    rows = np.flatnonzero(pool.positions(ids) == twice)
    labels[rows] = [0, 1] + [0] * (rows.size - 2)  # the annotators disagree on this item
    # the later draw of the repeated item answered first: it keeps its own answer
    late = rows[1:2]
    assert s.add_labels(ids[late], labels[late], draws=draws[late]) == 1
    first = np.setdiff1d(np.arange(200), late)
    assert s.add_labels(ids[first], labels[first], draws=draws[first]) == first.size
    # the whole batch again (repeats included, one row twice): only the new answers are stored
    again = np.r_[np.arange(400), 5]
    assert s.add_labels(ids[again], labels[again], draws=draws[again]) == 400 - first.size - 1
    assert s.add_labels(ids, labels, draws=draws) == 0
    assert s.n_labels == 400 and s.pending.size == 0
    np.testing.assert_array_equal(s.sample().labels, labels)
    stored = s.store.conn.execute("SELECT draw, label FROM labels ORDER BY draw").fetchall()
    assert stored == [(i, int(y)) for i, y in enumerate(labels)]
    s.close()
    assert Session.open(path).add_labels(ids, labels, draws=draws) == 0  # after a restart too


@pytest.mark.parametrize("case, message", [
    ("contradicts", "draw 1 .*already has label"),
    ("twice", "draw 2 is given two different labels"),
    ("other item", "draw 2 is of item .*not of item"),
    ("out of range", "draw numbers must be whole numbers from 0 to 9"),
    ("fraction", "draw numbers must be whole numbers"),
    ("length", "got 2 ids but 1 draw numbers"),
])
def test_bad_draw_numbers_are_refused_and_store_nothing(tmp_path, pool, case, message):
    s = Session(pool, make_measure("f1", pool), make_design("passive"), oracle="stochastic", seed=2,
                path=tmp_path / "s.lws")
    ids = s.next_batch(10)
    s.add_labels(ids[:2], [0, 1], draws=[0, 1])
    calls = {
        "contradicts": ([ids[1], ids[3]], [0, 1], [1, 3]),
        "twice": ([ids[2], ids[2]], [0, 1], [2, 2]),
        "other item": ([ids[int(np.flatnonzero(ids != ids[2])[-1])]], [1], [2]),
        "out of range": ([ids[3]], [1], [10]),
        "fraction": ([ids[3]], [1], [3.5]),
        "length": ([ids[3], ids[4]], [1, 0], [3]),
    }
    with pytest.raises(LabelError, match=message):
        s.add_labels(*calls[case][:2], draws=calls[case][2])
    assert s.store.conn.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == 2
    assert s.n_labels == 2 and s.pending.size == 8
    s.close()


@pytest.mark.parametrize("name", ["ais", "online-poisson"])
def test_stochastic_session_resumes_exactly(tmp_path, pool, name):
    """Stop with labels pending, reopen: same labels, estimate and next batch as a session never stopped."""
    measure = make_measure("f1", pool)

    def design():
        return make_design(name, n_strata=16, branching=16)

    twin = Session(pool, measure, design(), oracle="stochastic", seed=6)
    s = Session(pool, measure, design(), oracle="stochastic", seed=6, path=tmp_path / "s.lws")
    oracle = NoisyOracle(pool, 0.15, rng=0)
    for _ in range(4):
        ids = s.next_batch(25)
        np.testing.assert_array_equal(twin.next_batch(25), ids)
        labels = oracle(ids)
        for session in (s, twin):
            session.add_labels(ids[:15], labels[:15])
            session.add_labels(ids[15:], labels[15:])
    ids = s.next_batch(25)
    twin.next_batch(25)
    part = oracle(ids[:7])
    s.add_labels(ids[:7], part)
    twin.add_labels(ids[:7], part)
    s.close()
    back = Session.open(tmp_path / "s.lws")
    assert back.stochastic and back.n_labels == twin.n_labels == 107
    np.testing.assert_array_equal(back.pending, twin.pending)
    a, b = back.estimate(), twin.estimate()
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_allclose(a.cov, b.cov, rtol=1e-9)
    rest = oracle(ids[7:])
    back.add_labels(ids[7:], rest)
    twin.add_labels(ids[7:], rest)
    np.testing.assert_array_equal(back.next_batch(25), twin.next_batch(25))
    back.close()


# -------------------------------------------------------------- simulation
@pytest.mark.slow
@pytest.mark.parametrize("design, params", [("ais", {"lam": 0.8}), ("passive", {}), ("poisson", {"lam": 0.8}),
                                            ("online-poisson", {"lam": 0.8}), ("oasis", {"lam": 0.8})])
def test_noisy_simulation_is_unbiased_for_the_expected_measure_and_covers(pool, design, params):
    """R-hat is unbiased for the noisy truth (4 s.e.), which differs from the noiseless one, and the
    95% interval covers it (binomial 3 s.e. below 0.95).  ``lam = 1 - 2 noise`` lets the prior
    expect wrong answers anywhere."""
    measure = make_measure("recall", pool)
    noise = 0.1
    repeats = 100
    result = simulate(pool, measure, design, design_params=params, budget=600,
                      batch_size=50, repeats=repeats, seed=3, checkpoints=[600], noise=noise)
    truth = true_value(pool, measure, noise)[0]
    clean = true_value(pool, measure)[0]
    assert result.true_value[0] == pytest.approx(truth)
    values = result.values[0, :, 0]
    se = values.std(ddof=1) / np.sqrt(repeats)
    assert abs(values.mean() - truth) < 4 * se + 2e-3  # 2e-3: the ratio's O(1/n) bias
    assert abs(clean - truth) > 10 * se  # a test that used the noiseless truth would fail
    row = result.checkpoint_rows()[0]
    assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / repeats)
    assert result.to_dict()["oracle_noise"] == noise


@pytest.mark.slow
def test_poisson_interval_counts_the_label_noise_of_certain_items(pool):
    """2000 of 3000 items labeled: hundreds are taken with certainty, where the deterministic error
    (eq. 28 of Yilmaz et al., "Sample Efficient Model Evaluation", arXiv:2109.12043, 2021) is zero but
    a noisy label still varies (eq. 27); the coverage assertion fails with eq. 28."""
    measure = make_measure("recall", pool)
    repeats = 100
    result = simulate(pool, measure, "poisson", design_params={"lam": 0.8}, budget=2000,
                      batch_size=500, repeats=repeats, seed=4, checkpoints=[2000], noise=0.1)
    sampler = make_design("poisson", lam=0.8, budget=2000).start(pool, measure, rng=np.random.default_rng(0),
                                                                  oracle="stochastic")
    sampler.draw(1, np.zeros(pool.n_items, bool))
    assert np.sum(sampler.b == 1) > 200  # the regime this test is about
    row = result.checkpoint_rows()[0]
    values = result.values[0, :, 0]
    truth = true_value(pool, measure, 0.1)[0]
    assert abs(values.mean() - truth) < 4 * values.std(ddof=1) / np.sqrt(repeats) + 2e-3
    assert row["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / repeats)


@pytest.mark.slow
def test_stratified_interval_under_noise_keeps_the_label_noise_of_strata_labeled_in_full(pool):
    """2900 of 3000 items labeled: the finite-population correction would shrink the variance 30-fold,
    but noisy labels still vary."""
    measure = make_measure("f1", pool)
    repeats = 100
    result = simulate(pool, measure, "stratified", budget=2900,
                      batch_size=500, repeats=repeats, seed=6, checkpoints=[2900], noise=0.1)
    values = result.values[0, :, 0]
    truth = true_value(pool, measure, 0.1)[0]
    assert abs(values.mean() - truth) < 4 * values.std(ddof=1) / np.sqrt(repeats) + 2e-3
    assert result.checkpoint_rows()[0]["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / repeats)


@pytest.mark.slow
def test_online_poisson_census_under_noise_is_the_mean_of_its_labels_and_covers():
    """Every item labeled once: the estimate is the measure at the mean noisy loss, not exact, and its
    interval (the labels' noise under the model) covers the noisy truth."""
    small = make_pool(150, prevalence=0.3, separation=2.0, seed=8)
    measure = make_measure("f1", small)
    params = {"lam": 0.6, "n_strata": 8, "branching": 8}
    s = Session(small, measure, make_design("online-poisson", **params), oracle="stochastic", seed=1)
    est = s.run(NoisyOracle(small, 0.2, rng=2), 150, 50)
    sample = s.sample()
    assert s.n_labels == 150 and np.unique(sample.draws.items).size == 150
    losses = measure.loss(small.outputs(sample.draws.items), sample.labels)
    np.testing.assert_allclose(est.value, measure.value(losses.mean(axis=0)), rtol=1e-12)
    assert est.std[0] > 0.01
    with pytest.raises(ValueError, match="online-poisson labels each item once"):
        s.next_batch(1)
    repeats = 200
    result = simulate(small, measure, "online-poisson", design_params=params, budget=150, batch_size=50,
                      repeats=repeats, seed=5, checkpoints=[150], noise=0.2)
    values = result.values[0, :, 0]
    truth = true_value(small, measure, 0.2)[0]
    assert abs(values.mean() - truth) < 4 * values.std(ddof=1) / np.sqrt(repeats) + 5e-3
    assert result.checkpoint_rows()[0]["coverage"] >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / repeats)


def test_noise_needs_a_stochastic_oracle(pool):
    """The oracle mode is the session's: noise implies a stochastic oracle, and contradicting it is refused."""
    measure = make_measure("f1", pool)
    with pytest.raises(ValueError, match="the annotators are noisy but the oracle is deterministic"):
        simulate(pool, measure, "ais", noise=0.1, oracle="deterministic", repeats=1, budget=100)
    with pytest.raises(ValueError, match="oracle: choose 'deterministic' or 'stochastic'"):
        Session(pool, measure, make_design("ais"), oracle="noisy")
    with pytest.raises(ValueError, match="oracle: choose 'deterministic' or 'stochastic'"):
        simulate(pool, measure, "ais", oracle="noisy", repeats=1, budget=100)
