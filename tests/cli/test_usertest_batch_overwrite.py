"""``labelwise next --out batch.csv`` does not overwrite a batch file whose labels are not stored yet."""

import numpy as np
import pandas as pd
import pytest

from labelwise.session import Session


@pytest.fixture
def session_and_batch(tmp_path, ok):
    pool = tmp_path / "pool.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"txn": [f"T{i:03d}" for i in range(300)], "flag": (rng.uniform(size=300) < 0.3).astype(int),
                  "risk": rng.uniform(size=300)}).to_csv(pool, index=False)
    session, batch = tmp_path / "s.lw", tmp_path / "batch.csv"
    ok("init", pool, session, "--id-col", "txn", "--pred-col", "flag", "--score-col", "risk", "--design", "passive")
    ok("next", session, "-n", "5", "--out", batch)
    return session, batch


def test_a_filled_in_batch_is_not_overwritten(session_and_batch, ok, fails):
    session, batch = session_and_batch
    frame = pd.read_csv(batch, dtype={"label": "object"})
    frame.loc[[1, 3], "label"] = ["1", "0"]  # the annotators' work, not stored yet
    frame.to_csv(batch, index=False)
    written = batch.read_bytes()
    line = fails("next", session, "-n", "5", "--out", batch)
    assert line == (f"error: --out {str(batch)!r} holds 2 label(s) not stored yet (data row 2: item "
                    f"{frame['item_id'][1]!r}); store them first with `labelwise label {session} {batch}`, or "
                    "write the batch to another --out")
    assert batch.read_bytes() == written
    with Session.open(session) as s:
        assert len(s.draws) == 5 and s.n_labels == 0
    ok("label", session, batch)  # once they are stored, the next batch may take the file
    ok("next", session, "-n", "5", "--out", batch)
    assert pd.read_csv(batch)["label"].isna().all()


def test_an_unfilled_batch_or_another_file_is_overwritten(session_and_batch, ok, tmp_path):
    session, batch = session_and_batch
    ok("next", session, "-n", "5", "--out", batch)  # nothing filled in: the same pending items again
    other = tmp_path / "notes.csv"
    other.write_text("what,when\nmeeting,monday\n")
    ok("next", session, "-n", "5", "--out", other)
    assert len(pd.read_csv(other)) == 5
