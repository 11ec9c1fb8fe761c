"""Every command reads and writes tables the same way, and the same flag has the same spelling everywhere.

One reader (CSV, TSV, JSON lines, Parquet; columns regardless of case; ids
stripped; rows named "data row N") and one writer (by the ``--out``
extension, CSV on standard output for ``-``), and the spellings of one
command accepted by its siblings.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.datasets import make_pool


@pytest.fixture
def labeled(tmp_path, write_pool_csv, ok):
    """A session (stratified, seed 0) with its first batch of 40 labeled, and the pool with its truth."""
    pool = make_pool(600, prevalence=0.2, separation=2.0, seed=3)
    pool_file = write_pool_csv(pool, tmp_path / "pool.csv", labels=False)
    session = tmp_path / "s.lw"
    ok("init", pool_file, "--session", session, "--design", "stratified")
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 40).stdout))
    batch.assign(label=pool.labels[batch["item_id"].to_numpy()])[["item_id", "label"]].to_csv(
        tmp_path / "labels.csv", index=False)
    ok("label", session, tmp_path / "labels.csv")
    return session, pool, pool_file


# ------------------------------------------------------------------ 1, 2, 12: one writer
@pytest.mark.parametrize("out", [None, "-", "/dev/stdout"])
def test_export_writes_csv_to_standard_output_as_next_does(tmp_path, labeled, out, ok):
    session, _, _ = labeled
    ok("export", session, "--out", tmp_path / "all.csv")
    printed = ok("export", session, *(() if out is None else ("--out", out))).stdout
    assert printed == (tmp_path / "all.csv").read_text()
    assert len(pd.read_csv(io.StringIO(printed))) == 40


def test_tsv_is_written_wherever_csv_is(tmp_path, labeled, ok):
    session, _, _ = labeled
    for command, extra in (("next", ("-n", 5)), ("export", ()), ("calibrate", ())):
        ok(command, session, *extra, "--out", tmp_path / f"{command}.csv")
        ok(command, session, *extra, "--out", tmp_path / f"{command}.tsv")
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / f"{command}.tsv", sep="\t"),
                                      pd.read_csv(tmp_path / f"{command}.csv"))


def test_out_in_a_missing_folder_names_the_folder(tmp_path, labeled, fails):
    session, _, _ = labeled
    for command in ("next", "export"):
        line = fails(command, session, "--out", tmp_path / "nodir" / "x.csv")
        assert f"the folder {str(tmp_path / 'nodir')!r} does not exist; create it" in line, line


# ------------------------------------------------------------------ 3: one reader
def test_init_reads_the_jsonl_pool_calibrate_writes(tmp_path, labeled, ok):
    session, pool, _ = labeled
    ok("calibrate", session, "--out", tmp_path / "calibrated.jsonl")
    created = ok("init", tmp_path / "calibrated.jsonl", "--session", tmp_path / "c.lw").stdout
    assert f"items:   {pool.n_items} " in created


@pytest.mark.parametrize("suffix", [".tsv", ".jsonl", ".parquet"])
def test_add_system_reads_what_init_reads_with_the_same_column_options(labeled, tmp_path, suffix, ok, fails):
    session, pool, _ = labeled
    frame = pd.DataFrame({"ID": pool.item_ids, "guess": 1 - pool.preds[:, 0], "p": 1 - pool.probs[:, 0]})
    path = tmp_path / f"rival{suffix}"
    {".tsv": lambda: frame.to_csv(path, sep="\t", index=False),
     ".jsonl": lambda: frame.to_json(path, orient="records", lines=True),
     ".parquet": lambda: frame.to_parquet(path)}[suffix]()
    assert "no column 'item_id' (--id-col)" in fails("add-system", session, path)
    record = json.loads(ok("add-system", session, path, "--id-col", "id", "--pred-col", "guess", "--prob-col", "p",
                           "--json").stdout)
    assert (record["system"], record["labels_reused"]) == ("rival", 40)


# ------------------------------------------------------------------ 4, 5, 14: labels files as pool files
def test_labels_file_columns_match_regardless_of_case_and_ids_are_stripped(tmp_path, labeled, ok):
    session, pool, _ = labeled
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 10).stdout))
    truth = pool.labels[batch["item_id"].to_numpy()]
    path = tmp_path / "upper.csv"
    pd.DataFrame({"Item_ID": [f" {i} " for i in batch["item_id"]], "LABEL": truth}).to_csv(path, index=False)
    assert "stored 10 new labels" in ok("label", session, path).stdout
    exported = pd.read_csv(io.StringIO(ok("export", session).stdout))
    assert set(batch["item_id"]) <= set(exported["item_id"])


def test_pool_and_labels_files_number_rows_alike(tmp_path, labeled, fails):
    session, _, pool_file = labeled
    bad_pool = tmp_path / "bad.csv"
    frame = pd.read_csv(pool_file)
    frame.loc[2, "pred"] = 7  # the third data row
    frame.to_csv(bad_pool, index=False)
    assert ", data row 3, column 'pred': value 7 is not 0 or 1" in fails("init", bad_pool, "--session",
                                                                        tmp_path / "x.lw")
    bad_labels = tmp_path / "labels.csv"
    bad_labels.write_text("item_id,label\n1,0\n2,1\n,1\n")
    assert "column 'item_id' is empty on data row 3" in fails("label", session, bad_labels)



def test_labels_file_whose_rows_all_end_in_a_delimiter_is_refused(tmp_path, labeled, ok, fails):
    """pandas reads such rows with the ids as index and the labels as ids, leaving every label empty: the rows
    were kept pending and the command succeeded, storing none of the labels."""
    session, pool, _ = labeled
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 10).stdout))
    rows = [f"{i},{pool.labels[i]}," for i in batch["item_id"]]
    path = tmp_path / "trailing.csv"
    path.write_text("\n".join(["item_id,label", *rows, ""]))
    before = ok("export", session).stdout
    assert fails("label", session, path) == (
        f"error: labels file {str(path)!r}: data row 1 has 3 fields, the header 2, and so has every row (a comma at "
        "the end of each line?); every row needs as many comma-separated fields as the header")
    assert ok("export", session).stdout == before


@pytest.mark.parametrize("sep", [";", "|"])
def test_labels_on_standard_input_are_read_as_a_file_is(labeled, ok, sep):
    """Standard input took only commas and tabs: a semicolon-delimited file was one column, 'missing' both."""
    session, pool, _ = labeled
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 10).stdout))
    text = "\ufeff" + batch.assign(label=pool.labels[batch["item_id"].to_numpy()])[["item_id", "label"]].to_csv(
        index=False, sep=sep, lineterminator="\r\n")
    result = CliRunner().invoke(app, ["label", str(session), "-"], input=text)
    assert result.exit_code == 0, result.stderr
    assert "stored 10 new labels" in result.stdout
    result = CliRunner().invoke(app, ["label", str(session), "-"], input=b"item_id,label\n1,caf\xe9\n")
    assert result.exit_code == 1
    assert result.stderr.strip() == ("error: labels file '-', data row 1: byte 0xe9 is not UTF-8 text; pipe UTF-8 "
                                     "(e.g. through iconv -f latin1 -t utf-8)")

# ------------------------------------------------------------------ 6: one spelling works everywhere
def _options(*path: str) -> set[str]:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return {opt for param in command.params for opt in param.opts if opt.startswith("-")}


@pytest.mark.parametrize(("path", "spellings"), [
    (("init",), {"--session", "--design", "--designs"}),
    (("simulate",), {"--design", "--designs"}),
    (("plan",), {"--design", "--designs"}),
    (("serve",), {"--content-id", "--id-col"}),
    (("ondemand", "init"), {"--session"}),
    (("discover", "init"), {"--session", "--hierarchy", "--population"}),
    (("discover", "simulate"), {"--population", "--hierarchy"}),
])
def test_each_spelling_is_accepted_by_the_sibling_commands(path, spellings):
    assert spellings <= _options(*path)


def test_init_takes_the_session_as_its_last_argument(tmp_path, write_pool_csv, ok, fails):
    pool_file = write_pool_csv(make_pool(300, seed=1), tmp_path / "pool.csv", labels=False)
    ok("init", pool_file, tmp_path / "a.lw")
    assert (tmp_path / "a.lw").exists()
    assert "looks like a pool file" in fails("init", pool_file, pool_file)
    assert "give the session file to create" in fails("init", pool_file)


def test_ondemand_and_discover_init_take_session_as_an_option(tmp_path, ok, fails):
    docs = tmp_path / "docs.csv"
    pd.DataFrame({"doc_id": np.arange(5)}).to_csv(docs, index=False)
    ok("ondemand", "init", "--session", tmp_path / "e.od", "--documents", docs)
    items = tmp_path / "items.csv"
    pd.DataFrame({"item_id": ["a", "b", "c"], "g": ["x", "y", "x"]}).to_csv(items, index=False)
    ok("discover", "init", "-s", tmp_path / "d.lw", "--population", items, "--attributes", "g", "--budget", 5)
    assert (tmp_path / "e.od").exists() and (tmp_path / "d.lw").exists()
    assert "given twice" in fails("discover", "init", tmp_path / "d2.lw", "-s", tmp_path / "d3.lw", "--hierarchy",
                                  items, "--attributes", "g", "--budget", 5)


def test_plan_takes_design_as_well_as_designs(tmp_path, write_pool_csv, ok):
    pool_file = write_pool_csv(make_pool(400, seed=2), tmp_path / "pool.csv", labels=False)
    plans = json.loads(ok("plan", "--pool", pool_file, "--design", "passive", "--json").stdout)
    assert json.dumps(plans) == ok("plan", "--pool", pool_file, "--designs", "passive", "--json").stdout.strip()


def test_ondemand_and_discover_write_tsv_as_they_write_csv(tmp_path, ok):
    docs = tmp_path / "docs.csv"
    pd.DataFrame({"doc_id": np.arange(3)}).to_csv(docs, index=False)
    ok("ondemand", "init", tmp_path / "e.od", "--documents", docs)
    predictions = tmp_path / "a.tsv"
    pd.DataFrame({"instance_id": [" i0", "i1 ", "i2"], "doc_id": [0, 1, 2]}).to_csv(predictions, sep="\t", index=False)
    ok("ondemand", "submit", tmp_path / "e.od", "a", predictions)
    ok("ondemand", "next", tmp_path / "e.od", "--out", tmp_path / "tasks.tsv")
    tasks = pd.read_csv(tmp_path / "tasks.tsv", sep="\t")
    pd.testing.assert_frame_equal(tasks, pd.read_csv(io.StringIO(ok("ondemand", "next", tmp_path / "e.od").stdout)))
    assert list(tasks.columns) == ["task", "instance_id", "doc_id", "label"] and len(tasks) > 0
    assert set(tasks["instance_id"].dropna()) <= {"i0", "i1", "i2"}  # ids stripped, as a pool's
    items = tmp_path / "items.csv"
    pd.DataFrame({"item_id": ["a", "b", "c"], "g": ["x", "y", "x"]}).to_csv(items, index=False)
    disco = tmp_path / "d.lw"
    ok("discover", "init", disco, "--hierarchy", items, "--attributes", "g", "--budget", 5)
    for suffix in (".csv", ".tsv"):
        ok("discover", "next", disco, "--out", tmp_path / f"q{suffix}")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "q.tsv", sep="\t"), pd.read_csv(tmp_path / "q.csv"))
    (tmp_path / "answers.csv").write_text("item_id\na\n")
    ok("discover", "answer", disco, tmp_path / "answers.csv")
    ok("discover", "export", disco, "--out", tmp_path / "found.tsv")
    assert (tmp_path / "found.tsv").read_text() == "item_id\tlabel\na\t1\n"
    assert ok("discover", "export", disco).stdout == "item_id,label\na,1\n"
