"""online-poisson's rounds on engine pools: the in-memory design's leaves, exact inclusion probabilities,
the same rounds in DuckDB and NumPy."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from labelwise.designs import make_design
from labelwise.designs.poisson_rounds import systematic_counts
from labelwise.engines import EnginePool
from labelwise.engines.online import RoundLog, block_rounds, next_round, simulate_rounds


def _empty_log(n_blocks: int) -> RoundLog:
    return RoundLog(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, n_blocks)),
                    np.empty(0, np.int64))


def test_leaves_are_the_in_memory_design_s_strata(scored, scored_file):
    pool = scored
    design = make_design("online-poisson")
    leaves = design.hierarchy(pool).blocks  # the in-memory model's leaf of every item
    for engine in (EnginePool.from_pool(pool), EnginePool.open(scored_file, "duckdb")):
        rounds = block_rounds(engine, design, engine.measure("f1"))
        assert rounds.strata is not None and rounds.n_leaves == 256
        stratum = rounds.strata.of_scores(pool.scores[:, 0])
        assert np.array_equal(stratum, leaves)
        # every block lies in one leaf, and holds the items of its stratum
        per_leaf = np.bincount(rounds.leaf, weights=rounds.summary.counts)
        assert np.array_equal(per_leaf, np.bincount(leaves))


def test_concentrated_scores_fall_back_to_prior_bin_strata(pool):
    # probabilities near 0 put most items in the first fine bin: the square-root rule finds fewer than 256
    # strata, and the in-memory design refines them by rank, which an engine cannot
    engine = EnginePool.from_pool(pool)
    rounds = block_rounds(engine, make_design("online-poisson"), engine.measure("f1"))
    assert rounds.strata is None


def test_systematic_counts_sum_to_the_expected_total_and_differ_by_less_than_one():
    expected = np.array([0.3, 0.7, 1.5, 0.0, 2.25, 0.25])  # sums to 5
    for seed in range(200):
        counts = systematic_counts(expected, np.random.default_rng(seed))
        assert counts.sum() == 5 and np.all(np.abs(counts - expected) < 1) and counts[3] == 0


@pytest.mark.parametrize("order", ["score", "random"])
def test_a_uniform_round_in_score_order_gives_every_leaf_its_proportional_share(scored, order):
    # hedge=0 draws every round uniformly; the blocks in order of their prior make it a proportional stratified
    # sample of the score strata (each leaf's count the floor or ceiling of its share), in random order a leaf's
    # count varies by about sqrt(its share)
    engine = EnginePool.from_pool(scored)
    rounds = block_rounds(engine, make_design("online-poisson", hedge=0.0, order=order), engine.measure("f1"))
    G, n_new, none = rounds.summary.keys.size, 600, np.empty(0, np.int64)
    share = np.bincount(rounds.leaf, weights=rounds.summary.counts) * n_new / scored.n_items
    worst = 0.0
    for seed in range(20):
        _, sample = next_round(engine, rounds, seed, 0, _empty_log(G), none, none, n_new)
        got = np.bincount(rounds.leaf[np.searchsorted(rounds.summary.keys, sample.keys)], minlength=share.size)
        worst = max(worst, float(np.max(np.abs(got - share))))
    assert worst < 1.0 if order == "score" else worst > 2.0


def test_a_round_draws_each_unlabeled_item_with_its_block_s_inclusion_probability(scored):
    # 200 first rounds of 600 items (some blocks certain under the mean deviations): a block's mean count is U_g b_g (systematic counts differ from it by
    # less than 1, so a count's variance is at most 1/4: 4 standard errors are 2 / sqrt(R)); within the
    # largest block every member is drawn with probability b_g (binomial, 4.5 standard errors over its members)
    pool = scored
    engine = EnginePool.from_pool(pool)
    rounds = block_rounds(engine, make_design("online-poisson", deviation="mean"), engine.measure("f1"))
    G, R, n_new = rounds.summary.keys.size, 200, 600
    log, none = _empty_log(G), np.empty(0, np.int64)
    b = rounds.inclusion(log.blocks, log.labels, none, n_new)
    counts, members = np.zeros(G), np.zeros(pool.n_items)
    for seed in range(R):
        _, sample = next_round(engine, rounds, seed, 0, log, none, none, n_new)
        assert len(sample) == n_new and np.unique(sample.item_ids).size == n_new
        blocks = np.searchsorted(rounds.summary.keys, sample.keys)
        assert np.array_equal(sample.inclusion, b[blocks])
        counts += np.bincount(blocks, minlength=G)
        members[sample.item_ids] += 1
    expected = rounds.summary.counts * b
    assert np.all(np.abs(counts / R - expected) <= 2 / np.sqrt(R))
    certain = b == 1.0
    assert certain.any() and np.all(counts[certain] == R * rounds.summary.counts[certain])
    keys = np.searchsorted(rounds.summary.keys, engine.source._keys(rounds.strata))
    big = int(np.argmax(np.where(b < 1, rounds.summary.counts, 0)))
    freq = members[keys == big] / R
    assert np.all(np.abs(freq - b[big]) <= 4.5 * np.sqrt(b[big] * (1 - b[big]) / R))


def test_duckdb_rounds_within_strata_equal_the_numpy_rounds(scored, scored_file):
    design = make_design("online-poisson")
    runs = []
    for engine in (EnginePool.from_pool(scored), EnginePool.open(scored_file, "duckdb")):
        rounds = block_rounds(engine, design, engine.measure("f1"))
        assert rounds.strata is not None
        log, ids = _empty_log(rounds.summary.keys.size), np.empty(0, np.int64)
        handed = []
        for r in range(2):  # two rounds, the second planned from the first's labels
            b, sample = next_round(engine, rounds, 3, r, log, ids, log.blocks, 40)
            blocks = np.searchsorted(rounds.summary.keys, sample.keys)
            log = RoundLog(np.r_[log.blocks, blocks], np.r_[log.labels, engine.source.labels(sample.item_ids)],
                           np.r_[log.rounds, np.full(len(sample), r)], np.vstack([log.inclusion, b]),
                           np.r_[log.drawn, len(sample)])
            ids = np.r_[ids, sample.item_ids]
            handed.append(sample.item_ids)
        estimates = simulate_rounds(engine, rounds, seed=11, batch_size=40, marks=[40, 120])
        runs.append((rounds.summary, handed, estimates))
    (s_a, handed_a, est_a), (s_b, handed_b, est_b) = runs
    assert np.array_equal(s_a.keys, s_b.keys) and np.array_equal(s_a.counts, s_b.counts)
    assert all(np.array_equal(a, b) for a, b in zip(handed_a, handed_b, strict=True))
    for a, b in zip(est_a, est_b, strict=True):
        assert b.value[0] == pytest.approx(a.value[0], abs=1e-12)
        assert np.allclose(b.interval(), a.interval(), atol=1e-12)


def test_session_within_score_strata_equals_the_simulated_rounds(scored, scored_file, tmp_path):
    # init keeps the strata and the blocks within them; every `next` reopens the file and draws a round
    from typer.testing import CliRunner

    from labelwise.cli import app

    runner = CliRunner()
    session, batch = tmp_path / "s.lw", tmp_path / "batch.csv"

    def invoke(*args):
        result = runner.invoke(app, [str(a) for a in args])
        assert result.exit_code == 0, result.output
        return result

    invoke("init", scored_file, "-s", session, "--engine", "duckdb", "--seed", 7, "--design", "online-poisson")
    truth = dict(zip(scored.item_ids.tolist(), scored.labels.tolist(), strict=True))
    handed = []
    for _ in range(3):
        invoke("next", session, "-n", 30, "-o", batch)
        frame = pd.read_csv(batch)
        frame["label"] = [truth[i] for i in frame["item_id"]]
        frame.to_csv(batch, index=False)
        invoke("label", session, batch)
        handed += frame["item_id"].tolist()
    got = json.loads(invoke("estimate", session, "--json").stdout)
    memory = EnginePool.from_pool(scored)
    rounds = block_rounds(memory, make_design("online-poisson"), memory.measure("f1"))
    expected = simulate_rounds(memory, rounds, seed=7, batch_size=30, marks=[90])[0]
    assert len(set(handed)) == got["n_labels"] == 90
    assert got["components"][0]["value"] == pytest.approx(expected.value[0], abs=1e-12)
    assert got["components"][0]["std"] == pytest.approx(np.sqrt(expected.cov[0, 0]), rel=1e-9)
