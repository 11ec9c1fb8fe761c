"""Hierarchical partitions of a pool: complete trees over leaf blocks.

The Dirichlet-tree model of the oracle response (Marchant and Rubinstein,
section 4) shares statistical strength between *hierarchically neighbouring*
blocks of the pool.  It needs a hierarchical partition: a tree whose leaves are disjoint
blocks of items.  This module represents such a tree as a **complete tree of
given depth and branching factor**, with no node objects:

* level ``l`` (``0 <= l <= depth``) has ``branching**l`` nodes, numbered
  ``0..branching**l - 1`` from left to right (breadth-first order);
* node ``j`` at level ``l`` has the children
  ``j*b, ..., j*b + b - 1`` at level ``l + 1`` (``b = branching``), so its
  parent is ``j // b`` and the ancestor at level ``l`` of leaf ``k`` is
  ``k // b**(depth - l)``;
* the leaves are the ``n_leaves = b**depth`` nodes at level ``depth``; every
  item of the pool is in exactly one leaf (``Hierarchy.blocks``).  Leaves may
  be empty.

Any per-leaf quantity is aggregated over subtrees by reshaping its leaf axis
to ``(b**l, b**(depth - l))`` and summing (:meth:`Hierarchy.subtree_sums`),
which is what makes per-node computations vectorised.

Two builders are provided:

* :func:`score_hierarchy` -- the construction of Marchant and Rubinstein,
  section 5.2: CSF bins of a classifier score
  (:func:`labelwise.partition.make_strata`) become the leaves "in
  breadth-first order".  ``depth=1, branching=K`` is the flat
  (non-hierarchical) partition into ``K`` blocks ("Ours-1"); ``depth=8,
  branching=2`` over ``K = 2**8`` bins is "Ours-8".
* :func:`feature_hierarchy` -- a k-d tree (Marchant and Rubinstein, section
  4, cite k-d trees as one way to learn a hierarchical partition), built level by level
  by equal-count splits on each node's highest-variance feature.

References
----------
N. G. Marchant and B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient
Evaluation under Extreme Class Imbalance", KDD 2021.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np

from ..validation import check_int
from .ranks import ranks_within
from .strata import make_strata

__all__ = ["MAX_LEAVES", "Hierarchy", "feature_hierarchy", "score_hierarchy"]

#: Largest number of leaves (``branching**depth``) accepted; guards against
#: configurations such as ``depth=8, branching=256`` that would not fit in memory.
MAX_LEAVES = 2**24


# ---------------------------------------------------------------- validation

def _check_shape(depth, branching) -> tuple[int, int, int]:
    depth = check_int("depth", depth, 1)
    branching = check_int("branching", branching, 2)
    n_leaves = branching**depth
    if n_leaves > MAX_LEAVES:
        raise ValueError(
            f"depth, branching: a tree of depth {depth} and branching {branching} has "
            f"{n_leaves} leaves, more than the limit {MAX_LEAVES}; use a smaller depth or branching"
        )
    return depth, branching, n_leaves


# ---------------------------------------------------------------- the tree
@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A complete tree of depth ``depth`` and branching ``branching`` over the pool.

    Parameters
    ----------
    depth : int
        Number of levels below the root (at least 1).  The root is at level 0
        and the leaves at level ``depth``; ``depth(v)`` of Marchant and
        Rubinstein, section 5.2, is the level of node ``v``.
    branching : int
        Number of children of every internal node (at least 2).
    blocks : ndarray of int, shape (N,)
        Leaf (block) ``0..n_leaves-1`` of each item, by pool position; kept in
        the narrowest signed integer type holding ``n_leaves``.

    Attributes
    ----------
    n_leaves : int
        ``branching**depth``, the number of leaf blocks ``K`` (some may be empty).

    Notes
    -----
    Node ``j`` of level ``l`` has children ``j*b .. j*b+b-1`` at level
    ``l+1``; leaves are numbered left to right, i.e. in breadth-first order
    (Marchant and Rubinstein, section 5.2).
    ``Hierarchy(depth=1, branching=K, blocks=...)`` is a flat partition into
    ``K`` blocks.

    Examples
    --------
    >>> h = Hierarchy(depth=2, branching=2, blocks=np.array([0, 3, 3, 1]))
    >>> h.block_sizes.tolist()
    [1, 1, 0, 2]
    >>> h.ancestors(1).tolist()
    [0, 0, 1, 1]
    """

    depth: int
    branching: int
    blocks: np.ndarray
    n_leaves: int = field(init=False)

    def __post_init__(self) -> None:
        depth, branching, n_leaves = _check_shape(self.depth, self.branching)
        blocks = np.asarray(self.blocks)
        if blocks.ndim != 1 or blocks.size == 0:
            raise ValueError(f"blocks: expected a non-empty 1-d array (one leaf per item), got shape {blocks.shape}")
        if blocks.dtype.kind == "f" and np.all(np.isfinite(blocks)) and np.all(blocks == np.round(blocks)):
            blocks = blocks.astype(np.int64)
        if blocks.dtype.kind not in "iu":
            raise ValueError(f"blocks: must hold integer leaf indices, got dtype {blocks.dtype}")
        lo, hi = int(blocks.min()), int(blocks.max())
        if lo < 0 or hi >= n_leaves:
            raise ValueError(
                f"blocks: leaf indices must lie in [0, {n_leaves}) for depth {depth} and branching "
                f"{branching}, found values in [{lo}, {hi}]"
            )
        # the narrowest signed type holding n_leaves (int16 for 256 leaves): an eighth of the memory, and a
        # session file opens without widening them (0.3 s at 10^7 items)
        blocks = blocks.astype(np.min_scalar_type(-min(n_leaves, 2**63)), copy=False)
        object.__setattr__(self, "depth", depth)
        object.__setattr__(self, "branching", branching)
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "n_leaves", n_leaves)

    # ------------------------------------------------------------ structure
    @property
    def n_items(self) -> int:
        """Number of items ``N`` in the pool."""
        return int(self.blocks.shape[0])

    @cached_property
    def block_sizes(self) -> np.ndarray:
        """Number of items in each leaf block, shape ``(n_leaves,)`` (zeros for empty leaves).

        Counted once (0.2 s at 10^7 items; read-only): the oracle model asks for it after every batch of labels.
        """
        sizes = np.bincount(self.blocks, minlength=self.n_leaves)
        sizes.flags.writeable = False
        return sizes

    def level_size(self, level: int) -> int:
        """Number of nodes ``branching**level`` at ``level`` (0 = root, ``depth`` = leaves)."""
        level = self._check_level(level)
        return self.branching**level

    def ancestors(self, level: int) -> np.ndarray:
        """Ancestor at ``level`` of every leaf.

        Parameters
        ----------
        level : int
            ``0`` (the root) to ``depth`` (the leaves themselves).

        Returns
        -------
        ndarray of int64, shape (n_leaves,)
            ``k // branching**(depth - level)`` for leaf ``k``: the index of the
            node on the root-to-leaf path at that level, i.e. the nodes ``v``
            with ``delta_v(k) = 1`` in Marchant and Rubinstein, section 5.2.
        """
        level = self._check_level(level)
        return np.arange(self.n_leaves, dtype=np.int64) // self.branching ** (self.depth - level)

    def item_nodes(self, level: int) -> np.ndarray:
        """Node at ``level`` containing each item, shape ``(N,)``."""
        level = self._check_level(level)
        return self.blocks.astype(np.int64) // self.branching ** (self.depth - level)

    def subtree_sums(self, leaf_values: np.ndarray) -> list[np.ndarray]:
        """Sum a per-leaf quantity over the leaves below every node, level by level.

        Parameters
        ----------
        leaf_values : ndarray, shape (..., n_leaves, C) or (n_leaves,)
            Values attached to the leaves; the leaf axis is the second last
            (the last for 1-d input).

        Returns
        -------
        list of ndarray
            ``out[l]`` has shape ``(..., branching**l, C)`` (or ``(branching**l,)``)
            and holds, for node ``j`` of level ``l``, the sum over the leaves
            ``k`` with ``ancestors(l)[k] == j``.  ``out[depth]`` is the input
            itself (not a copy), ``out[0]`` the total.  Computed
            bottom-up by reshape-and-sum, ``O(n_leaves * C)`` in all.
        """
        vals = np.asarray(leaf_values)
        squeeze = vals.ndim == 1
        if squeeze:
            vals = vals[:, None]
        if vals.ndim < 2 or vals.shape[-2] != self.n_leaves:
            raise ValueError(
                f"leaf_values: expected shape (..., {self.n_leaves}, C) or ({self.n_leaves},), got {np.shape(leaf_values)}"
            )
        lead, C, b = vals.shape[:-2], vals.shape[-1], self.branching
        out = [vals]
        cur = vals
        for level in range(self.depth - 1, -1, -1):  # loop over levels only
            cur = np.einsum("...pbc->...pc", cur.reshape(*lead, b**level, b, C))  # faster than .sum(-2)
            out.append(cur)
        out.reverse()
        if squeeze:
            out = [o[..., 0] for o in out]
        return out

    def _check_level(self, level) -> int:
        level = check_int("level", level, 0)
        if level > self.depth:
            raise ValueError(f"level: must lie in [0, {self.depth}] (the tree depth), got {level}")
        return level


# ---------------------------------------------------------------- builders
def score_hierarchy(
    scores: np.ndarray,
    n_blocks: int = 256,
    depth: int = 8,
    branching: int = 2,
    method: Literal["csf", "quantile"] = "csf",
) -> Hierarchy:
    """Hierarchy whose leaves are score strata in score order (Marchant and Rubinstein, section 5.2).

    The pool is stratified on ``scores`` into ``K' <= n_blocks`` non-empty
    blocks ordered by score (:func:`labelwise.partition.make_strata`, CSF rule
    by default), and the blocks are associated with the leaves of a complete
    tree of the given ``depth`` and ``branching`` in breadth-first (left to
    right) order.  ``n_blocks = 2**8, depth = 8, branching = 2`` is "Ours-8"
    and ``n_blocks = K, depth = 1, branching = K`` is "Ours-1", the flat
    partition, of Marchant and Rubinstein, section 5.2.

    When ``K' < branching**depth`` (fewer blocks asked for, or fewer distinct
    scores than blocks), block ``k`` goes to leaf ``floor(k * n_leaves / K')``:
    the map is strictly increasing, so score order is kept, the blocks are
    spread evenly over the tree (neighbouring blocks stay in neighbouring
    subtrees) and the remaining leaves are empty.

    Parameters
    ----------
    scores : ndarray, shape (N,)
        One finite score per item (e.g. ``pool.primary_scores()``).
    n_blocks : int
        Requested number of strata; at most ``branching**depth``.
    depth, branching : int
        Shape of the tree (``depth >= 1``, ``branching >= 2``).
    method : {"csf", "quantile"}
        Stratification rule passed to :func:`~labelwise.partition.make_strata`.

    Returns
    -------
    Hierarchy
        Items of higher score are never in a leaf of lower index.

    Raises
    ------
    ValueError
        Naming ``n_blocks``/``depth``/``branching`` when there are more
        blocks than leaves, or the invalid argument otherwise.

    Examples
    --------
    >>> h = score_hierarchy(np.linspace(0, 1, 64), n_blocks=4, depth=3, branching=2, method="quantile")
    >>> h.block_sizes.tolist()
    [16, 0, 16, 0, 16, 0, 16, 0]
    """
    depth, branching, n_leaves = _check_shape(depth, branching)
    n_blocks = check_int("n_blocks", n_blocks, 1)
    if n_blocks > n_leaves:
        raise ValueError(
            f"n_blocks, depth, branching: n_blocks={n_blocks} blocks do not fit in the "
            f"{n_leaves} leaves of a tree of depth {depth} and branching {branching}; "
            f"ask for at most {n_leaves} blocks or a larger tree"
        )
    strata = make_strata(scores, n_blocks, method)
    k_used = int(strata.sizes.shape[0])
    leaf_of_block = (np.arange(k_used, dtype=np.int64) * n_leaves) // k_used
    return Hierarchy(depth=depth, branching=branching, blocks=leaf_of_block[strata.assignment])


def feature_hierarchy(features: np.ndarray, depth: int = 8, branching: int = 2) -> Hierarchy:
    """k-d tree hierarchy: equal-count splits on each node's highest-variance feature.

    Built level by level from the root: at every level, each node's items are
    sorted on the node's split feature (the feature of largest within-node
    variance, the first one on ties) and cut into ``branching`` children of
    equal counts (sizes differ by at most one); for ``branching = 2`` the cut
    is at the node's median.  Items with equal values are ordered by pool
    position, so the result is deterministic.  All nodes of a level are split
    at once with one sort on the composite key (node, value); nodes with fewer
    than ``branching`` items leave some children empty.  Marchant and
    Rubinstein, section 4, list k-d trees among the ways to build the
    hierarchical partition.

    Parameters
    ----------
    features : ndarray, shape (N, m) or (N,)
        Finite feature vectors.  Features are not rescaled: standardise them
        first if their units differ.
    depth, branching : int
        Shape of the tree.

    Returns
    -------
    Hierarchy

    Notes
    -----
    ``O(depth * N * (m + log N))`` time: per level, within-node means and
    variances by ``bincount`` and one ``lexsort``.

    Examples
    --------
    >>> h = feature_hierarchy(np.arange(8.0), depth=2, branching=2)
    >>> h.blocks.tolist()
    [0, 0, 1, 1, 2, 2, 3, 3]
    """
    depth, branching, _ = _check_shape(depth, branching)
    X = np.asarray(features)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"features: expected a non-empty array of shape (N, m), got shape {np.shape(features)}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"features: must be numeric, got dtype {X.dtype}")
    X = X.astype(np.float64, copy=False)
    if not np.isfinite(X).all():
        raise ValueError("features: contain NaN or infinite values; impute or drop them first")
    N, m = X.shape
    cols = np.arange(m)
    node = np.zeros(N, dtype=np.int64)
    for level in range(depth):  # loop over levels only
        n_nodes = branching**level
        counts = np.bincount(node, minlength=n_nodes)
        safe = np.maximum(counts, 1)[:, None]
        flat = (node[:, None] * m + cols).ravel()  # (node, feature) cell of every entry
        sums = np.bincount(flat, weights=X.ravel(), minlength=n_nodes * m).reshape(n_nodes, m)
        mean = sums / safe
        dev2 = (X - mean[node]) ** 2
        var = np.bincount(flat, weights=dev2.ravel(), minlength=n_nodes * m).reshape(n_nodes, m) / safe
        split = np.argmax(var, axis=1)  # highest-variance feature of each node
        value = X[np.arange(N), split[node]]
        order = np.lexsort((value, node))  # node-major, then value, then position (stable)
        sorted_node = node[order]
        rank = ranks_within(sorted_node)
        child = (rank * branching) // counts[sorted_node]
        new = np.empty(N, dtype=np.int64)
        new[order] = sorted_node * branching + child
        node = new
    return Hierarchy(depth=depth, branching=branching, blocks=node)
