"""Multi-label pools: label sets coded as bitmasks, their joint distribution, validation and file columns.

Appendix D of E. Yilmaz, P. Hayes, R. Habib, J. Burgess and D. Barber, "Sample
Efficient Model Evaluation", arXiv:2109.12043, 2021 ("Yilmaz et al." below).
The hand-made pool ``tiny_multilabel`` is in ``tests/conftest.py``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import labelwise as lw
from labelwise.pool import MAX_LABELS, Pool, PoolError, multilabel_joint


def test_bitmask_round_trip_and_product_distribution():
    rng = np.random.default_rng(0)
    for C in (1, 3, MAX_LABELS):
        V = rng.integers(0, 2, size=(50, C))
        codes = lw.encode_multilabel(V)
        assert codes.min() >= 0 and codes.max() < 2**C
        np.testing.assert_array_equal(lw.decode_multilabel(codes, C), V)
    np.testing.assert_array_equal(lw.encode_multilabel([[1, 0, 1], [0, 1, 1]]), [5, 6])
    np.testing.assert_array_equal(lw.decode_multilabel(np.arange(2**4), 4) @ 2 ** np.arange(4), np.arange(16))

    m = rng.random((7, 2, 4))
    joint = multilabel_joint(m)
    assert joint.shape == (7, 2, 16)
    np.testing.assert_allclose(joint.sum(axis=-1), 1.0)
    bits = lw.decode_multilabel(np.arange(16), 4)
    for code in (0, 5, 11, 15):  # Yilmaz et al., eq. (89), one label set at a time
        np.testing.assert_allclose(joint[..., code], np.prod(np.where(bits[code] == 1, m, 1 - m), axis=-1))
    np.testing.assert_allclose(joint @ bits, m)  # the marginals come back


def test_from_multilabel_builds_a_coded_pool(tiny_multilabel, tiny_multilabel_pool):
    preds, marginals = tiny_multilabel.preds, tiny_multilabel.marginals
    pool = tiny_multilabel_pool
    assert pool.n_classes == 8 and pool.label_names == ("a", "b", "c") and pool.n_systems == 1
    np.testing.assert_array_equal(pool.preds[:, 0], [5, 2, 3, 0, 4])
    np.testing.assert_array_equal(pool.labels, [1, 6, 1, 4, 4])
    np.testing.assert_allclose(pool.probs[:, 0], multilabel_joint(marginals))
    relabeled = pool.with_labels([0, 1, 2, 3, 7])
    assert relabeled.label_names == pool.label_names and relabeled.labels[-1] == 7

    two_systems = Pool.from_multilabel(preds=np.stack([preds, preds], axis=1), probs=np.stack([marginals] * 2, 1),
                                       system_names=["x", "y"])
    assert two_systems.preds.shape == (5, 2) and two_systems.probs.shape == (5, 2, 8)
    assert two_systems.label_names == ("label0", "label1", "label2")

    single = Pool.from_multilabel(preds=[[1], [0]], probs=[[0.8], [0.3]], labels=[[1], [1]])
    assert single.n_classes == 2  # one label is a binary pool, probabilities p(y=1|x)
    np.testing.assert_allclose(single.probs[:, 0], [0.8, 0.3])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"preds": [[0, 2], [1, 0]]}, "preds: multi-label indicators must be 0 or 1"),
        ({"preds": [[0, 1], [1, 0]], "labels": [[0, 1], [0.5, 0]]}, "labels: multi-label indicators"),
        ({"probs": [[0.1, 1.5], [0.2, 0.3]]}, "probs: per-label probabilities"),
        ({"probs": [[0.1, np.nan], [0.2, 0.3]]}, "probs: per-label probabilities"),
        ({"preds": [[0, 1, 1], [1, 0, 0]], "probs": [[0.1, 0.5], [0.2, 0.3]]}, "number of labels C differs"),
        ({"preds": [[0, 1], [1, 0]], "label_names": ["a"]}, "number of labels C differs"),
        ({"preds": [[0, 1], [1, 0]], "label_names": ["a", "a"]}, "label_names: duplicate"),
        ({"preds": np.zeros((2, MAX_LABELS + 1))}, f"between 1 and {MAX_LABELS} are supported"),
        ({"probs": np.full((70_000, MAX_LABELS), 0.5)}, "joint distribution over 2^12 label sets"),
        ({"preds": [[0, 1], [1, 0]], "labels": [1, 0]}, "labels: expected shape (n_items, n_labels)"),
        ({"preds": [0, 1]}, "preds: expected shape"),
        ({"labels": [[0, 1], [1, 0]]}, "no system output"),
        ({"preds": [[0, 1], [1, 0]], "labels": [[0, 1], [1, 0], [1, 1]]}, "length mismatch"),
    ],
)
def test_from_multilabel_validation(kwargs, message):
    with pytest.raises(PoolError, match=re.escape(message)):
        Pool.from_multilabel(**kwargs)


def test_dataframe_and_file_columns(tmp_path, tiny_multilabel, tiny_multilabel_pool):
    preds, marginals, truth = tiny_multilabel.preds, tiny_multilabel.marginals, tiny_multilabel.truth
    frame = pd.DataFrame({"item_id": [f"i{n}" for n in range(5)], "score": np.linspace(0, 1, 5)})
    for k, name in enumerate(["a", "b", "c"]):
        frame[f"pred_{name}"] = np.array(preds)[:, k]
        frame[f"prob_{name}"] = np.array(marginals)[:, k]
        frame[f"label_{name}"] = np.array(truth)[:, k]
    path = tmp_path / "multi.csv"
    frame.to_csv(path, index=False)
    pool = Pool.from_file(path, multilabel=["a", "b", "c"])
    expected = tiny_multilabel_pool
    assert pool.label_names == ("a", "b", "c") and pool.name == "multi"
    np.testing.assert_array_equal(pool.preds, expected.preds)
    np.testing.assert_array_equal(pool.labels, expected.labels)
    np.testing.assert_allclose(pool.probs, expected.probs)
    np.testing.assert_allclose(pool.scores[:, 0], frame["score"])
    # the label order given decides the bits
    np.testing.assert_array_equal(Pool.from_dataframe(frame, multilabel=["c", "b", "a"]).preds[:, 0], [5, 2, 6, 0, 1])
    # absent default prefixes are skipped as a whole
    no_probs = Pool.from_dataframe(frame.drop(columns=["prob_a", "prob_b", "prob_c"]), multilabel=["a", "b", "c"])
    assert no_probs.probs is None
    with pytest.raises(PoolError, match=r"\['prob_b'\] not found.*<prefix>_<label>"):
        Pool.from_dataframe(frame.drop(columns=["prob_b"]), multilabel=["a", "b", "c"])
    with pytest.raises(PoolError, match="not found"):
        Pool.from_dataframe(frame, multilabel=["a", "b", "c"], pred_cols="yhat")
    with pytest.raises(PoolError, match="n_classes: leave it unset"):
        Pool.from_dataframe(frame, multilabel=["a", "b", "c"], n_classes=8)
