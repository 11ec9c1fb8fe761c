"""The samplers' public states of every batch: those a session file stores, and what a session without a file carries
to a new sampler when a system is added (:mod:`labelwise.session_systems`)."""

from __future__ import annotations

from contextlib import closing

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs import make_design
from labelwise.oracle import TruthOracle
from labelwise.store.systems import stored_design_states


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.make_pool(2000, prevalence=0.1, separation=2.0, seed=12)


def _stored_and_memory(pool, design, tmp_path, **settings) -> tuple[list[dict], lw.Session]:
    """The per-batch states a session file holds after four batches, and the same session in memory."""
    sessions = [lw.Session(pool, lw.make_measure("f1", pool), make_design(design, **settings), seed=3, path=path)
                for path in (tmp_path / "s.lw", None)]
    for s in sessions:
        s.run(TruthOracle(pool), 200, 50)
    with closing(sessions[0].store):
        _, states = stored_design_states(sessions[0].store)
    return states, sessions[1]


def test_ais_states_are_those_a_file_stores(pool, tmp_path):
    stored, memory = _stored_and_memory(pool, "ais", tmp_path)
    assert len(stored) == 4
    assert memory.sampler.states() == stored
    for q, state in zip(memory.sampler.group_proposals, stored, strict=True):
        np.testing.assert_array_equal(q, state["q_group"])


def test_online_poisson_block_rounds_states_are_those_a_file_stores(pool, tmp_path):
    stored, memory = _stored_and_memory(pool, "online-poisson", tmp_path)
    assert memory.sampler.states() == stored and memory.sampler.n_rounds == len(stored) == 4


def test_per_item_online_poisson_states_hold_every_round_of_the_file_in_one(pool, tmp_path):
    # platt-posterior keeps the per-item sampler, which stores all rounds in one state
    stored, memory = _stored_and_memory(pool, "online-poisson", tmp_path, calibration="platt-posterior")
    (together,) = memory.sampler.states()
    assert memory.sampler.n_rounds == len(stored) == 4
    for key in ("sizes", "b_groups", "pi_groups", "betas"):
        assert together[key] == [value for state in stored for value in state[key]]
    restored = make_design("online-poisson", calibration="platt-posterior").start(
        pool, memory.measure, rng=np.random.default_rng(0))
    restored.set_state(memory.sampler.states())
    assert restored.states() == [together] and restored.n_rounds == 4
