"""Anytime intervals of an ``importance`` session after a system was added: draws from several proposals."""

from __future__ import annotations

import numpy as np
import pytest

import labelwise as lw
from labelwise.anytime import anytime_path, weight_bound
from labelwise.anytime.ratio import ratio_sequence
from labelwise.measures import make_measure
from labelwise.pool import Pool

LEVEL = 0.9


@pytest.fixture(scope="module")
def pools() -> tuple[Pool, Pool]:
    """A 2000-item pool of two systems and the same pool with the first system only."""
    full = lw.make_pool(2000, n_systems=2, seed=5)
    first = Pool.from_arrays(full.item_ids, preds=full.preds[:, :1], scores=full.scores[:, :1],
                             probs=full.probs[:, :1], labels=full.labels, system_names=["A"])
    return full, first


def _session(full: Pool, first: Pool, seed: int) -> lw.Session:
    """Three batches of 60 draws, the second system added, three more."""
    s = lw.Session(first, make_measure("f1", first), "importance", seed=seed, budget=360, level=LEVEL)
    oracle = lambda ids: full.labels[ids]
    s.run(oracle, 180, 60)
    s.add_system("B", full.preds[:, 1], scores=full.scores[:, 1], probs=full.probs[:, 1])
    s.run(oracle, 180, 60)
    return s


def test_every_stored_weight_is_within_the_bound_and_the_bets_carry_no_side_bets(pools):
    s = _session(*pools, seed=0)
    d, bound = s.sample().draws, weight_bound(s.sampler)
    assert np.all(d.weight <= bound[d.items] * (1 + 1e-12))
    assert np.any(d.weight > 1.0 / (s.pool.n_items * s.sampler.q[d.items]))  # the newest proposal alone would not do
    _, lower, upper, emptied = anytime_path(s)
    assert np.all(np.isfinite(lower)) and np.all(np.isfinite(upper)) and not emptied.any()
    args = (s.measure, s.pool, s.sampler.losses(s.measure, s.sample()), d.weight, d.count, d.round, bound, LEVEL,
            360)
    plain = ratio_sequence(*args, items=d.items, side_bets=False)
    np.testing.assert_array_equal(np.stack(plain), np.stack([lower, upper]))


def test_the_sequence_covers_after_a_system_was_added(pools):
    """Over R seeded sessions the 90% sequence misses the true F1 of either system at some batch at most 10% of
    the time (within 3 standard errors)."""
    full, first = pools
    measure = make_measure("f1", full, systems="all")
    truth = measure.value(measure.loss(full.outputs(), full.labels).mean(axis=0))
    runs = 20
    misses = 0
    for seed in range(runs):
        _, lower, upper, _ = anytime_path(_session(full, first, seed))
        misses += bool(np.any((lower > truth) | (upper < truth)))
    assert misses <= runs * (1 - LEVEL) + 3 * np.sqrt(runs * LEVEL * (1 - LEVEL))
