"""Skipped items come back after the other pending items, the latest skip last."""

import labelwise as lw


def test_skipped_items_come_back_last_in_skip_order():
    pool = lw.make_pool(500, prevalence=0.1, seed=1)
    session = lw.Session(pool, lw.make_measure("f1", pool), lw.make_design("importance"), seed=0)
    batch = list(session.next_batch(6))
    a, b = batch[1], batch[3]
    session.skip([a])
    session.skip([b])
    others = [i for i in batch if i not in (a, b)]
    assert list(session.next_batch(6)) == others + [a, b]
    session.skip([a])  # skipped again: now the latest
    assert list(session.next_batch(6)) == others + [b, a]
