"""Pool construction, loaders and validation errors."""

import numpy as np
import pandas as pd
import pytest

from labelwise.pool import Pool, PoolError


def _frame(n=6):
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "item_id": [f"x{i}" for i in range(n)],
        "pred": rng.integers(0, 2, n),
        "score": rng.normal(size=n),
        "prob": rng.random(n),
        "label": rng.integers(0, 2, n),
    })


def test_from_dataframe_with_default_columns():
    df = _frame()
    pool = Pool.from_dataframe(df)
    assert pool.n_items == 6 and pool.n_systems == 1 and pool.n_classes == 2
    np.testing.assert_array_equal(pool.preds[:, 0], df["pred"])
    np.testing.assert_allclose(pool.scores[:, 0], df["score"])
    np.testing.assert_array_equal(pool.labels, df["label"])
    np.testing.assert_array_equal(pool.positions(["x3", "x0"]), [3, 0])


def test_custom_columns_and_several_systems(tmp_path):
    df = _frame().rename(columns={"item_id": "id", "label": "truth"})
    df["pred_b"] = 1 - df["pred"]
    df["score_b"] = -df["score"]
    pool = Pool.from_dataframe(df, id_col="id", pred_cols=["pred", "pred_b"], score_cols=["score", "score_b"],
                               prob_cols=None, label_col="truth")
    assert pool.system_names == ("pred", "pred_b")
    assert pool.preds.shape == (6, 2) and pool.probs is None
    np.testing.assert_array_equal(pool.preds[:, 1], 1 - df["pred"])
    # CSV (gzipped) and Parquet round trips
    for name in ("pool.csv.gz", "pool.parquet"):
        path = tmp_path / name
        df.to_csv(path, index=False) if name.endswith("gz") else df.to_parquet(path)
        again = Pool.from_file(path, id_col="id", pred_cols=["pred", "pred_b"], score_cols=["score", "score_b"],
                               prob_cols=None, label_col="truth", system_names=["a", "b"])
        np.testing.assert_allclose(again.scores, pool.scores)
        assert again.system_names == ("a", "b") and again.name == "pool"


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(scores=[0.1, np.nan, 0.3]), "scores"),
        (dict(scores=[0.1, np.inf, 0.3]), "scores"),
        (dict(probs=[0.1, 1.2, 0.3]), "probs"),
        (dict(probs=[-0.1, 0.2, 0.3]), "probs"),
        (dict(item_ids=[1, 2, 1], preds=[0, 1, 0]), "duplicate"),
        (dict(preds=[0, 1, 0], scores=[0.1, 0.2]), "length mismatch"),
        (dict(preds=[]), "empty"),
        (dict(preds=[0, 1, 0], labels=[0, 1, 2], n_classes=2), "label set"),
        (dict(preds=[0, 1, 3], n_classes=2), "preds"),
        (dict(preds=[0, 1, 0], labels=[0, 0.5, 1]), "labels"),
        (dict(labels=[0, 1]), "no system output"),
    ],
)
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(PoolError, match=field):
        Pool.from_arrays(**kwargs)


def test_missing_columns_and_files_are_named(tmp_path):
    with pytest.raises(PoolError, match="not found"):
        Pool.from_dataframe(_frame(), score_cols="margin")
    with pytest.raises(PoolError, match="does not exist"):
        Pool.from_file(tmp_path / "nope.csv")
    (tmp_path / "pool.xlsx").write_text("x")
    with pytest.raises(PoolError, match="unknown format"):
        Pool.from_file(tmp_path / "pool.xlsx")


def test_unknown_ids_are_reported():
    pool = Pool.from_arrays(["a", "b"], preds=[0, 1])
    with pytest.raises(PoolError, match="not in the pool"):
        pool.positions(["a", "zz"])


def test_multiclass_probabilities_are_checked():
    probs = np.full((4, 1, 3), 1 / 3)
    pool = Pool.from_arrays(preds=[0, 1, 2, 1], probs=probs)
    assert pool.n_classes == 3
    with pytest.raises(PoolError, match="n_systems, 3"):
        Pool.from_arrays(preds=[0, 1, 2, 1], probs=[0.1, 0.2, 0.3, 0.4])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(scores=["0.1", "high", "low"]),
         "scores: 2 value(s) are not numbers (first: 'high'); convert them to numbers first (e.g. pandas.to_numeric)"),
        (dict(preds=[0, 1, 0], labels=["no", "yes", "no"]),
         "labels: 3 value(s) are not numbers (first: 'no'); convert them to numbers first (e.g. pandas.to_numeric)"),
        (dict(preds=[0, 1, 0], features=[1.0, "n/a", 2.0]),
         "features: 1 value(s) are not numbers (first: 'n/a'); convert them to numbers first (e.g. pandas.to_numeric)"),
        (dict(probs=[[0.1, 0.2], [0.3], [0.4, 0.5]]),
         "probs: rows of different lengths; give one value per item and system"),
        (dict(probs=np.full((3, 1, 1, 2), 0.5)),
         ("probs: expected shape (n_items,), (n_items, n_systems) or (n_items, n_systems, n_classes), got "
          "(3, 1, 1, 2)")),
        (dict(probs=np.full((3, 1, 3), 1 / 3), n_classes=2),
         ("probs: 3 class probabilities per item and system for a binary pool (n_classes is 2); give p(y=1|x) per "
          "system, or pass n_classes=3")),
    ],
)
def test_arrays_that_are_not_numbers_or_not_a_pools_shape_are_named(kwargs, message):
    with pytest.raises(PoolError) as err:
        Pool.from_arrays(**kwargs)
    assert str(err.value) == message
