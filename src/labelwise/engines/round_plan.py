"""The plan of an ``online-poisson`` round on score blocks, shared by engine pools and pools in memory.

Round ``r`` of :class:`~labelwise.engines.online.BlockRounds` (Yilmaz et al.,
"Sample Efficient Model Evaluation", 2021, appendix E) takes the next
round's ``b`` per block from the labels so far, how many items each block
gives by randomised systematic sampling of the blocks in the order of
their mean prior (or at random, ``order="random"``;
:func:`~labelwise.designs.poisson_rounds.systematic_counts`, from a
generator seeded by :func:`round_seed`), the first ``k_g`` items of block
``g`` not handed out yet in increasing ``u = H(key, seed_r)`` (found by the
caller: one pass of an engine, or the pool in memory) and hands them out in
:func:`round_order`.  One plan for both, so they hand out the same items.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..designs.poisson_rounds import systematic_counts
from .hashing import item_uniform

if TYPE_CHECKING:
    from .online import BlockRounds

__all__ = ["Members", "plan_round", "round_order", "round_seed"]

#: Added to the seed once per round (the 64-bit golden ratio), so rounds draw independent uniforms.
_ROUND_STEP = 0x9E3779B97F4A7C15

#: ``members(wanted, unhanded, seed_r)``: the first ``wanted[g]`` items of every block ``g`` not handed out
#: (``unhanded[g]`` of them) in increasing ``H(key, seed_r)``, ties by key, as ``(items, hash keys, blocks)``.
Members = Callable[[np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray, np.ndarray]]


def round_seed(seed: int, round_: int) -> int:
    """The seed round ``round_`` draws by: ``(seed + round_ * 0x9E3779B97F4A7C15) mod 2^64``."""
    return (seed + round_ * _ROUND_STEP) % 2**64


def round_order(keys: np.ndarray, seed: int) -> np.ndarray:
    """The hand-out order of a round's items with hash keys ``keys``: increasing
    ``H(key, round_seed(seed, 1))``, ties by key (a uniformly random order)."""
    return np.lexsort((keys, item_uniform(keys, round_seed(seed, 1))))


def plan_round(rounds: BlockRounds, blocks: np.ndarray, labels: np.ndarray, handed: np.ndarray, n_new: int,
               seed: int, round_: int, members: Members) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Round ``round_``'s ``b`` per block, and its items and their blocks in hand-out order (module docstring).

    Parameters
    ----------
    rounds : BlockRounds
    blocks, labels : ndarray of int
        Blocks and labels of the labeled items.
    handed : ndarray of int
        Blocks of every item handed out so far (labeled or not): none is drawn again.
    n_new : int
        Items the round is for.
    seed : int
        The session's hash seed (the round draws by :func:`round_seed` of it).
    round_ : int
    members : Members
        The search for the blocks' first items.
    """
    b = rounds.inclusion(blocks, labels, handed, n_new)
    unhanded = rounds.summary.counts - np.bincount(handed, minlength=rounds.summary.keys.size)
    seed_r = round_seed(seed, round_)
    scores = rounds.prior if rounds.design.order == "score" else None
    wanted = systematic_counts(unhanded * np.where(unhanded > 0, b, 0.0), np.random.default_rng(seed_r), scores)
    items, keys, item_blocks = members(wanted, unhanded, seed_r)
    order = round_order(keys, seed_r)
    return b, items[order], item_blocks[order]
