"""An engine pool is the pool its session was made on: one row per item id, and the same outputs by item.

``init`` refuses a repeated id (one SQL pass); a session refuses, when it next reads the pool, files whose
outputs changed though their sizes and footers did not (a checksum of the outputs by item,
:func:`labelwise.engines.sql.checksum_query`).  Sessions written before the checksum keep opening.
"""

from __future__ import annotations

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
             "score": [round(s / (1 + abs(s)) * 2**30) for s in frame["score"]]}
    expected = [str(len(frame)), str(sum(weight))] + [str(sum(c * w for c, w in zip(codes[k], weight)))
                                                       for k in ("pred", "prob", "score")]
    assert source.checksum() == expected


@pytest.fixture
def session_on(frame, tmp_path) -> tuple[Path, Path]:
    """A poisson session with a batch handed out, on its own copy of the pool file."""
    path, session = tmp_path / "pool.parquet", tmp_path / "s.lw"
    frame.to_parquet(path, index=False)
    assert invoke("init", path, "-s", session, "--engine", "duckdb", "--budget", 20).exit_code == 0
    assert invoke("next", session, "-n", 3).exit_code == 0
    return path, session


def test_a_pool_whose_every_prediction_flipped_is_refused_by_the_next_command_reading_it(frame, session_on):
    path, session = session_on
    footer = fingerprint([path])
    frame.assign(pred=1 - frame["pred"]).to_parquet(path, index=False)
    assert fingerprint([path]) == footer  # the files' sizes and footers alone missed the change
    before = session.read_bytes()
    assert _one_error(invoke("next", session, "-n", 3)) == (
        f"error: session file {str(session)!r}: the systems' outputs in the pool files ({str(path)!r}, ...) changed "
        "since init (a checksum of the predictions, probabilities and scores by item differs, though the files' sizes "
        "and footers did not); restore them or start a new session")
    assert session.read_bytes() == before
    frame.to_parquet(path, index=False)  # restored
    assert invoke("next", session, "-n", 3).exit_code == 0


def test_a_session_written_before_the_checksum_opens_as_before(frame, session_on, tmp_path):
    path, session = session_on
    old = tmp_path / "old.lw"
    shutil.copy(session, old)
    with sqlite3.connect(old) as conn:
        conn.execute(f"DELETE FROM {MARKER_TABLE} WHERE key = 'outputs_checksum'")
    conn.close()
    frame.assign(pred=1 - frame["pred"]).to_parquet(path, index=False)
    assert invoke("next", old, "-n", 3).exit_code == 0  # checked by its files' footers alone, as it was
