"""``oasis``'s covariance where no exception is left unseen: the martingale variance of the draws at the weights
they were drawn with, computed by hand."""

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs import make_design
from labelwise.draws import Draws, Sample


def test_oasis_variance_is_the_martingale_variance_at_the_draws_own_weights():
    # every item labeled: no exception is left unseen, so the estimate's variance is the martingale one
    pool = lw.make_pool(n_items=300, prevalence=0.1, separation=3.0, seed=4)
    measure = lw.make_measure("f1", pool)
    sampler = make_design("oasis").start(pool, measure, rng=np.random.default_rng(0))
    sampler._update()  # the first proposal q
    N = pool.n_items
    items = np.arange(N)
    q_now = sampler._q[sampler.strata] / sampler.sizes[sampler.strata]
    prob = q_now * np.where(sampler.strata % 2 == 0, 5.0, 0.2)  # earlier proposals far from the current one
    count = np.arange(N) % 3 + 1
    draws = Draws(items, 1.0 / (N * prob), prob, sampler.strata, count)
    sample = Sample(draws, pool.labels, N)
    losses = measure.loss(pool.outputs(), pool.labels)
    n = count.sum()
    R = (count * draws.weight) @ losses / n
    J = measure.jacobian(R)[0]
    u, r = draws.weight * (losses @ J), R @ J  # the projected weighted losses, their mean
    own = np.sum(count * (u - r) ** 2) / n**2  # (1/n^2) sum_j (w_j u_j - r)^2
    # Marchant & Rubinstein (KDD 2021) 3.3.2 reweight draw j by q_{j-1}(x_j) / q_n(x_j): far from it here
    reweighted = (np.sum(count * prob / q_now * u**2) / n - r**2) / n
    assert np.isfinite(own) and abs(reweighted - own) > 0.5 * own
    assert sampler.estimate(measure, sample).cov[0, 0] == pytest.approx(own, rel=1e-10)
