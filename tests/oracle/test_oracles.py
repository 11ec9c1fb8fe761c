"""Oracles: ground truth, noisy annotators, wrapped functions and label files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from labelwise.datasets import make_pool
from labelwise.designs import make_design
from labelwise.measures import make_measure
from labelwise.oracle.annotators import (
    CallableOracle,
    FileOracle,
    NoisyOracle,
    TruthOracle,
    noisy_label_distribution,
)
from labelwise.pool import LabelFileError, Pool, PoolError, read_labels_file
from labelwise.session import Session


@pytest.fixture(scope="module")
def pool():
    return make_pool(400, prevalence=0.3, separation=2.0, seed=4)


def _write_csv(path, rows, header="item_id,label"):
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# ---------------------------------------------------------------- truth
def test_truth_oracle_returns_ground_truth(pool):
    oracle = TruthOracle(pool)
    ids = pool.item_ids[[5, 0, 399, 5]]
    np.testing.assert_array_equal(oracle(ids), pool.labels[[5, 0, 399, 5]])
    # string ids of an integer pool are accepted like everywhere else
    np.testing.assert_array_equal(oracle(np.array(["7", "8"])), pool.labels[[7, 8]])


def test_truth_oracle_needs_labels():
    no_truth = Pool.from_arrays(np.arange(3), preds=[0, 1, 1])
    with pytest.raises(ValueError, match="no ground-truth labels"):
        TruthOracle(no_truth)


def test_truth_oracle_unknown_id(pool):
    with pytest.raises(PoolError, match="not in the pool"):
        TruthOracle(pool)(np.array([0, 10_000]))


# ---------------------------------------------------------------- noisy
def test_noisy_oracle_answers_follow_its_label_distribution():
    labels = np.repeat([0, 1, 2], 4000)
    pool = Pool.from_arrays(preds=labels, labels=labels, n_classes=3)
    oracle = NoisyOracle(pool, noise=0.3, rng=5)
    answers = oracle(pool.item_ids)
    wrong = answers != labels
    n = labels.size
    assert abs(wrong.mean() - 0.3) < 4 * np.sqrt(0.3 * 0.7 / n)
    # a wrong answer is uniformly one of the two other classes
    for c in range(3):
        others = answers[wrong & (labels == c)]
        share = np.mean(others == (c + 1) % 3)
        assert abs(share - 0.5) < 4 * np.sqrt(0.25 / others.size)
    # asking again gives fresh answers, not the same ones
    assert np.mean(oracle(pool.item_ids) != answers) > 0.3
    probs = noisy_label_distribution(pool, 0.3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    np.testing.assert_allclose(probs[np.arange(n), labels], 0.7)


@pytest.mark.parametrize("noise", [-0.1, 0.5, 1.0])
def test_noise_outside_its_range_is_refused(tiny_binary_pool, noise):
    pool = tiny_binary_pool
    with pytest.raises(ValueError, match=r"noise: must lie in \[0, 0.5\)"):
        NoisyOracle(pool, noise)


# ------------------------------------------------------------- callable
def test_callable_oracle_passes_answers_through():
    seen = []

    def fn(ids):
        seen.append(list(ids))
        return [int(i) % 2 for i in ids]

    oracle = CallableOracle(fn)
    np.testing.assert_array_equal(oracle(np.array([3, 4, 7])), [1, 0, 1])
    assert seen == [[3, 4, 7]]


@pytest.mark.parametrize("answer", [[1, 0], [1, 0, 1, 1], 1, [[1], [0], [1]]])
def test_callable_oracle_wrong_length(answer):
    oracle = CallableOracle(lambda ids: answer)
    with pytest.raises(ValueError, match="return one per item"):
        oracle(np.array([1, 2, 3]))


# ------------------------------------------------------------ read file
def test_read_csv(tmp_path):
    path = _write_csv(tmp_path / "l.csv", [(10, 1), (11, 0), (12, 1)])
    df = read_labels_file(path)
    assert list(df.columns) == ["item_id", "label"]
    assert df["item_id"].tolist() == ["10", "11", "12"]  # as written (the pool matches plain integers)
    assert df["label"].tolist() == [1, 0, 1]


def test_read_csv_custom_columns(tmp_path):
    path = _write_csv(tmp_path / "l.csv", [("a", 1, "x"), ("b", 0, "y")], header="doc,gold,note")
    df = read_labels_file(path, id_col="doc", label_col="gold")
    assert list(df.columns) == ["item_id", "label"]
    assert df.to_dict("list") == {"item_id": ["a", "b"], "label": [1, 0]}


def test_read_jsonl(tmp_path):
    path = _write_jsonl(tmp_path / "l.jsonl", [{"item_id": "q1", "label": 1, "extra": 3},
                                              {"item_id": "q2", "label": 0}])
    df = read_labels_file(path)
    assert df.to_dict("list") == {"item_id": ["q1", "q2"], "label": [1, 0]}
    ndjson = _write_jsonl(tmp_path / "l.ndjson", [{"id": 5, "y": 1}])
    assert read_labels_file(ndjson, "id", "y").to_dict("list") == {"item_id": [5], "label": [1]}


def test_read_missing_file(tmp_path):
    with pytest.raises(LabelFileError, match="does not exist"):
        read_labels_file(tmp_path / "nope.csv")


def test_read_unknown_format(tmp_path):
    path = tmp_path / "l.xlsx"
    path.write_text("item_id,label\n1,0\n")
    with pytest.raises(LabelFileError, match="unknown format"):
        read_labels_file(path)


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_read_missing_column(tmp_path, kind):
    if kind == "csv":
        path = _write_csv(tmp_path / "l.csv", [(1, 0)], header="item_id,gold")
    else:
        path = _write_jsonl(tmp_path / "l.jsonl", [{"item_id": 1, "gold": 0}])
    with pytest.raises(LabelFileError, match=r"missing column\(s\) \['label'\]") as info:
        read_labels_file(path)
    assert "gold" in str(info.value)  # the message lists what was found


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_read_empty_label(tmp_path, kind):
    if kind == "csv":
        path = tmp_path / "l.csv"
        path.write_text("item_id,label\n1,0\n2,\n3,1\n")
    else:
        path = _write_jsonl(tmp_path / "l.jsonl", [{"item_id": 1, "label": 0}, {"item_id": 2}])
    with pytest.raises(LabelFileError, match="'label' is empty for item '?2"):
        read_labels_file(path)


def test_read_empty_id(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text("item_id,label\n1,0\n,1\n3,1\n")
    with pytest.raises(LabelFileError, match="'item_id' is empty on data row 2"):
        read_labels_file(path)


@pytest.mark.parametrize(("content", "message"), [("", "l.csv' is empty; it needs a header line"),
                                                  ('{"item_id": 1, "label": 0}\n{not json\n',
                                                   "l.jsonl' is not one JSON object per line")])
def test_read_unparsable(tmp_path, content, message):
    path = tmp_path / ("l.csv" if not content else "l.jsonl")
    path.write_text(content)
    with pytest.raises(LabelFileError, match=message):
        read_labels_file(path)


# ------------------------------------------------------------ file oracle
@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_file_oracle_answers_from_file(tmp_path, pool, kind):
    ids, labels = pool.item_ids.tolist(), pool.labels.tolist()
    if kind == "csv":
        path = _write_csv(tmp_path / "l.csv", list(zip(ids, labels)))
    else:
        path = _write_jsonl(tmp_path / "l.jsonl", [{"item_id": i, "label": y} for i, y in zip(ids, labels)])
    oracle = FileOracle(path)
    order = np.array([17, 3, 250, 3])
    np.testing.assert_array_equal(oracle(pool.item_ids[order]), pool.labels[order])
    # drives a session end to end
    measure = make_measure("f1", pool)
    session = Session(pool, measure, make_design("passive"), seed=1)
    session.run(oracle, 60, batch_size=20)
    labeled = np.flatnonzero(session.labels >= 0)
    assert labeled.size == 60
    np.testing.assert_array_equal(session.labels[labeled], pool.labels[labeled])


def test_file_oracle_string_ids(tmp_path):
    path = _write_jsonl(tmp_path / "l.jsonl", [{"item_id": "doc-b", "label": 0}, {"item_id": "doc-a", "label": 1}])
    oracle = FileOracle(path)
    np.testing.assert_array_equal(oracle(np.array(["doc-a", "doc-b", "doc-a"])), [1, 0, 1])


def test_file_oracle_duplicate_id(tmp_path):
    path = _write_csv(tmp_path / "l.csv", [(1, 0), (2, 1), (1, 0)])
    with pytest.raises(LabelFileError, match=r"ids \['1'\] appear more than once"):
        FileOracle(path)


def test_file_oracle_id_not_in_file(tmp_path):
    path = _write_csv(tmp_path / "l.csv", [(1, 0), (2, 1)])
    oracle = FileOracle(path)
    with pytest.raises(LabelFileError, match=r"has no label for item\(s\) \['3'\]"):
        oracle(np.array([1, 3]))


def test_file_oracle_propagates_read_errors(tmp_path):
    with pytest.raises(LabelFileError, match="does not exist"):
        FileOracle(tmp_path / "nope.jsonl")
    path = _write_csv(tmp_path / "l.csv", [(1, 0)], header="item_id,y")
    with pytest.raises(LabelFileError, match="missing column"):
        FileOracle(path)


def test_file_oracle_with_custom_columns(tmp_path):
    df = pd.DataFrame({"doc": [4, 5], "gold": [1, 0]})
    path = tmp_path / "l.csv"
    df.to_csv(path, index=False)
    np.testing.assert_array_equal(FileOracle(path, id_col="doc", label_col="gold")(np.array([5, 4])), [0, 1])
