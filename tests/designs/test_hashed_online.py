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
