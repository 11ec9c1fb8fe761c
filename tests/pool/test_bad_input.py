"""Bad pool files and design settings: one ``error:`` line naming the file, the line, the column and the fix.

Every case runs ``labelwise init`` as a user would: exit code 1, exactly one
line on standard error, no traceback, and no session file left behind.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.designs import make_design
from labelwise.pool import Pool, PoolError

runner = CliRunner()

#: Six items of a binary pool; x0 is on line 2 of the file (the header is line 1).
HEADER = "item_id,pred,score,prob"
ROWS = [f"x{i},{i % 2},{i / 10 - 0.2},{(i + 1) / 10}" for i in range(6)]


def csv(rows: list[str] = ROWS, header: str = HEADER, sep: str = ",") -> bytes:
    return "\n".join([header, *rows, ""]).replace(",", sep).encode()


def replace_row(i: int, row: str) -> bytes:
    return csv([row if j == i else r for j, r in enumerate(ROWS)])


def parquet_bytes(tmp_path: Path) -> bytes:
    pd.read_csv(pd.io.common.BytesIO(csv())).to_parquet(tmp_path / "p.parquet")
    return (tmp_path / "p.parquet").read_bytes()


# (case, file name, content, extra init options, the error line after "error: pool file '<path>'")
BAD_POOLS: list[tuple[str, str, Callable[[Path], bytes], tuple[str, ...], str]] = [
    ("pred 2 in a binary pool", "pool.csv", lambda _: replace_row(3, "x3,2,0.1,0.4"), (),
     (", data row 4, column 'pred': value 2 is not 0 or 1; the pool is binary (its systems give one "
     "probability each, in 'prob'; a multi-class pool gives one column per class), so predictions must be 0 or 1")),
    ("NaN score", "pool.csv", lambda _: replace_row(2, "x2,0,NaN,0.3"), (),
     ", data row 3, column 'score': is empty (or NaN); fill in every item's score or drop the row"),
    ("empty score", "pool.csv", lambda _: replace_row(2, "x2,0,,0.3"), (),
     ", data row 3, column 'score': is empty (or NaN); fill in every item's score or drop the row"),
    ("inf score", "pool.csv", lambda _: replace_row(1, "x1,1,inf,0.2"), (),
     ", data row 2, column 'score': value inf is infinite; scores must be finite"),
    ("text score", "pool.csv", lambda _: replace_row(1, "x1,1,high,0.2"), (),
     ", data row 2, column 'score': 'high' is not a number; scores must be numbers"),
    ("decimal comma", "pool.csv", lambda _: csv([r.replace(",", ";") for r in ROWS[:5]] + ["x5;1;0,3;0.6"],
                                                 HEADER.replace(",", ";")), (),
     ", data row 6, column 'score': '0,3' is not a number; write decimals with a point (0.5, not 0,5)"),
    ("probability 1.5", "pool.csv", lambda _: replace_row(4, "x4,0,0.2,1.5"), (),
     ", data row 5, column 'prob': value 1.5 is outside [0, 1]; probabilities must lie in [0, 1]"),
    ("percentages", "pool.csv", lambda _: csv([f"x{i},{i % 2},0.1,{10 * (i + 1)}" for i in range(6)]), (),
     (", data row 1, column 'prob': value 10 is outside [0, 1] (and 5 more rows); probabilities must lie in [0, 1] "
      "(percentages? divide them by 100)")),
    ("class names", "pool.csv", lambda _: csv([f"x{i},{'yes' if i % 2 else 'no'},0.1,0.5" for i in range(6)]), (),
     (", data row 1, column 'pred': 'no' is not a number (and 5 more rows); predictions must be numbers (classes "
      "0..C-1: write each class name as its number)")),
    ("fractional prediction", "pool.csv", lambda _: replace_row(0, "x0,0.5,-0.2,0.1"), (),
     (", data row 1, column 'pred': value 0.5 is not a class; predictions must be whole numbers 0..C-1 "
     "(0 or 1 for a binary pool)")),
    ("duplicate id", "pool.csv", lambda _: replace_row(4, "x1,0,0.2,0.5"), (),
     (", column 'item_id', data rows 2 and 5: the same id 'x1'; every item needs a unique id: drop or renumber "
      "the repeats")),
    ("duplicate ids", "pool.csv", lambda _: csv(ROWS + [ROWS[0]] * 6 + ROWS[1:3]), (),
     (", column 'item_id', data rows 1, 7, 8, 9 and 10 (and 2 more): the same id 'x0' (2 other ids are repeated too); "
      "every item needs a unique id: drop or renumber the repeats")),
    ("empty id", "pool.csv", lambda _: replace_row(4, ",0,0.2,0.5"), (),
     ", data row 5, column 'item_id': is empty; give every item an id or drop the row"),
    ("not UTF-8", "pool.csv", lambda _: replace_row(3, "caf\xe9,1,0.1,0.4").decode().encode("latin-1"), (),
     (", data row 4, column 'item_id': byte 0xe9 is not UTF-8 text; save the file as UTF-8 "
     "(e.g. iconv -f latin1 -t utf-8)")),
    ("UTF-16 (Excel's Unicode Text)", "pool.csv", lambda _: csv(sep="\t").decode().encode("utf-16"), (),
     " is UTF-16 text (Excel's \"Unicode Text\"?); save it as UTF-8 (e.g. iconv -f utf-16 -t utf-8)"),
    ("ragged line", "pool.csv", lambda _: replace_row(2, "x2,0,0.0,0.3,9"), (),
     (": data row 3 has 5 fields, the header 4; every row needs as many "
     "comma-separated fields as the header (quote values that contain the delimiter)")),
    ("trailing comma on every data row", "pool.csv", lambda _: csv([r + "," for r in ROWS]), (),
     (": data row 1 has 5 fields, the header 4, and so has every row (a comma at the end of each line?); "
     "every row needs as many comma-separated fields as the header")),
    ("no output columns", "pool.csv", lambda _: csv(["1,a", "2,b"], "item_id,text"), (),
     (": no column of system outputs; expected ['pred', 'score', 'prob'] (any case), found ['item_id', 'text']. "
     "Name yours with the pred/score/prob column options (--pred-col, --score-col, --prob-col)")),
    ("missing named column", "pool.csv", lambda _: csv(), ("--score-col", "logit"),
     (": column(s) ['logit'] not found; available columns: ['item_id', 'pred', 'prob', 'score']. "
     "Pass the right name (--score-col on the command line, score_cols= in Python)")),
    ("text named .parquet", "pool.parquet", lambda _: csv(), (),
     (" is named Parquet but is not a Parquet file (it does not start with PAR1); write it with pandas' "
     "to_parquet, or name a text file .csv")),
    ("Excel workbook named .csv", "pool.csv", lambda _: b"PK\x03\x04rest of a zip", (),
     " is a ZIP archive (an Excel workbook?); export the sheet as CSV (UTF-8) or Parquet"),
    ("empty first line", "pool.csv", lambda _: b"\n" + csv(), (),
     ": the header (the first line) is empty; it must hold the column names"),
    ("unknown extension", "pool.xlsx", lambda _: csv(), (),
     ": unknown format; use .csv, .csv.gz, .tsv, .jsonl or .parquet"),
    ("one score column for two systems", "pool.csv",
     lambda _: csv([f"{r},{1 - i % 2},0.5" for i, r in enumerate(ROWS)], HEADER + ",pred_b,prob_b"),
     ("--pred-col", "pred,pred_b", "--prob-col", "prob,prob_b"),
     (": 1 score column(s) ('score') for the 2 systems of the pred columns ('pred', 'pred_b'); every system needs "
      "each kind of output the pool has: name one score column per system (--score-col on the command line, "
      "score_cols= in Python), or remove the score column(s) from the file")),
    ("header only", "pool.csv", lambda _: csv([]), (), " has no data rows, only column names; give one row per item"),
    ("gzip cut short", "pool.csv.gz", lambda _: gzip.compress(csv())[:30], (),
     (" is gzip-compressed but cannot be decompressed (Compressed file ended before the end-of-stream marker was "
      "reached); it may be truncated: compress it again (gzip), or give it uncompressed")),
]


def run_init(tmp_path: Path, name: str, content: bytes, *extra: str):
    path = tmp_path / name
    path.write_bytes(content)
    session = tmp_path / "eval.lw"
    result = runner.invoke(app, ["init", str(path), "--session", str(session), "--design", "passive", *extra])
    return path, session, result


@pytest.mark.parametrize("case, name, content, extra, message", BAD_POOLS, ids=[c[0] for c in BAD_POOLS])
def test_bad_pool_file_is_one_line_naming_file_line_column_and_fix(tmp_path, case, name, content, extra, message):
    path, session, result = run_init(tmp_path, name, content(tmp_path), *extra)
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.splitlines() == [f"error: pool file {str(path)!r}{message}"]
    assert not session.exists()


@pytest.mark.parametrize(
    "case, name, content",
    [
        ("semicolon-delimited", "pool.csv", lambda _: csv(sep=";")),
        ("tab-delimited .csv", "pool.csv", lambda _: csv(sep="\t")),
        ("mixed-case headers", "pool.csv", lambda _: csv(header="Item_ID,Pred, Score ,PROB")),
        ("byte-order mark", "pool.csv", lambda _: b"\xef\xbb\xbf" + csv()),
        ("Parquet named .csv", "pool.csv", parquet_bytes),
        ("blank lines", "pool.csv", lambda _: csv(ROWS[:3] + [""] + ROWS[3:])),
    ],
)
def test_pool_files_that_used_to_fail_are_read(tmp_path, case, name, content):
    path = tmp_path / name
    path.write_bytes(content(tmp_path))
    pool = Pool.from_file(path)
    assert pool.item_ids.tolist() == [f"x{i}" for i in range(6)]
    assert pool.preds[:, 0].tolist() == [0, 1, 0, 1, 0, 1]
    assert pool.probs[:, 0].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])


def test_a_parquet_file_cut_short_is_one_line(tmp_path):
    path, session, result = run_init(tmp_path, "pool.parquet", parquet_bytes(tmp_path)[:-20])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: pool file {str(path)!r} starts as a Parquet file but cannot be read (")
    assert line.endswith("); it may be truncated or still being written: write it again with pandas' to_parquet")
    assert not session.exists()


def test_data_rows_skip_blank_lines_without_shifting(tmp_path):
    path = tmp_path / "pool.csv"
    path.write_bytes(csv(ROWS[:2] + ["", ""] + ["x2,3,0.0,0.3"] + ROWS[3:]))
    with pytest.raises(PoolError, match=r"data row 5, column 'pred': value 3 is not 0 or 1"):
        Pool.from_file(path)


def test_dataframe_errors_name_the_index():
    df = pd.DataFrame({"pred": [0, 1, 2], "prob": [0.1, 0.2, 0.3]}, index=[10, 11, 12])
    with pytest.raises(PoolError, match=r"^pool, index 12, column 'pred': value 2 is not 0 or 1"):
        Pool.from_dataframe(df)


def test_parquet_errors_name_the_row(tmp_path):
    path = tmp_path / "pool.parquet"
    pd.DataFrame({"pred": [0, 1, 0], "score": [0.1, float("inf"), 0.3]}).to_parquet(path)
    with pytest.raises(PoolError, match=r"pool.parquet', data row 2, column 'score': value inf is infinite"):
        Pool.from_file(path)


def test_multiclass_pool_is_bounded_by_n_classes_only_when_given(tmp_path):
    path = tmp_path / "pool.csv"
    path.write_bytes(csv(["a,0,0.1", "b,2,0.2", "c,1,0.3"], "item_id,pred,score"))
    assert Pool.from_file(path).n_classes == 3
    with pytest.raises(PoolError, match=r"data row 2, column 'pred': value 2 is not 0 or 1; n_classes is 2, so"):
        Pool.from_file(path, n_classes=2)


# ------------------------------------------------------------------ design settings
@pytest.mark.parametrize(
    "args, message",
    [
        (("--design", "importance", "--param", "bogus=1"),
         ("error: design 'importance': unknown setting 'bogus'; its settings are branching, calibration, defensive, "
         "depth, interval_prior_strength, lam, n_strata, partition, prior_strength, system, variance")),
        (("--design", "passive", "--param", "lam=0.5"),
         "error: design 'passive': unknown setting 'lam'; it takes no settings"),
    ],
)
def test_unknown_design_setting_lists_the_valid_keys(tmp_path, args, message):
    path = tmp_path / "pool.csv"
    path.write_bytes(csv([f"{row},{i % 2}" for i, row in enumerate(ROWS)], HEADER + ",label"))
    session = tmp_path / "eval.lw"
    for command in (["init", str(path), "--session", str(session)], ["simulate", "--pool", str(path), "--budget", "4"]):
        result = runner.invoke(app, [*command, *args])
        assert result.exit_code == 1 and result.stderr.splitlines() == [message], result.stderr
    assert not session.exists()


def test_make_design_names_a_setting_of_the_wrong_type():
    with pytest.raises(ValueError, match=r"^design 'importance': lam: must be a number, got 'high'$"):
        make_design("importance", lam="high")


def test_duplicate_ids_in_a_dataframe_name_its_index():
    df = pd.DataFrame({"item_id": ["a", "b", "a"], "pred": [0, 1, 0], "prob": [0.1, 0.2, 0.3]}, index=[10, 11, 12])
    with pytest.raises(PoolError, match=r"^pool, column 'item_id', index 10 and 12: the same id 'a'; every item"):
        Pool.from_dataframe(df)
