"""The label floor's slope moments: ``oasis`` computes them on its groups, and a simulation's runs share them."""

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs import make_design
from labelwise.draws import Draws, Sample
from labelwise.estimators.label_floor import stratum_slope_moments


@pytest.fixture(scope="module")
def pool():
    return lw.make_pool(n_items=4_000, prevalence=0.05, n_systems=2, seed=5)


def _sample(items, pool):
    n = items.size
    return Sample(Draws(items, np.ones(n), np.full(n, 1 / pool.n_items)), pool.labels[items], n)


def test_oasis_slope_moments_on_its_groups_equal_those_over_every_item(pool):
    measure = lw.make_measure("f1,precision", pool, "all")
    sampler = make_design("oasis").start(pool, measure, rng=np.random.default_rng(0))
    floor = sampler.label_floor_inputs(measure, _sample(np.arange(10), pool), sampler.strata)
    assert sampler.groups.n_groups < pool.n_items / 10  # the groups are far fewer than the items
    every_item = stratum_slope_moments(measure, pool.outputs(), sampler.strata, sampler.sizes.size)
    np.testing.assert_allclose(floor["slope_moments"], every_item, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("design", ["stratified", "oasis"])
def test_copies_of_a_sampler_share_the_slope_moments(design, pool):
    # simulate starts one sampler and copies it for every run: the moments are computed once
    measure = lw.make_measure("f1", pool)
    template = make_design(design).start(pool, measure, rng=np.random.default_rng(0))
    strata = template.strata if design == "oasis" else template.assignment
    first, second = (template.copy(np.random.default_rng(r)) for r in (1, 2))
    sample = _sample(np.arange(20), pool)
    moments = first.label_floor_inputs(measure, sample, strata)["slope_moments"]
    assert second.label_floor_inputs(measure, sample, strata)["slope_moments"] is moments
    other = lw.make_measure("precision", pool)  # another measure: computed for it, then kept instead
    assert first.label_floor_inputs(other, sample, strata)["slope_moments"].shape == (moments.shape[0], 2, 2)
