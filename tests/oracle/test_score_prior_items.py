"""score_prior for some items equals the rows of the whole pool's prior, whatever outputs the pool has."""

import numpy as np
import pytest

import labelwise as lw
from labelwise.oracle import score_prior


@pytest.mark.parametrize("keep", ["probs", "scores", "preds"])
def test_prior_of_some_items_is_those_rows(keep):
    pool = lw.make_pool(300, prevalence=0.2, seed=1)
    drop = {f: None for f in ("probs", "scores", "preds") if f != keep}
    if keep == "scores":
        drop["preds"] = None
    pool = lw.Pool.from_arrays(None, **{"preds": pool.preds, "scores": pool.scores, "probs": pool.probs, **drop})
    items = np.array([5, 0, 299, 5])
    np.testing.assert_allclose(score_prior(pool, 0.7, items=items), score_prior(pool, 0.7)[items])
