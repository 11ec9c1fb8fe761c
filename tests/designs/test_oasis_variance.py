"""``oasis``'s covariance where only the martingale term is defined: the variance of the draws at the weights
they were drawn with, computed by hand."""

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs import make_design
from labelwise.draws import Draws, Sample


def test_oasis_variance_is_the_martingale_variance_at_the_draws_own_weights():
    # one row per stratum: the post-stratified variance is undefined, so the estimate's is the martingale one
    pool = lw.make_pool(n_items=5_000, prevalence=0.1, separation=3.0, seed=4)
    measure = lw.make_measure("f1", pool)
    sampler = make_design("oasis").start(pool, measure, rng=np.random.default_rng(0))
    sampler._update()  # the first proposal q
    K, N = sampler.sizes.size, pool.n_items
    scores = pool.primary_scores(0)
    items = np.array([np.flatnonzero(sampler.strata == h)[np.argmax(scores[sampler.strata == h])] for h in range(K)])
    q_now = sampler._q[sampler.strata[items]] / sampler.sizes[sampler.strata[items]]
    prob = q_now * np.where(np.arange(K) % 2 == 0, 5.0, 0.2)  # earlier proposals far from the current one
    count = np.arange(K) % 3 + 1
    draws = Draws(items, 1.0 / (N * prob), prob, sampler.strata[items], count)
    sample = Sample(draws, pool.labels[items], K)
    losses = measure.loss(pool.outputs(items), pool.labels[items])
    n = count.sum()
    R = (count * draws.weight) @ losses / n
    J = measure.jacobian(R)[0]
    u, r = draws.weight * (losses @ J), R @ J  # the projected weighted losses, their mean
    own = np.sum(count * (u - r) ** 2) / n**2  # (1/n^2) sum_j (w_j u_j - r)^2
    # Marchant & Rubinstein (KDD 2021) 3.3.2 reweight draw j by q_{j-1}(x_j) / q_n(x_j): far from it here
    reweighted = (np.sum(count * prob / q_now * u**2) / n - r**2) / n
    assert np.isfinite(own) and abs(reweighted - own) > 0.5 * own
    assert sampler.estimate(measure, sample).cov[0, 0] == pytest.approx(own, rel=1e-10)
