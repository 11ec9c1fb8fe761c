"""Session.add_system: a new system's measures from the labels already in, and the design re-targeted."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from labelwise import Session, make_measure, make_pool
from labelwise.designs import make_design
from labelwise.estimators import round_weights
from labelwise.measures import CustomMeasure
from labelwise.pool import Pool, PoolError
from labelwise.session_systems import system_measure

N_SIM = 2000


def _first_system(full: Pool) -> Pool:
    """``full`` with its first system only (the session's pool before the second is added)."""
    return Pool.from_arrays(full.item_ids, preds=full.preds[:, :1], scores=full.scores[:, :1],
                            probs=full.probs[:, :1], labels=full.labels, system_names=["A"])


def _add_b(s: Session, full: Pool):
    return s.add_system("B", full.preds[:, 1], scores=full.scores[:, 1], probs=full.probs[:, 1])


@pytest.fixture(scope="module")
def pools() -> tuple[Pool, Pool]:
    """A 2000-item pool of two systems (10% positives) and the same pool with the first system only."""
    full = make_pool(N_SIM, prevalence=0.1, n_systems=2, separation=2.0, seed=11)
    return full, _first_system(full)


def _truth(full: Pool, name: str) -> float:
    m = make_measure(name, full, systems=1)
    return float(m.value(m.loss(full.outputs(), full.labels).mean(axis=0))[0])


# ------------------------------------------------------------------ measures
def test_the_measure_is_extended_name_by_name_once_per_kind(pools):
    full, _ = pools
    measure = make_measure("f1,fbeta:2", full, systems="all")
    extended = system_measure(measure, 2, "C")
    assert len(measure.parts) == 4 and extended.names == ("f1[C]", "f2[C]")
    assert [p.spec() for p in extended.parts] == [
        {**p.spec(), "system": 2, "system_name": "C"} for p in measure.parts if p.system == 0]


def test_a_user_defined_measure_cannot_be_extended(pools):
    _, pool_a = pools
    custom = CustomMeasure(name="hits", dim=1, loss_fn=lambda out, y: (out.preds[:, :1] == y[:, None]) * 1.0,
                           g_fn=lambda R: R, names=("hits",))
    s = Session(pool_a, custom, "importance", seed=0)
    with pytest.raises(ValueError, match="user-defined"):
        s.add_system("B", pool_a.preds[:, 0], scores=pool_a.scores[:, 0], probs=pool_a.probs[:, 0])


# ------------------------------------------------------------- exact reuse
@pytest.mark.parametrize("design", ["online-poisson", "ais"])
def test_old_draws_keep_the_probabilities_they_were_drawn_with(pools, design):
    """Every item's per-round probability is the same under the new groups as under the old ones, so the
    new system's estimate equals the old run's estimate of its measure from the same labels."""
    full, pool_a = pools
    s = Session(pool_a, make_measure("f1", pool_a), design, seed=3)
    s.run(lambda ids: full.labels[ids], 150, 50)
    old = s.sampler
    added = _add_b(s, full)
    new = s.sampler
    new_of = new.gm.groups.of_item
    if design == "online-poisson":  # rounds drawn on score blocks, carried to groups within the blocks
        assert len(new._b_groups) == len(old._inclusion) == 3
        for b_old, b_new in zip(old._inclusion, new._b_groups):
            np.testing.assert_array_equal(b_old[old.block], b_new[new_of])
    else:
        old_of = old.gm.groups.of_item
        assert len(new._history) == len(old._history) == 3
        for (_, q_old, _, _), (_, q_new, _, _) in zip(old._history, new._history):
            np.testing.assert_array_equal(q_old[old_of], q_new[new_of])
    old.pool = s.pool  # the old run, reading the new column: the same estimate
    np.testing.assert_allclose(old.estimate(added.measure, s.sample()).value, added.estimate.value, rtol=1e-12)


@pytest.mark.parametrize("design", ["passive", "importance", "stratified", "oasis"])
def test_every_design_estimates_the_new_system_as_its_old_run_would(pools, design):
    """Designs that store each draw's weight: the new system's estimate is the old run's estimate of its
    measure from the same labels, and the next batch draws from the re-targeted sampler."""
    full, pool_a = pools
    s = Session(pool_a, make_measure("f1", pool_a), design, seed=6)
    s.run(lambda ids: full.labels[ids], 150, 50)
    old = s.sampler
    added = _add_b(s, full)
    assert s.sampler is not old and s.sampler.measure == s.measure
    old.pool = s.pool
    np.testing.assert_allclose(old.estimate(added.measure, s.sample()).value, added.estimate.value, rtol=1e-12)
    assert added.covered
    s.run(lambda ids: full.labels[ids], 200, 50)
    assert s.n_labels == 200 and s.estimate().all_defined


def test_the_report_counts_the_labels_that_inform_the_new_system(pools):
    full, pool_a = pools
    s = Session(pool_a, make_measure("precision", pool_a), "importance", seed=1)
    s.run(lambda ids: full.labels[ids], 100, 50)
    added = _add_b(s, full)
    items = np.unique(s.sample().draws.items)
    assert added.n_labels == items.size == 100
    assert added.n_informative == int(np.sum(full.preds[items, 1] == 1))  # precision: B's predicted positives
    assert added.covered and added.estimate.names == ("precision[B]",)


def test_ais_without_a_defensive_share_says_the_new_system_is_not_covered(pools):
    """ais (defensive=0) never draws items whose precision loss under A is zero (A predicts negative);
    where B predicts positive there, B's precision is not covered."""
    full, pool_a = pools
    s = Session(pool_a, make_measure("precision", pool_a), make_design("ais"), seed=2)
    s.run(lambda ids: full.labels[ids], 100, 50)
    assert "probability 0" in _add_b(s, full).uncovered
    s = Session(pool_a, make_measure("precision", pool_a), make_design("ais", defensive=0.1), seed=2)
    s.run(lambda ids: full.labels[ids], 100, 50)
    assert _add_b(s, full).covered


# ------------------------------------------------------------- input checks
def test_bad_outputs_and_designs_are_rejected_and_change_nothing(pools, tmp_path):
    full, pool_a = pools
    path = tmp_path / "s.lw"
    s = Session(pool_a, make_measure("f1", pool_a), "poisson", seed=0, budget=200, path=path)
    s.run(lambda ids: full.labels[ids], 100, 50)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="poisson"):
        _add_b(s, full)
    with pytest.raises(PoolError, match="choose a new"):
        s.add_system("A", full.preds[:, 1], scores=full.scores[:, 1], probs=full.probs[:, 1])
    with pytest.raises(PoolError, match="values for a pool of"):
        s.add_system("B", full.preds[:-1, 1], scores=full.scores[:-1, 1], probs=full.probs[:-1, 1])
    with pytest.raises(PoolError, match="prob"):
        s.add_system("B", full.preds[:, 1], scores=full.scores[:, 1] + 5)  # scores are no probabilities
    s.close()
    assert path.read_bytes() == before
    assert Session.open(path).pool.n_systems == 1


# -------------------------------------------------------------- persistence
@pytest.mark.parametrize("design", ["online-poisson", "importance", "passive", "stratified", "ais"])
def test_a_reopened_session_continues_as_the_one_in_memory(pools, tmp_path, design):
    full, pool_a = pools
    oracle = lambda ids: full.labels[ids]
    memory = Session(pool_a, make_measure("f1", pool_a), design, seed=5)
    stored = Session(pool_a, make_measure("f1", pool_a), design, seed=5, path=tmp_path / "s.lw")
    for s in (memory, stored):
        s.run(oracle, 100, 50)
        _add_b(s, full)
    stored.close()
    reopened = Session.open(tmp_path / "s.lw")
    assert reopened.pool.system_names == ("A", "B") and reopened.measure == memory.measure
    for s in (memory, reopened):
        s.run(oracle, 200, 50)
    np.testing.assert_array_equal(memory.draws.items, reopened.draws.items)
    np.testing.assert_allclose(memory.estimate().value, reopened.estimate().value, rtol=1e-9)


def test_online_poisson_goes_on_within_the_first_blocks_also_when_its_set_up_is_redone(pools, tmp_path):
    """Rounds drawn on score blocks, then a system added: the per-item sampler's groups lie within those blocks,
    and a reopened file whose stored set-up is gone rebuilds them from the record of the addition."""
    full, pool_a = pools
    oracle = lambda ids: full.labels[ids]
    path = tmp_path / "s.lw"
    s = Session(pool_a, make_measure("f1", pool_a), "online-poisson", seed=4, path=path)
    s.run(oracle, 100, 50)
    blocks = s.sampler.block
    _add_b(s, full)
    groups = s.sampler.gm.groups
    assert np.array_equal(s.sampler.drawn_on, blocks)
    assert np.unique(groups.of_item.astype(np.int64) * (blocks.max() + 1) + blocks).size == groups.n_groups
    expected = s.estimate()
    s.close()
    _forget_setup(path)
    with Session.open(path) as again:
        assert np.array_equal(again.sampler.drawn_on, blocks)
        np.testing.assert_allclose(again.estimate().value, expected.value, rtol=1e-12)
        again.run(oracle, 150, 50)
        assert again.n_labels == 150


def test_importance_weighs_every_draw_by_the_mixture_of_its_proposals_also_when_its_set_up_is_redone(
        pools, tmp_path):
    """After the addition an importance draw of item x weighs ``1 / (N sum_j (n_j/n) q_j(x))``; a reopened
    file whose stored set-up is gone (other labelwise code) rebuilds the same proposals."""
    full, pool_a = pools
    path = tmp_path / "s.lw"
    s = Session(pool_a, make_measure("f1", pool_a), "importance", seed=8, path=path)
    s.run(lambda ids: full.labels[ids], 100, 50)
    q_old = s.sampler.q
    _add_b(s, full)
    s.run(lambda ids: full.labels[ids], 200, 50)
    d = s.sample().draws
    q_new = s.sampler.q
    share_old = d.count[d.round < 2].sum() / d.count.sum()
    expected = 1.0 / (N_SIM * (share_old * q_old[d.items] + (1 - share_old) * q_new[d.items]))
    np.testing.assert_allclose(s.sampler.mixture_weights(d), expected, rtol=1e-12)
    estimate = s.estimate()
    s.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM cache WHERE key='sampler'")
    reopened = Session.open(path)
    np.testing.assert_allclose(reopened.estimate().value, estimate.value, rtol=1e-9)
    np.testing.assert_allclose(reopened.estimate().cov, estimate.cov, rtol=1e-9)


# ----------------------------------------------------------------- targeting
@pytest.mark.parametrize("design", ["online-poisson", "importance"])
def test_later_draws_go_where_the_new_system_is_under_covered(pools, design):
    """The next batch after add-system puts a larger share of its draws on the items B alone predicts
    positive (which the design for A's F1 barely reaches) than the same batch of the same session
    without it (over seeds)."""
    full, pool_a = pools
    b_alone = (full.preds[:, 1] == 1) & (full.preds[:, 0] == 0)
    shares = np.zeros(2)
    for seed in range(6):
        for k, add in enumerate((False, True)):
            s = Session(pool_a, make_measure("f1", pool_a), design, seed=seed)
            s.run(lambda ids: full.labels[ids], 100, 50)
            if add:
                _add_b(s, full)
            rows = s.hand_out(100)
            shares[k] += b_alone[s.draws.items[rows]].mean() / 6
    assert shares[1] > 1.3 * shares[0]


def _add_c(s: Session, full: Pool):
    return s.add_system("C", 1 - full.preds[:, 1], scores=-full.scores[:, 1], probs=1 - full.probs[:, 1])


def _twins(full: Pool, pool_a: Pool, measure: str, path) -> list[Session]:
    """The same online-poisson session in memory and in the file ``path``, 200 labels in."""
    twins = [Session(pool_a, make_measure(measure, pool_a), "online-poisson", seed=4, path=where)
             for where in (None, path)]
    for s in twins:
        s.run(lambda ids: full.labels[ids], 200, 50)
    return twins


def _forget_setup(path) -> None:
    """Mark the file's stored set-up as written by other labelwise code: opening the file redoes it."""
    from contextlib import closing

    from labelwise.store import Store

    with closing(Store.open(path)) as store:
        store.put_cache("sampler", b"setup from-older-code\n" + b"\x00" * 10)


def _leading(est, k: int = 2) -> tuple:
    """The first ``k`` components' values, standard errors and interval bounds."""
    return est.value[:k], est.std[:k], *(bound[:k] for bound in est.interval())


def test_adding_a_system_leaves_the_first_systems_estimate_as_it_was(pools, tmp_path):
    """online-poisson drawn on score blocks: after one or two added systems, the first system's estimate and
    interval -- alone or as part of the extended measure, in memory, in a file, reopened and with its set-up
    redone -- are the blocks' rounds' from before, until a round drawn since has labels."""
    full, pool_a = pools
    path = tmp_path / "s.lw"
    memory, stored = _twins(full, pool_a, "f1,recall", path)
    before = _leading(memory.estimate())
    for s in (memory, stored):
        _add_b(s, full)
        _add_c(s, full)
        assert s.estimate().names[:2] == ("f1", "recall") and len(s.estimate().names) == 6
        for est in (s.estimate(), s.estimate(make_measure("f1,recall", s.pool))):
            np.testing.assert_allclose(_leading(est), before, rtol=1e-12)
    joint = memory.estimate()
    assert np.all(np.linalg.eigvalsh(joint.cov) >= -1e-12)  # still a covariance
    stored.close()
    _forget_setup(path)
    with Session.open(path) as again:
        np.testing.assert_allclose(_leading(again.estimate()), before, rtol=1e-12)
    memory.run(lambda ids: full.labels[ids], 250, 50)  # a round drawn since: the per-item sampler's estimate
    assert not np.allclose(memory.estimate().std[:2], before[1])


@pytest.mark.parametrize("between", [0, 100])
def test_a_later_addition_leaves_an_added_systems_estimate_as_it_was(pools, tmp_path, between):
    """B added, ``between`` more labels, then C: every earlier system's estimate and interval -- B's too, whose
    sampler the addition of C replaced -- stay as they were, in memory, in a file and reopened with its set-up
    redone (from the file's record of the additions), until a round drawn since has labels."""
    full, pool_a = pools
    path = tmp_path / "s.lw"
    memory, stored = _twins(full, pool_a, "f1", path)
    for s in (memory, stored):
        _add_b(s, full)
        s.run(lambda ids: full.labels[ids], 200 + between, 50)
    before = _leading(memory.estimate())
    for s in (memory, stored):
        _add_c(s, full)
        for est in (s.estimate(), s.estimate(make_measure("f1", s.pool, systems=[0, 1]))):
            np.testing.assert_allclose(_leading(est), before, rtol=1e-9)
    b_alone = memory.estimate(make_measure("f1", memory.pool, systems=1))
    np.testing.assert_allclose(b_alone.std, before[1][1:], rtol=1e-9)
    stored.close()
    _forget_setup(path)
    with Session.open(path) as again:
        np.testing.assert_allclose(_leading(again.estimate()), before, rtol=1e-9)


def test_after_a_later_addition_each_system_weights_the_rounds_from_its_own_addition(pools):
    """Once a round drawn since C's addition has labels, B's estimate weights the rounds from B's addition on and
    A's every round: narrower than the rounds since C's addition alone, the current sampler's own weighting."""
    full, pool_a = pools
    oracle = lambda ids: full.labels[ids]
    s = Session(pool_a, make_measure("f1", pool_a), "online-poisson", seed=4)
    s.run(oracle, 200, 50)
    _add_b(s, full)
    s.run(oracle, 400, 50)
    _add_c(s, full)
    s.run(oracle, 450, 50)
    assert s.sampler.first_round == 8
    for system in (0, 1):
        own = make_measure("f1", s.pool, systems=system)
        assert s.estimate(own).std[0] < 0.9 * s.sampler.estimate(own, s.sample()).std[0]


def test_online_poisson_weights_only_the_rounds_drawn_since_the_addition(pools):
    """Once a round drawn after the addition has labels the earlier rounds weigh nothing (their labels enter
    as known losses); before, every round counts."""
    np.testing.assert_allclose(round_weights(np.array([50, 50, 50, 50]), 0.0, 2), [0, 0, 0.5, 0.5])
    np.testing.assert_allclose(round_weights(np.array([50, 50, 0]), 0.0, 2), [0.5, 0.5, 0])
    full, pool_a = pools
    s = Session(pool_a, make_measure("f1", pool_a), "online-poisson", seed=4)
    s.run(lambda ids: full.labels[ids], 100, 50)
    _add_b(s, full)
    assert s.sampler.first_round == 2
    s.run(lambda ids: full.labels[ids], 150, 50)
    assert s.sampler.state()["first_round"] == 2


# ---------------------------------------------------------------- statistics
def _reuse_runs(full: Pool, pool_a: Pool, design: str, measure: str, runs: int, n_labels: int,
                more: int) -> np.ndarray:
    """The new system's (estimate, lower, upper) from ``n_labels`` labels drawn for system A, right after it is
    added and after ``more`` labels drawn for both, shape ``(runs, 2, 3)``."""
    m = make_measure(measure, pool_a)
    d = make_design(design, pool_a)
    base = d.start(pool_a, m, rng=np.random.default_rng(0))
    out = np.empty((runs, 2, 3))
    for r in range(runs):
        rng = np.random.default_rng(r)
        s = Session(pool_a, m, d, seed=rng, sampler=base.copy(rng))
        s.run(lambda ids: full.labels[ids], n_labels, 50)
        at_add = _add_b(s, full).estimate
        after = s.run(lambda ids: full.labels[ids], n_labels + more, 50)  # the estimate at the run's end
        for k, (est, component) in enumerate(((at_add, 0), (after, 1))):
            lo, hi = est.interval()
            out[r, k] = est.value[component], lo[component], hi[component]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("design", ["online-poisson", "importance"])
def test_the_new_system_is_estimated_without_bias_from_reused_labels(pools, design):
    """Accuracy is a mean of losses, estimated without bias by both designs: right after the addition and
    after 100 more labels, the mean over runs lies within 3 standard errors of B's true accuracy."""
    full, pool_a = pools
    values = _reuse_runs(full, pool_a, design, "accuracy", 120, 150, 100)[..., 0]
    se = values.std(axis=0, ddof=1) / np.sqrt(values.shape[0])
    assert np.all(np.abs(values.mean(axis=0) - _truth(full, "accuracy")) < 3 * se)


@pytest.mark.slow
@pytest.mark.parametrize("design", ["online-poisson", "importance"])
def test_the_new_systems_interval_covers(pools, design):
    """B's F1 interval covers its truth at 95% right after the addition and after 100 more labels, within 3
    standard errors of the binomial coverage over the runs (above: a conservative interval must stay
    narrow enough)."""
    full, pool_a = pools
    runs = 80
    values, lower, upper = np.moveaxis(_reuse_runs(full, pool_a, design, "f1", runs, 300, 100), 2, 0)
    truth = _truth(full, "f1")
    coverage = np.mean((lower <= truth) & (truth <= upper), axis=0)
    assert np.all(coverage >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs))
    rmse = np.sqrt(np.mean((values - truth) ** 2, axis=0))
    assert np.all(np.mean(upper - lower, axis=0) <= 2 * 3.92 * rmse)


@pytest.mark.slow
def test_an_added_systems_interval_covers_after_a_later_addition(pools):
    """B added at 300 labels, 100 more, then C (A's logits with noise): B's F1 interval covers at 95% right after
    C's addition and after one more batch (within 3 binomial standard errors over the runs), no wider than twice
    3.92 RMSE."""
    full, pool_a = pools
    oracle = lambda ids: full.labels[ids]
    p = np.clip(full.probs[:, 0], 1e-9, 1 - 1e-9)
    logit = np.log(p / (1 - p)) + np.random.default_rng(0).normal(0.0, 0.5, N_SIM)
    c = {"preds": (logit > 0).astype(np.int64), "scores": logit, "probs": 1.0 / (1.0 + np.exp(-logit))}
    m = make_measure("f1", pool_a)
    d = make_design("online-poisson", pool_a)
    base = d.start(pool_a, m, rng=np.random.default_rng(0))
    runs = 80
    out = np.empty((runs, 2, 3))
    for r in range(runs):
        rng = np.random.default_rng(r)
        s = Session(pool_a, m, d, seed=rng, sampler=base.copy(rng))
        s.run(oracle, 300, 50)
        _add_b(s, full)
        s.run(oracle, 400, 50)
        s.add_system("C", **c)
        est = s.estimate()
        for k in range(2):
            lo, hi = est.interval()
            out[r, k] = est.value[1], lo[1], hi[1]
            if k == 0:
                est = s.run(oracle, 450, 50)  # the estimate at the run's end
    values, lower, upper = np.moveaxis(out, 2, 0)
    truth = _truth(full, "f1")
    assert np.all(np.mean((lower <= truth) & (truth <= upper), axis=0) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs))
    rmse = np.sqrt(np.mean((values - truth) ** 2, axis=0))
    assert np.all(np.mean(upper - lower, axis=0) <= 2 * 3.92 * rmse)
