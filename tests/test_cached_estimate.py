"""The estimate stored in the session file reads back as the one computed: same interval, same basis."""

import json
from contextlib import closing

import numpy as np
import pytest

import labelwise as lw
from labelwise.session_report import cached_estimate, save_estimate
from labelwise.store import Store


@pytest.mark.parametrize("design", ["passive", "online-poisson"])
def test_cached_estimate_keeps_the_interval_and_its_basis(design, tmp_path):
    pool = lw.make_pool(2000, prevalence=0.01, seed=4)
    path = tmp_path / "s.lws"
    with lw.Session(pool, lw.make_measure("f1", pool), lw.make_design(design), seed=1, path=path) as s:
        s.run(lw.TruthOracle(pool), budget=150)
        computed = save_estimate(s)
    with closing(Store.open(path)) as store:
        cached, name = cached_estimate(store)
    assert name == "f1"
    np.testing.assert_allclose(cached.interval(), computed.interval(), rtol=0, atol=1e-12)
    assert cached.basis == computed.basis != ""
    assert cached.to_dict() == computed.to_dict()


def _saved(path, measure: str):
    """An online-poisson session of 100 labels at ``path`` with its estimate of ``measure`` stored."""
    pool = lw.make_pool(2000, prevalence=0.02, seed=5)
    with lw.Session(pool, lw.make_measure(measure, pool), lw.make_design("online-poisson"), seed=2,
                    path=path) as s:
        s.run(lw.TruthOracle(pool), budget=100)
        return save_estimate(s)


def test_stored_interval_is_the_computed_one_and_only_at_its_level(tmp_path):
    path = tmp_path / "s.lws"
    computed = _saved(path, "f1,precision")
    with closing(Store.open(path)) as store:
        cached, _ = cached_estimate(store)
    assert cached.stored_interval is not None and computed.stored_interval is None
    np.testing.assert_array_equal(cached.interval(), computed.interval())
    np.testing.assert_array_equal(cached.interval(0.8), computed.interval(0.8))  # another level: computed
    np.testing.assert_array_equal(cached.interval(method="normal"), computed.interval(method="normal"))


def test_an_interval_stored_under_other_rules_is_computed_again(tmp_path):
    """A file written before the Beta interval's effective count printed [0.0015, 1] for a precision of 1."""
    path = tmp_path / "s.lws"
    _saved(path, "precision")
    with closing(Store.open(path)) as store:
        assert cached_estimate(store) is not None
        record = json.loads(store.cached("estimate"))
        del record["interval_rules"]
        store.put_cache("estimate", json.dumps(record).encode())
        assert cached_estimate(store) is None
