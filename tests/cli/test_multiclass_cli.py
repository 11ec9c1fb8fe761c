"""The commands on a multi-class pool file (one probability column per class): what they say of the pool."""

from __future__ import annotations

import io
import json
import sqlite3
from contextlib import closing

import pandas as pd
import pytest

import labelwise as lw
from labelwise.pool import batch_frame

#: the class probability columns batch files write, as `init` reads them back
CLASS_COLS = "prob_0,prob_1,prob_2"


@pytest.fixture
def multiclass_file(tmp_path):
    """A 3-class pool file (item_id, pred, prob_0..prob_2) and its pool (with ground truth)."""
    pool = lw.make_multiclass_pool(600, class_shares=(0.6, 0.3, 0.1), seed=4)
    path = tmp_path / "pool.csv"
    batch_frame(pool, pool.item_ids).drop(columns="label").to_csv(path, index=False, float_format="%.6f")
    return path, pool


def _label_a_batch(session, pool, tmp_path, ok) -> None:
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 40).stdout))
    batch["label"] = pool.labels[pool.positions(batch["item_id"].to_numpy())]
    batch[["item_id", "label"]].to_csv(tmp_path / "labels.csv", index=False)
    ok("label", session, tmp_path / "labels.csv")


def test_status_init_and_the_estimate_say_what_the_model_does_with_class_probabilities(multiclass_file, tmp_path,
                                                                                        ok):
    """A multi-class pool's probabilities are temperature-scaled, not Platt-recalibrated, and without scores the
    score partition ranks by 1 - p(class 0); the footnote spoke of scores and positives."""
    path, pool = multiclass_file
    session = tmp_path / "s.lw"
    created = ok("init", path, session, "--prob-col", CLASS_COLS, "-m", "accuracy", "-d", "online-poisson").stdout
    _label_a_batch(session, pool, tmp_path, ok)
    status = ok("status", session).stdout
    for shown in (created, status):
        assert ("calibration=platt (on this multi-class pool: temperature scaling of the class probabilities)"
                in shown), shown
        assert "partition=score (no score column: strata of 1 - p(class 0))" in shown, shown
    assert status.splitlines()[1] == "pool     pool: 600 items, 3 classes, systems system"
    footnote = " ".join(ok("estimate", session).stdout.split())
    assert ("the systems' class probabilities, temperature-scaled to the labels), so the interval assumes those "
            "probabilities do not understate the systems' errors left among them") in footnote, footnote
    assert "positives" not in footnote and "scores" not in footnote
    record = json.loads(ok("status", session, "--json").stdout)
    assert (record["n_classes"], record["outputs"], record["design"]["calibration"]) == (3, ["preds", "probs"],
                                                                                        "platt")


def test_a_binary_pool_keeps_its_settings_and_footnote(tmp_path, write_pool_csv, ok):
    pool = lw.make_pool(600, prevalence=0.2, seed=4)
    session = tmp_path / "s.lw"
    ok("init", write_pool_csv(pool, tmp_path / "pool.csv", labels=False), session, "-d", "online-poisson")
    _label_a_batch(session, pool, tmp_path, ok)
    status = ok("status", session).stdout
    assert "calibration=platt, lam=1.0, partition=score, " in status and "classes" not in status
    assert "the systems' scores recalibrated on the labels" in " ".join(ok("estimate", session).stdout.split())


def test_relabel_names_the_item_whose_label_is_outside_the_classes(multiclass_file, tmp_path, ok, fails):
    path, pool = multiclass_file
    session = tmp_path / "s.lw"
    ok("init", path, session, "--prob-col", CLASS_COLS, "-m", "accuracy", "-d", "passive")
    _label_a_batch(session, pool, tmp_path, ok)
    item = pd.read_csv(tmp_path / "labels.csv")["item_id"][0]
    before = session.read_bytes()
    assert fails("relabel", session, item, 7) == (
        f"error: item {item}: label 7 is outside the label set 0..2; fix the label you give")
    assert fails("relabel", session, item, "cat") == (
        f"error: item {item}: label 'cat' is not a number; labels must be integers 0..2")
    assert session.read_bytes() == before


def test_class_probabilities_without_a_pred_column_are_one_multiclass_system(multiclass_file, tmp_path, ok, fails):
    """Read as three binary systems, they made `init -m brier` a binary session of three systems; the predictions
    are not made up from the probabilities: a measure of them asks for the pred column."""
    path = multiclass_file[0]
    pd.read_csv(path).drop(columns="pred").to_csv(path, index=False)
    session = tmp_path / "s.lw"
    assert fails("init", path, session, "--prob-col", CLASS_COLS, "-m", "accuracy") == (
        f"error: pool file {str(path)!r}: measure 'accuracy' needs system output 'preds', but the pool has none: give "
        "a column 'pred' (or name yours with --pred-col on the command line, pred_cols= in Python), or a preds array "
        "when building the pool; when a system predicts its most probable class, that is the argmax of its class "
        "probabilities")
    assert not session.exists()
    created = ok("init", path, session, "--prob-col", CLASS_COLS, "-m", "brier").stdout
    assert "(pool 'pool', 3 classes)" in created and "systems: system\n" in created


def test_add_system_refuses_class_columns_out_of_class_order(multiclass_file, tmp_path, ok, fails):
    path, pool = multiclass_file
    session = tmp_path / "s.lw"
    ok("init", path, session, "--prob-col", CLASS_COLS, "-m", "accuracy", "-d", "passive")
    _label_a_batch(session, pool, tmp_path, ok)
    rival = tmp_path / "rival.csv"
    pd.read_csv(path).to_csv(rival, index=False)
    before = session.read_bytes()
    line = fails("add-system", session, rival, "--prob-col", "prob_2,prob_1,prob_0")
    assert line.startswith(f"error: predictions file {str(rival)!r}: the probability columns 'prob_2', 'prob_1', "
                           "'prob_0' are read in class order 0..2, but 'prob_2' (class 0) is lower on the rows whose "
                           "prediction in 'pred' is 0 ("), line
    assert line.endswith("the predictions follow the order prob_0,prob_1,prob_2: give --prob-col prob_0,prob_1,prob_2 "
                         "on the command line (add_system_file(session, path, columns={'prob': "
                         "'prob_0,prob_1,prob_2'}) in Python)"), line
    assert session.read_bytes() == before
    ok("add-system", session, rival, "--prob-col", CLASS_COLS)


@pytest.mark.parametrize("columns, message", [
    ("prob_0,prob_0,prob_2", ("pool file {path!r}: --prob-col names column 'prob_0' twice among one system's "
                              "class columns ('prob_0', 'prob_0', 'prob_2'); name each class's column once, in class "
                              "order 0..2")),
    ("prob_0,,prob_2", "--prob-col 'prob_0,,prob_2': name 2 of 3 is empty; give the columns separated by single commas"),
    ("prob_0,prob_1,prob_2,", ("--prob-col 'prob_0,prob_1,prob_2,': name 4 of 4 is empty; give the columns "
                               "separated by single commas")),
])
def test_a_column_named_twice_or_an_empty_name_is_refused_before_the_file_is_read(multiclass_file, tmp_path, fails,
                                                                                  columns, message):
    """A repeated column was read as a class of its own (the sums then named a misleading row); an empty name was
    dropped (two classes read from three)."""
    assert fails("init", multiclass_file[0], tmp_path / "s.lw", "--prob-col", columns, "-m", "accuracy") == (
        f"error: {message.format(path=str(multiclass_file[0]))}")
    assert not (tmp_path / "s.lw").exists()


def test_a_column_shared_by_several_systems_is_read(tmp_path, ok):
    """Two thresholds of one model share its probability and score: refused as 'named twice' after 2b18a98."""
    p = [0.1, 0.4, 0.6, 0.9]
    frame = pd.DataFrame({"item_id": range(4), "prob": p, "score": [-2.0, -0.5, 0.5, 2.0],
                          "pred_03": [int(v > 0.3) for v in p], "pred_05": [int(v > 0.5) for v in p]})
    frame.to_csv(tmp_path / "pool.csv", index=False)
    ok("init", tmp_path / "pool.csv", tmp_path / "s.lw", "--pred-col", "pred_03,pred_05", "--prob-col", "prob,prob",
       "--score-col", "score,score", "-m", "accuracy", "-d", "passive")
    with lw.Session.open(tmp_path / "s.lw") as s:
        assert s.pool.system_names == ("pred_03", "pred_05")
        assert s.pool.probs.tolist() == [[v, v] for v in p]


def test_add_system_ignores_a_default_column_of_an_output_the_pool_lacks(multiclass_file, tmp_path, ok, fails):
    """A `pred` column beside the class probabilities of a pool without predictions was refused naming the field
    'preds'; named with --pred-col, the refusal says what the column holds."""
    path = multiclass_file[0]
    frame = pd.read_csv(path)
    frame.drop(columns="pred").to_csv(path, index=False)
    session = tmp_path / "s.lw"
    ok("init", path, session, "--prob-col", CLASS_COLS, "-m", "brier", "-d", "passive")
    rival = tmp_path / "rival.csv"
    frame.rename(columns={"pred": "guess"}).to_csv(rival, index=False)
    assert fails("add-system", session, rival, "--prob-col", CLASS_COLS, "--pred-col", "guess") == (
        f"error: predictions file {str(rival)!r}: column 'guess' (--pred-col) holds predictions, which the pool's "
        "systems do not give (they give probabilities); the new system must give the same outputs: drop --pred-col")
    frame.to_csv(rival, index=False)
    ok("add-system", session, rival, "--prob-col", CLASS_COLS)


def test_add_system_to_a_pool_without_predictions_needs_no_pred_column(multiclass_file, tmp_path, ok, fails):
    path = multiclass_file[0]
    frame = pd.read_csv(path).drop(columns="pred")
    frame.to_csv(path, index=False)
    session = tmp_path / "s.lw"
    ok("init", path, session, "--prob-col", CLASS_COLS, "-m", "brier", "-d", "passive")
    rival = tmp_path / "rival.csv"
    frame.rename(columns=lambda c: c.replace("prob_", "q_")).to_csv(rival, index=False)
    assert fails("add-system", session, rival, "--prob-col", "q_0,q_0,q_2") == (
        f"error: predictions file {str(rival)!r}: --prob-col names column 'q_0' twice among one system's class "
        "columns ('q_0', 'q_0', 'q_2'); name each class's column once, in class order 0..2")
    assert fails("add-system", session, rival, "--prob-col", "q_0,,q_1,q_2") == (  # init refuses it the same way
        f"error: predictions file {str(rival)!r}: --prob-col 'q_0,,q_1,q_2': name 2 of 4 is empty; give the columns "
        "separated by single commas")
    ok("add-system", session, rival, "--prob-col", "q_0,q_1,q_2")


def test_a_two_class_measure_is_refused_naming_those_of_every_class(multiclass_file, tmp_path, ok, fails):
    """``init -m f1`` and ``estimate -m auc`` on a multi-class pool took class 1 against the rest without a word;
    each is one line naming the measures that fit."""
    path, pool = multiclass_file
    fit = "choose a measure of them all: accuracy, brier, class_precision, class_recall, macro_f1, micro_f1"
    session = tmp_path / "s.lw"
    assert fails("init", path, session, "--prob-col", CLASS_COLS, "-m", "f1") == (
        f"error: measure 'f1' is defined for two classes, and this pool has 3 classes; {fit}")
    assert not session.exists()
    ok("init", path, session, "--prob-col", CLASS_COLS, "-m", "macro_f1,brier", "-d", "passive")
    _label_a_batch(session, pool, tmp_path, ok)
    assert fails("estimate", session, "-m", "accuracy,auc") == (
        f"error: measure 'auc' is defined for two classes, and this pool has 3 classes; {fit}")
    assert "brier" in ok("estimate", session, "--json").stdout


def test_without_a_measure_a_multiclass_session_estimates_macro_f1(multiclass_file, tmp_path, ok):
    """f1 (class 1 against the rest) is refused on a multi-class pool, so it cannot be the default there."""
    path, pool = multiclass_file
    session = tmp_path / "s.lw"
    assert "  measure: macro_f1" in ok("init", path, session, "--prob-col", CLASS_COLS, "-d", "passive").stdout
    assert json.loads(ok("status", session, "--json").stdout)["measure"]["measure"] == "macro_f1"
    with_truth = tmp_path / "truth.csv"
    batch_frame(pool, pool.item_ids).assign(label=pool.labels).to_csv(with_truth, index=False, float_format="%.6f")
    result = json.loads(ok("simulate", "--pool", with_truth, "--prob-col", CLASS_COLS, "-d", "passive", "--budget", 100,
                           "--repeats", 2, "--json").stdout)
    assert result["measure"] == "macro_f1"


#: What `estimate` and `status` say on stderr of a session file from before brier summed over every class.
OLD_BRIER = ("warning: this session file predates brier's sum over every class of a pool of more than two classes: the "
             "labelwise that wrote it may have scored class 1 against the rest, 2 (p_1 - 1{y=1})^2, so the brier it "
             "printed is not comparable with this one, sum_c (p_c - 1{y=c})^2\n")


def _as_written_before_loss_rules(session) -> None:
    """The session file as labelwise wrote it before it recorded its loss rules: no ``loss_rules`` in the config."""
    with closing(sqlite3.connect(str(session))) as conn, conn:
        config = json.loads(conn.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
        assert config.pop("loss_rules") == 1
        conn.execute("UPDATE meta SET value=? WHERE key='config'", (json.dumps(config),))


def test_a_session_file_from_before_brier_summed_over_every_class_says_so(multiclass_file, tmp_path, write_pool_csv,
                                                                          ok):
    """brier on a multi-class pool was ``2 (p_1 - 1{y=1})^2`` (class 1 against the rest) until it summed over every
    class; a session written before reported the new quantity without a word.  `estimate` and `status` say so in
    one line on stderr (its JSON stays one object), wherever brier is estimated, and nowhere else."""
    path, pool = multiclass_file
    session, other = tmp_path / "s.lw", tmp_path / "a.lw"
    ok("init", path, session, "--prob-col", CLASS_COLS, "-m", "macro_f1,brier", "-d", "passive")
    ok("init", path, other, "--prob-col", CLASS_COLS, "-m", "accuracy", "-d", "passive")
    for each in (session, other):
        _label_a_batch(each, pool, tmp_path, ok)
        assert ok("estimate", each).stderr == ok("status", each).stderr == ""  # written now: nothing to say
        _as_written_before_loss_rules(each)
    assert ok("estimate", session).stderr == ok("status", session).stderr == OLD_BRIER  # stored estimates
    assert ok("estimate", other, "-m", "brier").stderr == OLD_BRIER  # an estimate computed, of another measure
    answer = ok("estimate", session, "--json")
    assert answer.stderr == OLD_BRIER and json.loads(answer.stdout)["measure"] == "macro_f1+brier"
    with closing(sqlite3.connect(str(session))) as conn, conn:
        conn.execute("DELETE FROM cache WHERE key='estimate'")
    assert ok("status", session).stderr == OLD_BRIER  # computed afresh
    assert ok("estimate", other).stderr == ok("status", other).stderr == ""  # no brier
    binary = tmp_path / "b.lw"  # two classes: brier was and is 2 (p_1 - 1{y=1})^2
    ok("init", write_pool_csv(lw.make_pool(300, prevalence=0.2, seed=1), tmp_path / "b.csv", labels=False), binary,
       "-m", "brier", "-d", "passive")
    _as_written_before_loss_rules(binary)
    assert ok("estimate", binary).stderr == ""
