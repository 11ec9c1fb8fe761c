"""Designs: allocation, the stratified design's without-replacement guarantee, names and specs."""

import numpy as np
import pytest

from labelwise.datasets import make_pool
from labelwise.designs import StratifiedDesign, allocate, make_design
from labelwise.measures import make_measure


def test_allocation_respects_minimum_target_and_capacity():
    target = np.array([0.7, 0.2, 0.1])
    counts = np.zeros(3, dtype=np.int64)
    capacity = np.array([500, 500, 3])
    alloc = allocate(20, target, counts, capacity, minimum=2)
    assert alloc.sum() == 20 and np.all(alloc >= 2) and np.all(alloc <= capacity)
    # after many batches the counts track the target where capacity allows
    counts = counts + alloc
    for _ in range(9):
        a = allocate(20, target, counts, capacity - counts, minimum=2)
        counts = counts + a
    assert counts.sum() == 200 and counts[2] == 3
    # stratum 2 is exhausted; the other two share the rest in the target ratio 0.7 : 0.2
    assert counts[0] / counts[1] == pytest.approx(3.5, rel=0.05)


def test_stratified_design_never_draws_an_item_twice():
    pool = make_pool(5000, prevalence=0.05, seed=2)
    measure = make_measure("f1", pool)
    for allocation in ("proportional", "neyman"):
        design = StratifiedDesign(n_strata=8, allocation=allocation).start(pool, measure,
                                                                            rng=np.random.default_rng(1))
        labeled = np.zeros(pool.n_items, dtype=bool)
        seen = []
        for _ in range(10):
            draws = design.draw(100, labeled)
            assert len(draws) == 100 and not labeled[draws.items].any()
            labeled[draws.items] = True
            seen.append(draws.items)
        seen = np.concatenate(seen)
        assert np.unique(seen).size == seen.size
        counts = np.bincount(design.assignment[seen], minlength=design.sizes.size)
        if allocation == "proportional":
            np.testing.assert_allclose(counts / counts.sum(), design.sizes / design.sizes.sum(), atol=0.02)


def test_neyman_puts_more_labels_where_the_measure_varies():
    pool = make_pool(20000, prevalence=0.01, seed=4)
    measure = make_measure("f1", pool)
    rng = np.random.default_rng(0)
    prop = StratifiedDesign(allocation="proportional").start(pool, measure, rng=rng)
    ney = StratifiedDesign(allocation="neyman").start(pool, measure, rng=rng)
    top = int(np.argmax([pool.scores[prop.assignment == h, 0].mean() for h in range(prop.sizes.size)]))
    assert ney.target[top] > 3 * prop.target[top]


def test_unknown_design_and_bad_parameters_are_clear():
    with pytest.raises(ValueError, match="unknown design 'nope'"):
        make_design("nope")
    with pytest.raises(ValueError, match="design 'importance'"):
        make_design("importance", bogus=1)
    with pytest.raises(ValueError, match="defensive"):
        make_design("importance", defensive=0.0)


def test_designs_are_frozen_settings_with_a_spec_that_rebuilds_them():
    from dataclasses import FrozenInstanceError

    from labelwise.designs import DESIGNS, design_from_spec

    for name, cls in DESIGNS.items():
        design = cls()
        assert design_from_spec(design.spec()) == design
        assert design.spec()["design"] == name
    design = make_design("online-poisson", defensive=0.05, n_strata=64)
    with pytest.raises(FrozenInstanceError):
        design.defensive = 0.1
    with pytest.raises(TypeError):
        type(design)(0.05)  # keyword-only


def test_old_session_specs_are_read_with_the_new_setting_names():
    from labelwise.designs import design_from_spec

    old = {"design": "online-poisson", "floor": 0.03, "n_blocks": 64, "deviation": "mean", "oracle": "deterministic"}
    design = design_from_spec(old)
    assert design.n_strata == 64 and design.defensive == pytest.approx(0.03 / 1.03)
    assert design_from_spec({"design": "ais", "proposal": "optimal"}).deviation == "mean"
    assert design_from_spec({"design": "oasis", "epsilon": 0.01}).defensive == 0.01
