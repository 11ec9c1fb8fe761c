"""A multi-class pool file's probabilities: one column per class and system, read, checked and written back.

The layout (:mod:`labelwise.pool.class_columns`): a system's columns in
class order 0..C-1, systems one after another; as many probability columns
as systems is one binary probability each, as before.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.engines.columns import resolve_columns
from labelwise.pool import Pool, PoolError, batch_frame
from labelwise.session import Session

runner = CliRunner()

#: Four items of a 3-class pool (classes cat=0, dog=1, bird=2); exact binary fractions, so sums are exactly 1.
PROBS = np.array([[0.5, 0.25, 0.25], [0.125, 0.5, 0.375], [0.25, 0.25, 0.5], [0.75, 0.125, 0.125]])
HEADER = "item_id,pred,p_cat,p_dog,p_bird,label"
ROWS = ["a,0,0.5,0.25,0.25,0", "b,1,0.125,0.5,0.375,1", "c,2,0.25,0.25,0.5,2", "d,0,0.75,0.125,0.125,1"]
CLASS_COLS = "p_cat,p_dog,p_bird"


def write(path: Path, rows: list[str] = ROWS, header: str = HEADER) -> Path:
    path.write_text("\n".join([header, *rows, ""]))
    return path


def test_one_column_per_class_is_read_to_the_exact_array(tmp_path):
    pool = Pool.from_file(write(tmp_path / "pool.csv"), prob_cols=CLASS_COLS.split(","))
    assert pool.n_classes == 3 and pool.system_names == ("system",)
    assert pool.probs.shape == (4, 1, 3)
    np.testing.assert_array_equal(pool.probs[:, 0], PROBS)
    assert pool.labels.tolist() == [0, 1, 2, 1]


def test_several_systems_list_their_class_columns_one_system_after_another(tmp_path):
    header = "item_id,pred_a,pred_b,a_0,a_1,a_2,b_0,b_1,b_2"
    rows = [f"{i},{np.argmax(p)},{np.argmax(p[::-1])},{','.join(map(str, p))},{','.join(map(str, p[::-1]))}"
            for i, p in enumerate(PROBS)]
    pool = Pool.from_file(write(tmp_path / "pool.csv", rows, header), pred_cols=["pred_a", "pred_b"],
                          prob_cols=["a_0", "a_1", "a_2", "b_0", "b_1", "b_2"])
    assert pool.system_names == ("pred_a", "pred_b")
    np.testing.assert_array_equal(pool.probs[:, 0], PROBS)
    np.testing.assert_array_equal(pool.probs[:, 1], PROBS[:, ::-1])


def test_two_class_columns_per_system_make_a_binary_pool_of_the_second(tmp_path):
    rows = ["a,1,0.25,0.75", "b,0,0.875,0.125"]
    pool = Pool.from_file(write(tmp_path / "pool.csv", rows, "item_id,pred,p0,p1"), prob_cols=["p0", "p1"])
    assert pool.n_classes == 2 and pool.probs[:, 0].tolist() == [0.75, 0.125]


def test_one_probability_per_system_is_binary_as_before(tmp_path):
    rows = ["a,1,0,0.75,0.5", "b,0,1,0.125,0.625"]
    pool = Pool.from_file(write(tmp_path / "pool.csv", rows, "item_id,pa,pb,qa,qb"), pred_cols=["pa", "pb"],
                          prob_cols=["qa", "qb"])
    assert pool.n_classes == 2 and pool.probs.tolist() == [[0.75, 0.5], [0.125, 0.625]]


def test_a_pool_of_probabilities_alone_counts_its_classes_by_n_classes_else_by_their_sums(tmp_path):
    header = "item_id,p_cat,p_dog,p_bird"
    rows = [f"{i},{','.join(map(str, p))}" for i, p in enumerate(PROBS)]
    path = write(tmp_path / "pool.csv", rows, header)
    assert Pool.from_file(path, prob_cols=CLASS_COLS.split(","), n_classes=3).probs.shape == (4, 1, 3)
    with pytest.raises(PoolError, match=r"3 probability column\(s\) \('p_cat', 'p_dog', 'p_bird'\) for 4 classes"):
        Pool.from_file(path, prob_cols=CLASS_COLS.split(","), n_classes=4)
    assert Pool.from_file(path, prob_cols=CLASS_COLS.split(","), n_classes=2).probs.shape == (4, 3)  # as told
    # without n_classes: columns summing to 1 on every row are one system's classes, not three binary systems
    pool = Pool.from_file(path, prob_cols=CLASS_COLS.split(","))
    assert (pool.n_classes, pool.n_systems, pool.preds) == (3, 1, None)
    np.testing.assert_array_equal(pool.probs[:, 0], PROBS)
    # two systems' classes, system after system: groups of three summing to 1, the six together to 2
    rows = [f"{i},{','.join(map(str, p))},{','.join(map(str, p[::-1]))}" for i, p in enumerate(PROBS)]
    path = write(tmp_path / "two.csv", rows, "item_id,a0,a1,a2,b0,b1,b2")
    pool = Pool.from_file(path, prob_cols=["a0", "a1", "a2", "b0", "b1", "b2"])
    assert pool.probs.shape == (4, 2, 3)
    np.testing.assert_array_equal(pool.probs[:, 1], PROBS[:, ::-1])
    # binary systems' probabilities, summing to 1 on no more than half of the rows, stay binary
    rows = ["a,0.5,0.25,0.25", "b,0.5,0.5,0.5", "c,0.125,0.25,0.875", "d,0.25,0.25,0.25"]
    assert Pool.from_file(write(tmp_path / "binary.csv", rows, header), prob_cols=CLASS_COLS.split(",")).probs.shape \
        == (4, 3)


def test_class_columns_summing_to_1_on_most_rows_name_the_rows_that_do_not(tmp_path):
    rows = [f"{i},{','.join(map(str, p))}" for i, p in enumerate(PROBS)]
    rows[2] = "2,0.5,0.5,0.5"
    path = write(tmp_path / "pool.csv", rows, "item_id,p_cat,p_dog,p_bird")
    with pytest.raises(PoolError) as err:
        Pool.from_file(path, prob_cols=CLASS_COLS.split(","))
    assert str(err.value) == (
        f"pool file {str(path)!r}, data row 3, columns 'p_cat', 'p_dog', 'p_bird': the probabilities sum to 1.5, not "
        "1; the 3 probability columns are read as 3 per system, one per class in class order 0..2 (read so because "
        "they sum to 1 on most rows and there are no pred or score columns; if each is a binary system's p(y=1), "
        "name the systems' predictions with --pred-col or their scores with --score-col, e.g. --score-col p_cat,"
        "p_dog,p_bird), and must sum to 1 (within 0.001; write them with four decimals or more): give every class "
        "its column, or normalise each row")
    binary = Pool.from_file(path, prob_cols=CLASS_COLS.split(","), score_cols=CLASS_COLS.split(","))  # the way out
    assert binary.probs.shape == (4, 3)


#: Three rule-based binary systems (probabilities 0 or 1): exactly one fires on the first four rows, two on the last.
RULES = ["a,1,0,0", "b,0,1,0", "c,0,0,1", "d,1,0,0", "e,1,1,0"]


def test_rule_systems_of_0_and_1_firing_one_at_a_time_are_binary_systems(tmp_path):
    """Their sums were read as class probabilities summing to 2 on the fifth row, and refused."""
    pool = Pool.from_file(write(tmp_path / "rules.csv", RULES, "item_id,r1,r2,r3"), prob_cols=["r1", "r2", "r3"])
    assert (pool.n_classes, pool.system_names) == (2, ("r1", "r2", "r3"))


def test_columns_of_0_and_1_summing_to_1_on_every_row_are_one_hot_classes(tmp_path):
    one_hot = Pool.from_file(write(tmp_path / "one_hot.csv", RULES[:4], "item_id,r1,r2,r3"),
                             prob_cols=["r1", "r2", "r3"])
    assert (one_hot.n_classes, one_hot.n_systems) == (3, 1)


def test_two_columns_summing_to_1_are_one_binary_system_of_the_second(tmp_path):
    """A binary softmax written as two columns was read as two systems, the first's p(y=1) being p(class 0)."""
    rows = ["a,0.25,0.75,1", "b,0.875,0.125,0", "c,0.5,0.5,1"]
    pool = Pool.from_file(write(tmp_path / "pool.csv", rows, "item_id,q_0,q_1,label"), prob_cols=["q_0", "q_1"])
    assert (pool.n_classes, pool.n_systems) == (2, 1)
    assert pool.probs[:, 0].tolist() == [0.75, 0.125, 0.5]


@pytest.mark.parametrize("n_classes, message", [
    (4, r"n_classes is 4, but the 3 probability columns give 3 per system \(1 system\(s\)\); give one per class"),
    (3, None),
])
def test_n_classes_must_agree_with_the_columns(tmp_path, n_classes, message):
    path = write(tmp_path / "pool.csv")
    if message is None:
        assert Pool.from_file(path, prob_cols=CLASS_COLS.split(","), n_classes=n_classes).n_classes == 3
        return
    with pytest.raises(PoolError, match=message):
        Pool.from_file(path, prob_cols=CLASS_COLS.split(","), n_classes=n_classes)


# ------------------------------------------------------------------ errors on the command line
def replace_row(i: int, row: str) -> list[str]:
    return [row if j == i else r for j, r in enumerate(ROWS)]


BAD = [
    ("row sums to 0.9", replace_row(2, "c,2,0.25,0.25,0.4,2"), CLASS_COLS, (),
     (", data row 3, columns 'p_cat', 'p_dog', 'p_bird': the probabilities sum to 0.9, not 1; the 3 probability "
      "columns are read as 3 per system, one per class in class order 0..2, and must sum to 1 (within 0.001; "
      "write them with four decimals or more): give every class its column, or normalise each row")),
    ("a class column left out", ROWS, "p_cat,p_dog", (),
     (", data row 3, column 'pred': value 2 is not 0 or 1; the probability columns give 2 classes ('p_cat', "
      "'p_dog'; list one per class, in class order), so predictions must be 0 or 1")),
    ("a class column left out, predictions within", replace_row(2, "c,1,0.25,0.25,0.5,1"), "p_cat,p_dog", (),
     (", data row 1, columns 'p_cat', 'p_dog': the probabilities sum to 0.75, not 1 (and 3 more rows); the 2 "
      "probability columns are read as 2 per system, one per class in class order 0..1, and must sum to 1 (within "
      "0.001; write them with four decimals or more): give every class its column, or normalise each row")),
    ("negative probability", replace_row(3, "d,0,0.875,-0.25,0.375,1"), CLASS_COLS, (),
     ", data row 4, column 'p_dog': value -0.25 is outside [0, 1]; probabilities must lie in [0, 1]"),
    ("columns no multiple of the systems", ROWS, "p_cat,p_dog,p_bird,pred,label", ("--pred-col", "pred,label"),
     (": 5 probability column(s) ('p_cat', 'p_dog', 'p_bird', 'pred', 'label') for 2 system(s); give one per "
      "system (a binary pool) or one per class per system, in class order 0..C-1, system after system (--prob-col "
      "on the command line, prob_cols= in Python)")),
]


@pytest.mark.parametrize("case, rows, prob_col, extra, message", BAD, ids=[c[0] for c in BAD])
def test_bad_class_probabilities_are_one_line_naming_file_row_and_columns(tmp_path, case, rows, prob_col, extra,
                                                                         message):
    path, session = write(tmp_path / "pool.csv", rows), tmp_path / "s.lw"
    result = runner.invoke(app, ["init", str(path), "--session", str(session), "--prob-col", prob_col,
                                 "--measure", "accuracy", "--design", "passive", *extra])
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.splitlines() == [f"error: pool file {str(path)!r}{message}"]
    assert not session.exists()


def test_a_single_prob_column_in_a_multi_class_file_names_the_per_class_form(tmp_path):
    path = write(tmp_path / "pool.csv", ["a,0,0.5", "b,2,0.25"], "item_id,pred,prob")
    with pytest.raises(PoolError, match=r"value 2 is not 0 or 1; the pool is binary \(its systems give one "
                       r"probability each, in 'prob'; a multi-class pool gives one column per class\)"):
        Pool.from_file(path)


def test_columns_not_summing_to_1_without_pred_columns_are_binary_systems_and_the_error_says_so(tmp_path):
    path = write(tmp_path / "pool.csv", [f"{i},{','.join(map(str, p / 2))},2" for i, p in enumerate(PROBS)],
                 "item_id,p_cat,p_dog,p_bird,label")
    with pytest.raises(PoolError, match=r"column 'label': value 2 is not 0 or 1 \(and 3 more rows\); the pool is "
                       r"binary \(its systems give one probability each, in 'p_cat', 'p_dog', 'p_bird'; a multi-class "
                       r"pool gives one column per class, each system's summing to 1 on every row\), so labels must "
                       r"be 0 or 1"):
        Pool.from_file(path, prob_cols=CLASS_COLS.split(","))
    pool = Pool.from_file(write(tmp_path / "sums.csv", [f"{i},{','.join(map(str, p))},2" for i, p in
                                                        enumerate(PROBS)], "item_id,p_cat,p_dog,p_bird,label"),
                          prob_cols=CLASS_COLS.split(","))
    assert pool.labels.tolist() == [2, 2, 2, 2]


def test_class_columns_out_of_class_order_are_refused_naming_the_order_the_predictions_follow(tmp_path):
    shuffled = "item_id,pred,p_dog,p_cat,p_bird,label"  # the file's cat and dog columns swapped
    rows = [f"{r.split(',')[0]},{r.split(',')[1]},{p[1]},{p[0]},{p[2]},0" for r, p in zip(ROWS, PROBS)]
    path = write(tmp_path / "pool.csv", rows, shuffled)
    with pytest.raises(PoolError) as err:
        Pool.from_file(path, prob_cols=["p_dog", "p_cat", "p_bird"])
    # 'p_dog' (read as class 0) averages (0.25 + 0.125) / 2 on rows a, d (predicted 0), (0.5 + 0.25) / 2 on b, c
    assert str(err.value) == (
        f"pool file {str(path)!r}: the probability columns 'p_dog', 'p_cat', 'p_bird' are read in class order 0..2, "
        "but 'p_dog' (class 0) is lower on the rows whose prediction in 'pred' is 0 (0.188 on average) than on the "
        "others (0.375), as when the columns are listed in another order; the predictions follow the order p_cat,"
        "p_dog,p_bird: give --prob-col p_cat,p_dog,p_bird on the command line (prob_cols=['p_cat', 'p_dog', "
        "'p_bird'] in Python)")
    assert Pool.from_file(path, prob_cols=["p_cat", "p_dog", "p_bird"]).probs[:, 0].tolist() == PROBS.tolist()


def _rare_classes(swap: bool) -> tuple[list[str], list[str]]:
    """20 rows of a 3-class system (18 of class 0, one each of classes 1 and 2), its prediction the most probable
    class, and the names of its class columns in the file (classes 1 and 2's swapped with ``swap``)."""
    preds = [0] * 18 + [1, 2]
    probs = [[0.9 if c == y else 0.05 for c in range(3)] for y in preds]
    rows = [f"{i},{y},{','.join(map(str, p))}" for i, (y, p) in enumerate(zip(preds, probs))]
    return rows, ["p0", "p2", "p1"] if swap else ["p0", "p1", "p2"]


def test_swapped_rare_classes_are_refused_with_the_column_list_to_give(tmp_path):
    """Classes 1 and 2 swapped put the prediction off the most probable class on 2 rows of 20 only (the share
    rule read them); class 1's column is then 0.05 where 1 is predicted and 0.0947 = (18 x 0.05 + 0.9) / 19 where
    it is not."""
    rows, columns = _rare_classes(swap=True)
    path = write(tmp_path / "pool.csv", rows, "item_id,pred,p0,p1,p2")
    with pytest.raises(PoolError) as err:
        Pool.from_file(path, prob_cols=columns)
    assert str(err.value) == (
        f"pool file {str(path)!r}: the probability columns 'p0', 'p2', 'p1' are read in class order 0..2, but 'p2' "
        "(class 1) is lower on the rows whose prediction in 'pred' is 1 (0.05 on average) than on the others "
        "(0.0947), as when the columns are listed in another order; the predictions follow the order p0,p1,p2: "
        "give --prob-col p0,p1,p2 on the command line (prob_cols=['p0', 'p1', 'p2'] in Python)")
    assert Pool.from_file(path, prob_cols=_rare_classes(swap=False)[1]).n_classes == 3


def test_a_binary_system_thresholding_below_one_half_is_read(tmp_path):
    """Predicting 1 where p(class 1) > 0.25 puts the prediction off the most probable class on 4 rows of 7 (57%,
    refused by the share rule); class 1's column is still larger where 1 is predicted."""
    p1 = [0.1, 0.3, 0.3, 0.3, 0.4, 0.8, 0.2]
    rows = [f"{i},{int(p > 0.25)},{1 - p:g},{p:g}" for i, p in enumerate(p1)]
    pool = Pool.from_file(write(tmp_path / "pool.csv", rows, "item_id,pred,p_0,p_1"), prob_cols=["p_0", "p_1"])
    assert pool.n_classes == 2 and pool.probs[:, 0].tolist() == p1


@pytest.mark.parametrize("preds", [[0, 1, 0, 0], [2, 0, 0, 1]])
def test_predictions_off_the_most_probable_class_are_read_when_no_other_order_fits_them(tmp_path, preds):
    """Costs (class 0 predicted on row c too, whose most probable class is 2) keep every class's column larger
    where it is predicted; predictions that follow no order of the columns (off the most probable class on every
    row: another model's) are no order problem."""
    rows = [f"{i},{y},{','.join(map(str, p))}" for i, (y, p) in enumerate(zip(preds, PROBS))]
    pool = Pool.from_file(write(tmp_path / "pool.csv", rows, "item_id,pred,p0,p1,p2"), prob_cols=["p0", "p1", "p2"])
    assert pool.preds[:, 0].tolist() == preds


# ------------------------------------------------------------------ sessions, batches, engines
def test_init_gives_the_session_the_class_probabilities_and_next_writes_them_back(tmp_path):
    path = write(tmp_path / "pool.csv", header=HEADER.replace("p_", "prob_"))
    with_probs, without = tmp_path / "with.lw", tmp_path / "without.lw"
    for session, extra in ((with_probs, ["--prob-col", "prob_cat,prob_dog,prob_bird"]), (without, [])):
        result = runner.invoke(app, ["init", str(path), str(session), "--measure", "accuracy", *extra])
        assert result.exit_code == 0, result.stderr
    assert "pass --prob-col prob_cat,prob_dog,prob_bird if they hold" in result.stderr  # the session without them
    with Session.open(with_probs) as s:
        np.testing.assert_array_equal(s.pool.probs[:, 0], PROBS)
    with Session.open(without) as s:
        assert s.pool.probs is None
    batch = tmp_path / "batch.csv"
    result = runner.invoke(app, ["next", str(with_probs), "-n", "4", "--out", str(batch)])
    assert result.exit_code == 0, result.stderr
    frame = pd.read_csv(batch)
    assert list(frame.columns) == ["item_id", "label", "pred", "prob_0", "prob_1", "prob_2"]
    rows = {"abcd"[i]: p.tolist() for i, p in enumerate(PROBS)}
    assert {i: frame.loc[frame["item_id"] == i, ["prob_0", "prob_1", "prob_2"]].iloc[0].tolist()
            for i in frame["item_id"]} == rows


@pytest.mark.parametrize("n_systems", [1, 2])
def test_a_batch_file_reads_back_to_the_same_pool(tmp_path, n_systems):
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(4), size=(50, n_systems))
    pool = Pool.from_arrays(np.arange(50), preds=probs.argmax(axis=2), probs=probs,
                            system_names=["a", "b"][:n_systems])
    path = tmp_path / "batch.csv"
    batch_frame(pool, pool.item_ids).drop(columns="label").to_csv(path, index=False)
    heads = ["prob"] if n_systems == 1 else ["prob_a", "prob_b"]
    back = Pool.from_file(path, pred_cols="pred" if n_systems == 1 else ["pred_a", "pred_b"],
                          prob_cols=[f"{h}_{c}" for h in heads for c in range(4)])
    np.testing.assert_array_equal(back.probs, pool.probs)
    np.testing.assert_array_equal(back.preds, pool.preds)


def test_engine_pools_refuse_class_probability_columns():
    available = {"item_id": "bigint", "pred": "integer", "p0": "double", "p1": "double", "p2": "double"}
    with pytest.raises(PoolError, match=r"^pool.parquet: 3 prob columns for 1 system\(s\), one per class; engine "
                       r"pools are binary .* read a multi-class pool in memory, without --engine$"):
        resolve_columns(available, "pool.parquet", prob_cols=["p0", "p1", "p2"])
    assert resolve_columns(available, "pool.parquet", prob_cols=["p0"]).probs == ("p0",)


def test_add_system_reads_a_new_systems_class_columns(tmp_path):
    path, session = write(tmp_path / "pool.csv"), tmp_path / "s.lw"
    assert runner.invoke(app, ["init", str(path), str(session), "-m", "accuracy", "--prob-col", CLASS_COLS]).exit_code == 0
    rival = tmp_path / "rival.csv"
    rows = [f"{i},{np.argmax(p[::-1])},{','.join(map(str, p[::-1]))}" for i, p in zip("abcd", PROBS)]
    write(rival, [rows[3], rows[0], rows[2], rows[1]], "item_id,pred,r0,r1,r2")  # in another order than the pool's
    for columns, message in [
        ("r0,r1", ("2 probability column(s) ['r0', 'r1']; the pool's systems give 3 class probabilities each: give "
                  "one column per class, in class order 0..2 (--prob-col p_0,p_1,p_2); the file has columns item_id, "
                  "pred, r0, r1, r2")),
        ("r0,r1,r3", ("no column(s) ['r3']; the pool's systems give 3 class probabilities each: give one column per "
                     "class, in class order 0..2 (--prob-col p_0,p_1,p_2); the file has columns item_id, pred, r0, r1, "
                     "r2")),
        ("prob", ("no column 'prob' for the new system's probabilities; the pool's systems give probabilities, so the "
                 "new system must too: name its columns, one per class in class order 0..2, with --prob-col (e.g. "
                 "--prob-col p_0,p_1,p_2); the file has columns item_id, pred, r0, r1, r2")),
    ]:
        result = runner.invoke(app, ["add-system", str(session), str(rival), "--prob-col", columns])
        assert result.exit_code == 1 and result.stderr.splitlines() == [(f"error: predictions file {str(rival)!r}: "
                                                                         f"{message}")]
    result = runner.invoke(app, ["add-system", str(session), str(rival), "--prob-col", "r0,r1,r2"])
    assert result.exit_code == 0, result.stderr
    with Session.open(session) as s:
        np.testing.assert_array_equal(s.pool.probs, np.stack([PROBS, PROBS[:, ::-1]], axis=1))
    write(rival, ["a,0,0.5,0.25,0.25", "b,0,0.5,0.5,0.5", "c,0,1,0,0", "d,0,1,0,0"], "item_id,pred,r0,r1,r2")
    result = runner.invoke(app, ["add-system", str(session), str(rival), "--prob-col", "r0,r1,r2", "--name", "x"])
    assert result.stderr.splitlines() == [
        (f"error: predictions file {str(rival)!r}, data row 2, columns 'r0', 'r1', 'r2': the probabilities sum to 1.5, "
        "not 1; the 3 probability columns are read as 3 per system, one per class in class order 0..2, and must sum "
        "to 1 (within 0.001; write them with four decimals or more): give every class its column, or normalise each "
        "row")]


def test_from_arrays_checks_that_each_systems_class_probabilities_sum_to_one():
    probs = np.stack([PROBS, PROBS[:, ::-1]], axis=1)  # (4 items, 2 systems, 3 classes)
    fields = dict(preds=np.zeros((4, 2), dtype=int), system_names=["m", "n"])
    off = probs.copy()
    off[2, 1] = [0.5, 0.5, 0.5]
    off[3, 0, 0] = 0.25
    with pytest.raises(PoolError) as err:
        Pool.from_arrays(list("abcd"), probs=off, **fields)
    assert str(err.value) == (
        "probs: item 'c', system 'n': the 3 class probabilities sum to 1.5, not 1 (and 1 more item); each system's "
        "probabilities over the classes must sum to 1 (within 0.001): give every class its probability, in class "
        "order, or normalise them (probs / probs.sum(axis=-1, keepdims=True))")
    off = probs.copy()
    off[0, 0, 0] += 0.0009  # within the tolerance of a pool file's check (cells.SUM_TOLERANCE)
    assert Pool.from_arrays(list("abcd"), probs=off, **fields).n_classes == 3
    off[0, 0, 0] += 0.0002
    with pytest.raises(PoolError, match=r"^probs: item 'a', system 'm': the 3 class probabilities sum to 1.0011, "):
        Pool.from_arrays(list("abcd"), probs=off, **fields)
