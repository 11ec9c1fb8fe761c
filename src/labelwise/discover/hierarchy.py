"""The hierarchy (poset) of a domain described by attribute columns.

Rekatsinas, Deshpande and Parameswaran, "CRUX: Adaptive querying for
efficient crowdsourced data extraction", CIKM 2019, Sec. 2: every node is a
conjunction of attribute values (``colour=red AND size=small``); the root is
the empty conjunction (the whole domain), and the children of a node fix one
more attribute.  Only conjunctions that some item satisfies are nodes.

Everything is kept in arrays: ``item_node[i, m]`` is the node of item ``i``
under the attribute subset ``m`` (a bit mask), so the nodes that contain an
item, or the items of a node, are one indexing operation away.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

__all__ = ["Hierarchy"]

MAX_ATTRIBUTES = 12  # 2^12 attribute subsets per item


@dataclass(frozen=True)
class Hierarchy:
    """Nodes, their attribute subsets and children, and the node of every item under every subset.

    Attributes
    ----------
    attributes : list of str
        The attribute names, in the order of the mask bits.
    values : numpy.ndarray
        ``(n_items, n_attributes)`` attribute values of the items, as text.
    item_node : numpy.ndarray
        ``(n_items, 2**n_attributes)`` node id of each item under each attribute mask.
    node_mask : numpy.ndarray
        Attribute mask of each node (bit ``a`` set: attribute ``a`` is fixed); node 0 is the root.
    node_item : numpy.ndarray
        One item of each node (its values of the node's attributes describe the node).
    child_ptr, child_idx : numpy.ndarray
        Children of node ``v``: ``child_idx[child_ptr[v]:child_ptr[v + 1]]``.
    """

    attributes: list[str]
    values: np.ndarray
    item_node: np.ndarray
    node_mask: np.ndarray
    node_item: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, attributes: list[str]) -> Hierarchy:
        """The hierarchy of the items (rows) of ``frame`` over the columns ``attributes``.

        Raises
        ------
        ValueError
            No attribute, more than 12, a repeated one, or an empty value.
        """
        if not attributes or len(set(attributes)) != len(attributes):
            raise ValueError(f"attributes: give distinct column names, got {attributes}")
        if len(attributes) > MAX_ATTRIBUTES:
            raise ValueError(f"attributes: at most {MAX_ATTRIBUTES} attributes, got {len(attributes)}")
        values = frame[attributes].astype(str).to_numpy()
        empty = frame[attributes].isna().to_numpy()
        if empty.any():
            row, col = np.argwhere(empty)[0]
            raise ValueError(f"data row {row + 1}: attribute {attributes[col]} is empty; give every item a value")
        codes = np.column_stack([pd.factorize(values[:, a])[0] for a in range(len(attributes))]).astype(np.int64)
        n_masks = 1 << len(attributes)
        item_node = np.empty((len(frame), n_masks), dtype=np.int64)
        node_mask, node_item = [], []
        offset = 0
        for mask in range(n_masks):  # one np.unique per attribute subset, vectorized over the items
            cols = [a for a in range(len(attributes)) if mask >> a & 1]
            key = (np.ravel_multi_index(codes[:, cols].T, codes[:, cols].max(axis=0) + 1) if cols
                   else np.zeros(len(frame), dtype=np.int64))
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            item_node[:, mask] = offset + inverse
            node_mask.append(np.full(first.size, mask))
            node_item.append(first)
            offset += first.size
        node_mask_arr = np.concatenate(node_mask)
        parents, children = [], []
        for mask in range(n_masks):
            for a in range(len(attributes)):
                if not mask >> a & 1:
                    pairs = np.unique(item_node[:, mask] * offset + item_node[:, mask | 1 << a])
                    parents.append(pairs // offset)
                    children.append(pairs % offset)
        parent = np.concatenate(parents) if parents else np.zeros(0, dtype=np.int64)
        child = np.concatenate(children) if children else np.zeros(0, dtype=np.int64)
        order = np.lexsort((child, parent))
        child_ptr = np.searchsorted(parent[order], np.arange(offset + 1))
        return cls(list(attributes), values, item_node, node_mask_arr, np.concatenate(node_item), child_ptr,
                   child[order])

    @property
    def n_nodes(self) -> int:
        return int(self.node_mask.size)

    @property
    def n_items(self) -> int:
        return int(self.item_node.shape[0])

    def depth(self) -> np.ndarray:
        """Number of attributes fixed at each node (0 at the root)."""
        return np.array([m.bit_count() for m in range(self.item_node.shape[1])])[self.node_mask]

    def children(self, node: int) -> np.ndarray:
        """The direct descendants of ``node``."""
        return self.child_idx[self.child_ptr[node]:self.child_ptr[node + 1]]

    def members(self, node: int, items: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask over ``items`` (default: all items) of those in ``node``."""
        column = self.item_node[:, self.node_mask[node]]
        return (column if items is None else column[items]) == node

    def below(self, node: int, items: np.ndarray) -> np.ndarray:
        """Nodes at or below ``node`` that contain ``items`` (all of them in ``node``): ``(len(items), n)``."""
        mask = int(self.node_mask[node])
        supersets = np.array([m for m in range(self.item_node.shape[1]) if m & mask == mask])
        return self.item_node[np.ix_(items, supersets)]

    def sum_above(self, nodes: np.ndarray, values: np.ndarray, strict: bool = False) -> np.ndarray:
        """Per node of ``nodes``, the sum of ``values`` (one per node) over the nodes at (unless ``strict``) or
        above it: those whose conjunction is part of its own."""
        masks = np.arange(self.item_node.shape[1])
        above = self.item_node[self.node_item[nodes]]  # the node's ancestors, any mask
        own = self.node_mask[nodes][:, None]
        within = ((masks & own) == masks) & ((masks != own) | (not strict))  # masks that are subsets of its own
        return np.sum(values[above] * within, axis=1)

    def describe(self, node: int) -> dict[str, str]:
        """The conjunction of ``node`` as ``{attribute: value}`` (empty for the root)."""
        mask = int(self.node_mask[node])
        row = self.values[self.node_item[node]]
        return {name: str(row[a]) for a, name in enumerate(self.attributes) if mask >> a & 1}

    def raised_to_children(self, values: np.ndarray) -> np.ndarray:
        """Each node's value, or the largest sum of its children's along one attribute if that is larger.

        The children of a node along one attribute split its items, so a count over disjoint items (positives
        not found yet) of a node equals that sum.  Raised bottom-up: a child's value is raised before it is summed.

        Parameters
        ----------
        values : numpy.ndarray
            One value per node.
        """
        raised = np.asarray(values, dtype=float).copy()
        for parent, child, group, start in self._splits:
            sums = np.bincount(group, weights=raised[child])  # per (parent, attribute)
            raised[parent] = np.maximum(raised[parent], np.maximum.reduceat(sums, start))
        return raised

    @cached_property
    def _splits(self) -> list[tuple[np.ndarray, ...]]:
        """Per depth, deepest first: the parents with children, every child, its (parent, attribute) group, and
        where each parent's groups start."""
        parent = np.repeat(np.arange(self.n_nodes), np.diff(self.child_ptr))
        attribute = np.log2(self.node_mask[self.child_idx] ^ self.node_mask[parent]).astype(np.int64)
        depth = self.depth()[parent]
        levels = []
        for d in range(len(self.attributes) - 1, -1, -1):
            at = depth == d
            keys, group = np.unique(parent[at] * len(self.attributes) + attribute[at], return_inverse=True)
            parents, start = np.unique(keys // len(self.attributes), return_index=True)
            levels.append((parents, self.child_idx[at], group, start))
        return levels
