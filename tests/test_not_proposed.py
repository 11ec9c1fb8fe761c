"""Labels of items the design never proposed: refused with the place of the first such label."""

import numpy as np
import pytest

import labelwise as lw


@pytest.mark.parametrize("oracle", ["deterministic", "stochastic"])
@pytest.mark.parametrize("with_draws", [False, True])
def test_the_first_label_of_an_item_never_drawn_is_named_by_its_index(oracle, with_draws):
    pool = lw.make_pool(200, prevalence=0.2, seed=3)
    session = lw.Session(pool, lw.make_measure("f1", pool), "passive", oracle=oracle, seed=1)
    ids = session.next_batch(5)
    never = np.setdiff1d(pool.item_ids, ids)[:2]
    given = np.concatenate([ids[:2], never, ids[2:3]])  # the first label of an undrawn item is the third
    draws = np.concatenate([session.pending_draws[:2], [0, 0], session.pending_draws[2:3]]) if with_draws else None
    with pytest.raises(lw.NotProposedError) as refused:
        session.add_labels(given, np.zeros(given.size, dtype=int), draws=draws)
    assert refused.value.index == 2 and repr(int(never[0])) in str(refused.value)
    assert session.n_labels == 0  # nothing stored
