"""Pilot runs kept in the session file (:mod:`labelwise.planning_cache`): read back, never stale."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from labelwise import planning_cache, planning_pilots
from labelwise.cli import app
from labelwise.datasets import make_pool
from labelwise.measures import make_measure
from labelwise.oracle.calibration import PlattPosterior
from labelwise.planning_cache import pilot_cache_key, pilot_family
from labelwise.session import Session
from labelwise.store.codec import decode_array, encode_array

from .conftest import labeled_passive_session

runner = CliRunner()


@pytest.fixture
def session_file(tmp_path, write_pool_csv, pool) -> Path:
    """A passive session with 300 labels, given in batches of 50."""
    return labeled_passive_session(tmp_path / "s.lw", write_pool_csv(pool, tmp_path / "pool.csv", labels=False), pool)


@pytest.fixture
def pilot_runs(monkeypatch) -> list[int]:
    """Counts the pilot runs made (one pseudo ground truth each)."""
    made = []
    draw = planning_pilots.rotated_labels

    def counting(cdf, offset, run):
        made.append(run)
        return draw(cdf, offset, run)

    monkeypatch.setattr(planning_pilots, "rotated_labels", counting)
    return made


def test_a_second_plan_command_reads_the_pilots_the_first_stored(session_file, pilot_runs):
    first = runner.invoke(app, ["plan", str(session_file), "--half-width", "0.02", "--json"])
    assert first.exit_code == 0, first.output
    runs = len(pilot_runs)
    assert runs >= planning_pilots.PILOT_RUNS
    second = runner.invoke(app, ["plan", str(session_file), "--half-width", "0.02", "--json"])
    assert len(pilot_runs) == runs  # no pilot run made again
    assert json.loads(second.stdout) == json.loads(first.stdout)


def test_a_stale_entry_is_never_read(session_file, pool, monkeypatch):
    with Session.open(session_file) as s:
        fresh = s.labels_needed(0.05)
        key = pilot_cache_key(s, s.measure, 0)
        # plant pilot curves three times as high under the session's key: the next plan reads them
        s.store.put_cache(key, encode_array(3 * decode_array(s.store.cached(key))))
    with Session.open(session_file) as s:
        assert s.labels_needed(0.05).labels_needed > fresh.labels_needed
    # the same file under other code: another key, the planted curves are not read
    monkeypatch.setattr(planning_cache, "_setup_tag", lambda: b"setup other code\n")
    with Session.open(session_file) as s:
        assert pilot_cache_key(s, s.measure, 0) != key
        assert s.labels_needed(0.05) == fresh


def test_storing_a_newer_variant_drops_the_familys_older_entries(session_file, monkeypatch):
    pilot_keys = lambda s: {k for (k,) in s.store.conn.execute("SELECT key FROM cache WHERE key LIKE 'pilots %'")}
    with Session.open(session_file) as s:
        s.labels_needed(0.05)
        old = pilot_cache_key(s, s.measure, 0)
        assert pilot_keys(s) == {old}
    monkeypatch.setattr(planning_cache, "_setup_tag", lambda: b"setup other code\n")  # a variant: other code
    with Session.open(session_file) as s:
        s.labels_needed(0.05)
        new = pilot_cache_key(s, s.measure, 0)
        assert new != old and new.startswith(pilot_family(s, s.measure, 0)) and pilot_keys(s) == {new}
        precision = make_measure("precision", s.pool)
        s.labels_needed(0.05, precision)  # another family: kept alongside
        assert pilot_keys(s) == {new, pilot_cache_key(s, precision, 0)}


def test_the_key_changes_with_everything_the_pilots_depend_on(session_file, pool):
    with Session.open(session_file) as s:
        key = pilot_cache_key(s, s.measure, 0)
        assert pilot_cache_key(s, s.measure, 0) == key  # the same inputs: the same key
        assert pilot_cache_key(s, s.measure, 1) != key  # another pilot seed
        assert pilot_cache_key(s, make_measure("precision", s.pool), 0) != key  # another measure
        platt = PlattPosterior(np.array([0.5]), np.array([0.0]), np.array([1.0]))
        assert pilot_cache_key(s, s.measure, 0, platt) != key  # pilot labels from a recalibration
        s.add_system("second", (pool.probs[:, 0] > 0.3).astype(int), probs=np.clip(pool.probs[:, 0] + 0.1, 0, 1))
        assert pilot_cache_key(s, s.measure, 0) != key  # another pool


def test_the_pool_digest_is_computed_once_per_pool(pool, monkeypatch):
    hashed = []
    hash_pool = planning_cache._hash_pool
    monkeypatch.setattr(planning_cache, "_hash_pool", lambda p: hashed.append(p) or hash_pool(p))
    other = make_pool(3000, prevalence=0.2, separation=2.5, seed=12)  # equal arrays, another object
    digests = [planning_cache.pool_digest(p) for p in (pool, pool, other, pool, other)]
    assert len(set(digests)) == 1 and hashed.count(other) == 1 and hashed.count(pool) <= 1


@pytest.mark.parametrize("damage", [b"\x00garbage", b"LWZnot zlib", lambda c: encode_array(c[:, :2]),
                                    lambda c: encode_array(np.array(["a", "b"], dtype=object))])
def test_a_damaged_entry_is_recomputed(session_file, damage):
    with Session.open(session_file) as s:
        fresh = s.labels_needed(0.05)
        key = pilot_cache_key(s, s.measure, 0)
        good = s.store.cached(key)
        s.store.put_cache(key, damage if isinstance(damage, bytes) else damage(decode_array(good)))
    planning_pilots._pilots.clear()  # a new process: only the file holds the pilots
    result = runner.invoke(app, ["plan", str(session_file), "--half-width", "0.05", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["plans"] == [fresh.to_dict()]
    with Session.open(session_file) as s:
        assert np.array_equal(decode_array(s.store.cached(key)), decode_array(good), equal_nan=True)  # rewritten


def test_a_file_that_refuses_the_pilots_keeps_the_plan_and_the_labels(session_file, monkeypatch):
    from labelwise.store import StoreError

    with Session.open(session_file) as s:
        fresh, labels = s.labels_needed(0.05), s.sample().labels.copy()
        key = pilot_cache_key(s, s.measure, 0)
        s.store.put_cache(key, b"\x00garbage")  # the next plan must store its pilots again

    def refuse(self, key, data, replacing=None):
        raise StoreError("read-only")

    with Session.open(session_file) as s:
        monkeypatch.setattr(type(s.store), "put_cache", refuse)
        planning_pilots._pilots.clear()
        assert s.labels_needed(0.05) == fresh
        monkeypatch.undo()
        assert s.store.cached(key) == b"\x00garbage"  # not kept
        assert np.array_equal(s.sample().labels, labels)
    with Session.open(session_file) as s:
        assert np.array_equal(s.sample().labels, labels)
