"""Speed work on the default design that must not change a run: same random stream, same members, same strength."""

import numpy as np
from scipy.special import gammaln

from labelwise.designs.grouped import GroupedPool
from labelwise.oracle.calibration import STRENGTHS, marginal_strength


def _reference_members(groups: GroupedPool, asked: np.ndarray, counts: np.ndarray,
                       rng: np.random.Generator, redraws: list | None = None) -> np.ndarray:
    """``GroupedPool.sample_members`` as it was before the speed work: a group at a time, deduplicating
    every draw (``redraws`` collects the groups that drew more than once)."""
    picked = []
    for g, k in zip(asked.tolist(), counts.tolist()):
        members = groups.order[groups.starts[g]:groups.starts[g + 1]]
        free = int(groups.unlabeled[g])
        if 4 * k >= free or members.size > 2 * free:
            picked.append(rng.choice(members[~groups.known[members]], size=k, replace=False))
            continue
        got = np.empty(0, dtype=np.int64)
        attempts = 0
        while got.size < k:
            attempts += 1
            cand = members[rng.integers(0, members.size, size=2 * (k - got.size) + 4)]
            both = np.concatenate([got, cand[~groups.known[cand]]])
            got = both[np.sort(np.unique(both, return_index=True)[1])]
        if redraws is not None and attempts > 1:
            redraws.append(g)
        picked.append(got[:k])
    return np.concatenate(picked).astype(np.int64)


def test_sample_members_draws_what_the_reference_draws_from_the_same_stream():
    """Groups asked for one member (the shortcut), several, or most of them (enumerated), some of them
    partly labeled so that draws are rejected: the same items, and the generators end in the same state."""
    setup = np.random.default_rng(0)
    groups = GroupedPool(setup.integers(0, 40, size=5000), setup.integers(0, 2, size=5000))
    for batch in range(30):
        rng = np.random.default_rng(batch)
        asked = np.sort(rng.choice(groups.n_groups, size=25, replace=False))
        asked = asked[groups.unlabeled[asked] > 0]
        counts = np.minimum(rng.choice([1, 1, 1, 2, 5], size=asked.size), groups.unlabeled[asked])
        mine, theirs = np.random.default_rng(100 + batch), np.random.default_rng(100 + batch)
        items = groups.sample_members(asked, counts, mine)
        np.testing.assert_array_equal(items, _reference_members(groups, asked, counts, theirs))
        assert mine.bit_generator.state == theirs.bit_generator.state
        groups.mark_labeled(items)  # the next batch rejects them
    assert (groups.unlabeled < groups.sizes).all()  # every group was partly labeled along the way


def test_groups_half_labeled_redraw_and_the_stream_is_replayed_exactly():
    """400 groups of 20 with 10 labeled, one member each: about one in 64 draws six labeled members and
    draws again before the next group, which the joint draw of ``sample_members`` replays."""
    blocks = np.repeat(np.arange(400), 20)
    groups = GroupedPool(blocks, np.zeros(blocks.size, dtype=np.int64))
    groups.mark_labeled((np.arange(400)[:, None] * 20 + np.arange(10)).ravel())
    asked, counts = np.arange(400), np.ones(400, dtype=np.int64)
    mine, theirs, redraws = np.random.default_rng(8), np.random.default_rng(8), []
    np.testing.assert_array_equal(groups.sample_members(asked, counts, mine),
                                  _reference_members(groups, asked, counts, theirs, redraws))
    assert mine.bit_generator.state == theirs.bit_generator.state
    assert len(redraws) >= 2


def test_one_member_is_uniform_over_the_unlabeled_ones():
    """A group of 10 with 3 labeled: each of the 7 unlabeled members comes out with probability 1/7
    (20000 draws, each frequency within 4 binomial standard errors)."""
    groups = GroupedPool(np.zeros(10, dtype=np.int64), np.zeros(10, dtype=np.int64))
    groups.mark_labeled(np.array([0, 4, 9]))
    rng = np.random.default_rng(5)
    n = 20_000
    drawn = np.concatenate([groups.sample_members(np.array([0]), np.array([1]), rng) for _ in range(n)])
    freq = np.bincount(drawn, minlength=10) / n
    assert (freq[[0, 4, 9]] == 0).all()
    se = np.sqrt((1 / 7) * (6 / 7) / n)
    np.testing.assert_allclose(np.delete(freq, [0, 4, 9]), 1 / 7, atol=4 * se)


def _strength_over_every_block(block_prior: np.ndarray, counts: np.ndarray) -> float:
    """The Dirichlet-multinomial marginal likelihood summed over every block, labeled or not."""
    s = np.clip(block_prior, 1e-9, None)[:, :, None]
    O = counts[:, :, None].astype(float)
    lam = STRENGTHS[None, None, :]
    loglik = (gammaln(lam * s + O) - gammaln(lam * s)).sum(axis=(0, 1)) \
        - (gammaln(lam[0] + O.sum(axis=1)) - gammaln(lam[0])).sum(axis=0)
    return float(STRENGTHS[len(STRENGTHS) - 1 - np.argmax(loglik[::-1])])


def test_marginal_strength_skips_unlabeled_blocks_without_changing_the_choice():
    rng = np.random.default_rng(2)
    for trial in range(50):
        p = rng.beta(0.3, 3.0, size=64)
        prior = np.stack([1 - p, p], axis=1)
        counts = np.zeros((64, 2))
        labeled = rng.choice(64, size=trial % 20, replace=False)  # none at all in the first trial
        counts[labeled, 1] = rng.binomial(20, np.clip(p[labeled] * rng.uniform(0.2, 5.0), 0, 1))
        counts[labeled, 0] = 20 - counts[labeled, 1]
        assert marginal_strength(prior, counts) == _strength_over_every_block(prior, counts)
