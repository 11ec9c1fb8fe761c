"""``labelwise next --out batch.csv`` does not overwrite a batch file whose labels are not stored yet."""

import pandas as pd

from labelwise.session import Session

from .usertest_session import user_session


def test_a_filled_in_batch_is_not_overwritten(tmp_path, ok, fails):
    session, batch = user_session(tmp_path, ok)
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


def test_an_unfilled_batch_or_another_file_is_overwritten(tmp_path, ok):
    session, batch = user_session(tmp_path, ok)
    ok("next", session, "-n", "5", "--out", batch)  # nothing filled in: the same pending items again
    other = tmp_path / "notes.csv"
    other.write_text("what,when\nmeeting,monday\n")
    ok("next", session, "-n", "5", "--out", other)
    assert len(pd.read_csv(other)) == 5


def test_a_stochastic_batch_is_judged_by_draw(tmp_path, ok, fails):
    """With several draws of one item, a stored draw's label may be overwritten, a pending draw's may not."""
    pool = tmp_path / "pool.csv"
    pd.DataFrame({"item_id": range(12), "pred": [0, 1] * 6, "prob": [0.2, 0.9] * 6}).to_csv(pool, index=False)
    session, batch = tmp_path / "s.lw", tmp_path / "batch.csv"
    ok("init", pool, session, "--design", "importance", "--param", "oracle=stochastic")
    ok("next", session, "-n", "30", "--out", batch)
    frame = pd.read_csv(batch, dtype={"label": "object"})
    first = frame.index[frame["item_id"].duplicated(keep="last")][0]  # a draw of an item drawn again later
    frame.loc[[first], "label"] = "1"
    frame.loc[[first]].to_csv(tmp_path / "one.csv", index=False)
    ok("label", session, tmp_path / "one.csv")
    frame.to_csv(batch, index=False)  # its label is stored; the item's other draws still wait for theirs
    ok("next", session, "-n", "29", "--out", batch)
    frame = pd.read_csv(batch, dtype={"label": "object"})
    frame.loc[[2], "label"] = "0"
    frame.to_csv(batch, index=False)
    assert fails("next", session, "-n", "29", "--out", batch).startswith(
        f"error: --out {str(batch)!r} holds 1 label(s) not stored yet (data row 3: item ")
