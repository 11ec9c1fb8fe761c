"""online-poisson on score blocks in memory: the draw of a round's members by the item hash."""

import numpy as np

import labelwise as lw
from labelwise.designs.hashed_online import HashedOnlineSampler


def test_a_blocks_members_are_a_simple_random_sample_of_its_items_not_handed_out():
    # 3000 hash seeds: each item not handed out is among its block's k members with probability k / U (chi-square
    # over the items, within 5 standard deviations of its mean); handed-out items never are, and every block gives
    # exactly k of its items
    pool = lw.make_pool(600, prevalence=0.1, seed=2)
    sampler = lw.make_design("online-poisson", n_strata=4).start(pool, lw.make_measure("f1", pool),
                                                                 rng=np.random.default_rng(0))
    assert isinstance(sampler, HashedOnlineSampler)
    counts = sampler.rounds.summary.counts
    handed = np.zeros(pool.n_items, dtype=bool)
    handed[::5] = True
    unhanded = counts - np.bincount(sampler.block[handed], minlength=counts.size)
    wanted = np.minimum(unhanded, np.arange(counts.size) % 3)
    hits, seeds = np.zeros(pool.n_items), 3000
    for seed in range(seeds):
        items = sampler._first_unhanded(wanted, unhanded, handed, seed)
        assert np.array_equal(np.bincount(sampler.block[items], minlength=counts.size), wanted)
        hits[items] += 1
    assert not hits[handed].any()
    p = (wanted / np.maximum(unhanded, 1))[sampler.block[~handed]]
    live = (p > 0) & (p < 1)
    chi2 = np.sum((hits[~handed][live] - seeds * p[live]) ** 2 / (seeds * p[live] * (1 - p[live])))
    df = live.sum()
    assert abs(chi2 - df) < 5 * np.sqrt(2 * df)
    assert np.all(hits[~handed][p == 1] == seeds)


def test_a_session_drawn_per_item_before_goes_on_per_item(tmp_path):
    # a file whose rounds were drawn per item (their states per (stratum, loss key) group), reopened with its
    # set-up redone: the per-item sampler is rebuilt from the labels and estimates and draws as before
    from contextlib import closing

    from labelwise.designs.online_poisson import OnlinePoissonSampler
    from labelwise.store import Store

    pool = lw.make_pool(3000, prevalence=0.05, seed=1)
    measure, design = lw.make_measure("f1", pool), lw.make_design("online-poisson")
    rng = np.random.default_rng(0)
    path = tmp_path / "old.lws"
    with lw.Session(pool, measure, design, seed=rng, budget=150, path=path,
                    sampler=OnlinePoissonSampler(design, design.group_model(pool, measure, "deterministic"), rng)) as s:
        s.run(lw.TruthOracle(pool), budget=150)
        expected = s.estimate()
    with closing(Store.open(path)) as store:
        store.put_cache("sampler", b"setup from-older-code\n" + b"\x00" * 10)
    with lw.Session.open(path) as s:
        assert isinstance(s.sampler, HashedOnlineSampler) and s.sampler.legacy is not None
        got = s.estimate()
        np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
        np.testing.assert_allclose(got.cov, expected.cov, rtol=1e-3)  # the model refitted at once: EM to 1e-6
        ids = s.next_batch(50)
        assert ids.size == 50 and not np.isin(pool.positions(ids), s.sample().draws.items).any()
