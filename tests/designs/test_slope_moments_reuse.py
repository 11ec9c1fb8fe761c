"""The label floor's slope moments: a simulation's runs share them."""

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs import make_design
from labelwise.draws import Draws, Sample


@pytest.fixture(scope="module")
def pool():
    return lw.make_pool(n_items=4_000, prevalence=0.05, n_systems=2, seed=5)


def _sample(items, pool):
    n = items.size
    return Sample(Draws(items, np.ones(n), np.full(n, 1 / pool.n_items)), pool.labels[items], n)


def test_copies_of_a_sampler_share_the_slope_moments(pool):
    # simulate starts one sampler and copies it for every run: the moments are computed once
    measure = lw.make_measure("f1", pool)
    template = make_design("stratified").start(pool, measure, rng=np.random.default_rng(0))
    first, second = (template.copy(np.random.default_rng(r)) for r in (1, 2))
    sample = _sample(np.arange(20), pool)
    moments = first.label_floor_inputs(measure, sample)["slope_moments"]
    assert second.label_floor_inputs(measure, sample)["slope_moments"] is moments
    other = lw.make_measure("precision", pool)  # another measure: computed for it, then kept instead
    assert first.label_floor_inputs(other, sample)["slope_moments"].shape == (moments.shape[0], 2, 2)
