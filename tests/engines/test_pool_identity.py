"""An engine pool is the pool its session was made on: one row per item id, and the same outputs by item.

``init`` refuses a repeated id (one SQL pass); a session refuses, when it next reads the pool, files whose
outputs changed though their sizes and footers did not (a checksum of the outputs by item,
:func:`labelwise.engines.sql.checksum_query`).  Sessions written before the checksum keep opening.
"""

from __future__ import annotations

import math
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.engines import EnginePool
from labelwise.engines.files import fingerprint
from labelwise.engines.marker import MARKER_TABLE

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _one_error(result) -> str:
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def frame() -> pd.DataFrame:
    """40 items: ids 10..49, predictions 1 on every third, probabilities and scores of both signs."""
    ids = pd.RangeIndex(10, 50)
    return pd.DataFrame({"item_id": ids, "pred": (ids % 3 == 0).astype(int), "prob": (ids % 7) / 8,
                         "score": (ids - 30) / 4, "label": (ids % 2).astype(int)})


def test_init_refuses_an_id_held_by_several_rows_naming_it_and_how_many(frame, tmp_path):
    frame.loc[[5, 17, 30], "item_id"] = 21  # id 21 is row 11's as well: four rows
    frame.iloc[:20].to_parquet(tmp_path / "part-0.parquet", index=False)
    frame.iloc[20:].to_parquet(tmp_path / "part-1.parquet", index=False)
    where = f"pool file {str(tmp_path / 'part-0.parquet')!r} (and 1 more)"
    session = tmp_path / "s.lw"
    message = (f"error: {where}: item id 21 is held by 4 rows; engine pools draw the sample by id and need one row "
               "per item: keep one row per id (or give the repeated rows new ids) and run init again")
    for design in ("poisson", "online-poisson"):
        assert _one_error(invoke("init", tmp_path / "part-*.parquet", "-s", session, "--engine", "duckdb", "-d",
                                 design, "--budget", 10)) == message
    assert _one_error(invoke("simulate", "--pool", tmp_path / "part-*.parquet", "--engine", "duckdb", "--budget", 10,
                             "--repeats", 1)) == message
    assert not session.exists()
    assert EnginePool.open(tmp_path / "part-*.parquet").source.duplicate_id() == (21, 4)


def test_the_checksum_is_the_sum_of_the_coded_outputs_times_the_id_weights(frame, tmp_path):
    """Exact integers from the definition (sql.checksum_query), computed with Python's integers."""
    frame.to_parquet(tmp_path / "pool.parquet", index=False)
    source = EnginePool.open(tmp_path / "pool.parquet", pred_cols="pred", prob_cols="prob", score_cols="score").source
    weight = [(i % 65521) * 65536 + (i % 65519) + 1 for i in frame["item_id"]]
    codes = {"pred": list(frame["pred"]), "prob": [round(p * 2**30) for p in frame["prob"]],
             "score": [round(math.copysign(math.log(1 + abs(s)), s) * 2**20) for s in frame["score"]]}
    expected = [str(len(frame)), str(sum(weight))] + [str(sum(c * w for c, w in zip(codes[k], weight)))
                                                       for k in ("pred", "prob", "score")]
    assert source.checksum() == expected


@pytest.mark.parametrize("column, value, change", [("score", 3e4, 0.5), ("score", -1e6, 100.0), ("score", 1e300, 1e295),
                                                   ("score", 0.5, 2e-6), ("prob", 0.5, 1e-9)])
def test_the_checksum_sees_a_change_of_one_output_at_any_magnitude(frame, tmp_path, column, value, change):
    """Scores coded s / (1 + |s|) 2^30 kept their code for a change of 0.5 at 3e4, 100 at 1e6."""
    checksums = []
    for step in (0.0, change):
        frame.loc[7, column] = value + step
        frame.to_parquet(tmp_path / "pool.parquet", index=False)
        checksums.append(EnginePool.open(tmp_path / "pool.parquet", pred_cols="pred", prob_cols="prob",
                                         score_cols="score").source.checksum())
    assert checksums[0][:-2] == checksums[1][:-2] and checksums[0] != checksums[1]


@pytest.fixture
def session_on(frame, tmp_path) -> tuple[Path, Path]:
    """A poisson session with a batch handed out, on its own copy of the pool file."""
    path, session = tmp_path / "pool.parquet", tmp_path / "s.lw"
    frame.to_parquet(path, index=False)
    assert invoke("init", path, "-s", session, "--engine", "duckdb", "--budget", 20).exit_code == 0
    assert invoke("next", session, "-n", 3).exit_code == 0
    return path, session


def _one_item_changed(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Item 17's ``column`` given item 18's value (a value the file holds: its dictionary and statistics stay)."""
    changed = frame.copy()
    changed.loc[7, column] = frame.loc[8, column]
    return changed


def _swapped(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Items 10 and 11's ``columns`` exchanged (every column sums the same)."""
    swapped = frame.copy()
    swapped.loc[[0, 1], columns] = frame.loc[[1, 0], columns].to_numpy()
    return swapped


@pytest.mark.parametrize("change", [
    lambda f: f.assign(pred=1 - f["pred"]),  # every prediction flipped
    lambda f: _one_item_changed(f, "prob"),
    lambda f: _swapped(f, ["score"]),  # a score changed alone changed the file's footer (its dictionary)
    lambda f: _swapped(f, ["pred", "prob", "score"]),
], ids=["predictions flipped", "one probability", "scores exchanged", "outputs exchanged"])
def test_a_pool_whose_outputs_changed_is_refused_by_the_next_command_reading_it(frame, session_on, change):
    path, session = session_on
    footer = fingerprint([path])
    change(frame).to_parquet(path, index=False)
    assert fingerprint([path]) == footer  # the files' sizes and footers alone missed the change
    before = session.read_bytes()
    assert _one_error(invoke("next", session, "-n", 3)) == (
        f"error: session file {str(session)!r}: the systems' outputs in pool file {str(path)!r} changed "
        "since init (a checksum of the predictions, probabilities and scores by item differs, though the files' sizes "
        "and footers did not); restore them or start a new session")
    assert session.read_bytes() == before
    frame.to_parquet(path, index=False)  # restored
    assert invoke("next", session, "-n", 3).exit_code == 0


@pytest.mark.parametrize("stored", ["none", "scores as s / (1 + |s|)"])
def test_a_session_written_before_the_checksum_opens_as_before(frame, session_on, tmp_path, stored):
    """A checksum coding scores as s / (1 + |s|) was written on one day of development, under another key."""
    path, session = session_on
    old = tmp_path / "old.lw"
    shutil.copy(session, old)
    with sqlite3.connect(old) as conn:
        if stored == "none":
            conn.execute(f"DELETE FROM {MARKER_TABLE} WHERE key = 'outputs_checksum_2'")
        else:
            conn.execute(f"UPDATE {MARKER_TABLE} SET key = 'outputs_checksum' WHERE key = 'outputs_checksum_2'")
    conn.close()
    frame.assign(pred=1 - frame["pred"]).to_parquet(path, index=False)
    assert invoke("next", old, "-n", 3).exit_code == 0  # checked by its files' footers alone, as it was


def test_next_reads_the_pool_for_its_checksum_before_taking_the_write_lock(session_on, monkeypatch):
    """The checksum is a pass over the pool: under the lock it held up `label` for as long."""
    from labelwise.engines.session import EngineSession

    opened, locked = [], []
    check, open_session = EnginePool.check_checksum, EngineSession.open.__func__

    def watched(pool, stored, session):
        locked.append(opened[-1].conn.in_transaction)
        return check(pool, stored, session)

    monkeypatch.setattr(EnginePool, "check_checksum", watched)
    monkeypatch.setattr(EngineSession, "open", classmethod(lambda cls, path: opened.append(
        open_session(cls, path)) or opened[-1]))
    assert invoke("next", session_on[1], "-n", 3).exit_code == 0
    assert locked == [False]
