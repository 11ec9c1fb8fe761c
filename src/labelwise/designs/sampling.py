"""Drawing with replacement until a batch holds enough new items.

Under a deterministic oracle a re-draw of a labeled item is free, so a
batch is "draw until ``n_new`` distinct unlabeled items are in".  When a
proposal keeps most of its mass on labeled items (adaptive proposals near
the optimum do), that can take thousands of draws per new label; :func:`draw_batch`
then draws only the unlabeled part one by one and the labeled part as
counts: the number of labeled draws before the batch completes is negative
binomial, and their split over labeled items multinomial.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["draw_batch", "draw_until_new", "draw_with_replacement", "sample_from_cdf"]


def sample_from_cdf(cdf: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` i.i.d. indices from the distribution with cumulative sums ``cdf`` (unnormalised)."""
    return np.minimum(np.searchsorted(cdf, rng.random(k) * cdf[-1], side="right"), cdf.shape[0] - 1)


def draw_until_new(sample: Callable[[int], np.ndarray], n_new: int, labeled: np.ndarray | None,
                   max_draws: int | None = None) -> np.ndarray:
    """Draw i.i.d. items with ``sample(k)`` until ``n_new`` distinct items outside ``labeled`` are in.

    ``labeled=None`` means ``sample`` only returns unlabeled items.  Returns the
    drawn positions in order (repeats and labeled items included); the last
    draw is the one that completes the batch.
    """
    max_draws = max_draws or 1000 * n_new + 1_000_000
    parts: list[np.ndarray] = []
    new_items = np.empty(0, dtype=np.int64)
    got = drawn = 0
    new_rate = 0.5  # fraction of draws that hit a new item, re-estimated from every chunk
    while got < n_new:
        k = int(min(max(1.5 * (n_new - got) / new_rate, 64), 1 << 20))
        items = sample(k)
        fresh = ~np.isin(items, new_items)
        if labeled is not None:
            fresh &= ~labeled[items]
        first = np.zeros(k, dtype=bool)
        first[np.unique(items, return_index=True)[1]] = True
        is_new = fresh & first
        counts = np.cumsum(is_new)
        need = n_new - got
        if counts[-1] >= need:
            cut = int(np.searchsorted(counts, need)) + 1
            items, is_new = items[:cut], is_new[:cut]
        parts.append(items)
        new_items = np.concatenate([new_items, items[is_new]])
        got += int(is_new.sum())
        new_rate = max(float(is_new.mean()), 1e-6)
        drawn += items.size
        if drawn > max_draws and got < n_new:
            raise RuntimeError(
                f"drew {drawn} items but found only {got} of {n_new} unlabeled ones: the proposal puts "
                "almost no mass on unlabeled items; increase the design's defensive weight"
            )
    return np.concatenate(parts)


def draw_with_replacement(cdf: np.ndarray, n_new: int, labeled: np.ndarray, rng: np.random.Generator,
                          max_draws: int | None = None) -> np.ndarray:
    """:func:`draw_until_new` for the distribution with cumulative sums ``cdf`` over the pool."""
    return draw_until_new(lambda k: sample_from_cdf(cdf, k, rng), n_new, labeled, max_draws)


def draw_batch(sample_unlabeled: Callable[[int], np.ndarray], unlabeled_mass: float, labeled_items: np.ndarray,
               labeled_q: np.ndarray, n_new: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One batch of i.i.d. draws from q, with the draws of labeled items aggregated.

    Parameters
    ----------
    sample_unlabeled : callable
        ``sample_unlabeled(k)`` draws ``k`` items from q restricted to unlabeled items.
    unlabeled_mass : float
        ``q`` summed over unlabeled items.
    labeled_items, labeled_q : ndarray
        Labeled items and their ``q``.
    n_new : int
        Distinct unlabeled items the batch must contain.

    Returns
    -------
    items, counts : ndarray
        The unlabeled draws in order (count 1 each), then one row per labeled
        item drawn with its number of draws.  The batch is distributed
        exactly as the i.i.d. draws up to the one completing ``n_new`` items.
    """
    unlabeled_draws = draw_until_new(sample_unlabeled, n_new, None)
    labeled_mass = float(np.sum(labeled_q))
    if labeled_mass <= 0:
        return unlabeled_draws, np.ones(unlabeled_draws.size, dtype=np.int64)
    # draws of labeled items interleaved before the last unlabeled draw: NegBin(M_U, P(unlabeled))
    n_labeled_draws = rng.negative_binomial(unlabeled_draws.size, unlabeled_mass / (unlabeled_mass + labeled_mass))
    per_item = rng.multinomial(n_labeled_draws, labeled_q / labeled_mass)
    hit = per_item > 0
    items = np.concatenate([unlabeled_draws, labeled_items[hit]])
    counts = np.concatenate([np.ones(unlabeled_draws.size, dtype=np.int64), per_item[hit]])
    return items, counts
