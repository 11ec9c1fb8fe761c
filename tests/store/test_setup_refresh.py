"""A design set-up stored by other code is redone on open and stored again by the next write."""

from contextlib import closing

import labelwise as lw
from labelwise.session_file import _setup_tag
from labelwise.store import Store


def test_a_stale_set_up_is_stored_again_by_the_next_write(tmp_path):
    pool = lw.make_pool(2000, prevalence=0.05, seed=1)
    path = tmp_path / "s.lws"
    with lw.Session(pool, lw.make_measure("f1", pool), lw.make_design("online-poisson"), seed=0, path=path) as s:
        s.run(lw.TruthOracle(pool), budget=100)
        expected = s.estimate()
    with closing(Store.open(path)) as store:
        store.put_cache("sampler", b"setup from-older-code\n" + b"\x00" * 10)
    with lw.Session.open(path) as s:  # redone, same estimate
        assert s.estimate().to_dict() == expected.to_dict()
        s.next_batch(50)
    with closing(Store.open(path)) as store:
        assert store.cached("sampler").startswith(_setup_tag())
    with lw.Session.open(path) as s:  # the stored set-up is used again and resumes to the same state
        s.add_labels(s.pending, pool.labels[pool.positions(s.pending)])
        assert s.n_labels == 150


def test_a_redone_set_up_keeps_the_hash_seed_of_the_session(tmp_path):
    # passive draws the items of smallest H(item_id, seed): a reopened file must hash with the session's seed
    # even when its stored set-up is redone, so that it draws what a session that kept it draws
    pool = lw.make_pool(2000, prevalence=0.05, seed=1)
    drawn = []
    for name, stale in (("kept.lws", False), ("redone.lws", True)):
        path = tmp_path / name
        lw.Session(pool, lw.make_measure("f1", pool), lw.make_design("passive"), seed=123, path=path).close()
        if stale:
            with closing(Store.open(path)) as store:
                store.put_cache("sampler", b"setup from-older-code\n" + b"\x00" * 10)
        with lw.Session.open(path) as s:
            drawn.append(s.next_batch(40).tolist())
    assert drawn[0] == drawn[1]
