"""A session's confidence sequence followed batch by batch equals, bit for bit, one pass over all its draws."""

from __future__ import annotations

import numpy as np
import pytest

import labelwise as lw
from labelwise.anytime import anytime_path, weight_bound
from labelwise.anytime.ratio import ratio_sequence
from labelwise.designs import ImportanceDesign
from labelwise.measures import make_measure
from labelwise.oracle import TruthOracle

BATCHES, BATCH = 40, 30


@pytest.fixture(scope="module")
def pool() -> lw.Pool:
    return lw.make_pool(3000, prevalence=0.1, separation=2.0, seed=8)


def _one_pass(session: lw.Session) -> tuple[np.ndarray, np.ndarray]:
    """The reference: the whole sequence recomputed from the first label (every batch labeled, nothing excluded)."""
    sample = session.sample()
    d = sample.draws
    finite = session.design.name == "passive" and not session.stochastic  # first draws of items, in draw order
    rows = np.sort(np.unique(d.items, return_index=True)[1]) if finite else np.arange(len(d))
    counts = np.ones(rows.size, int) if finite else d.count[rows]
    losses = session.sampler.losses(session.measure, sample)
    return ratio_sequence(session.measure, session.pool, losses[rows], d.weight[rows], counts, d.round[rows],
                          weight_bound(session.sampler), session.level, session.budget,
                          without_replacement=finite, per_row=session.stochastic, items=d.items[rows],
                          known_labels=not session.stochastic)


@pytest.mark.parametrize(("design", "oracle"), [("passive", "deterministic"), ("importance", "deterministic"),
                                                ("importance", "stochastic")])
def test_the_sequence_after_every_batch_is_that_of_one_pass_even_after_a_correction(pool, design, oracle):
    """Passive's finite-pool sequence, whole batches of a with-replacement design, per-row bets (stochastic)."""
    chosen = ImportanceDesign(defensive=0.3) if design == "importance" else design
    session = lw.Session(pool, make_measure("f1", pool), chosen, oracle=oracle, seed=6, budget=BATCHES * BATCH)
    truth = TruthOracle(pool)
    seen = []  # the latest batch's interval, as a stop rule sees it after each batch
    for _ in range(BATCHES):
        ids = session.next_batch(BATCH)
        session.add_labels(ids, truth(ids))
        _, lower, upper, _ = anytime_path(session)
        seen.append((lower[-1], upper[-1]))
    lower, upper = _one_pass(session)
    assert lower.shape == (BATCHES, 1)
    np.testing.assert_array_equal(np.array(seen), np.stack([lower, upper], axis=1))
    np.testing.assert_array_equal(anytime_path(session)[1:3], (lower, upper))
    assert np.any(np.diff(upper[:, 0] - lower[:, 0]) < 0)  # the sequence narrows: the comparison has content

    first = session.pool.item_ids[session.draws.items[:1]]  # a label of the first batch corrected
    session.relabel(first, 1 - truth(first), draws=[0] if session.stochastic else None)
    corrected = _one_pass(session)
    np.testing.assert_array_equal(anytime_path(session)[1:3], corrected)
    assert not np.array_equal(corrected, (lower, upper))  # the correction changed the sequence
