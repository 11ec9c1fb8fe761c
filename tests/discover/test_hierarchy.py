"""The hierarchy of attribute conjunctions, on a hand-made domain."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelwise.discover.hierarchy import Hierarchy


@pytest.fixture
def domain() -> Hierarchy:
    frame = pd.DataFrame({"colour": ["red", "red", "blue", "blue", "red"],
                          "size": ["s", "l", "s", "s", "s"]})
    return Hierarchy.from_frame(frame, ["colour", "size"])


def test_nodes_are_the_conjunctions_some_item_satisfies(domain):
    # root; colour red/blue; size s/l; (red,s), (red,l), (blue,s)
    assert domain.n_nodes == 1 + 2 + 2 + 3
    described = sorted(tuple(sorted(domain.describe(v).items())) for v in range(domain.n_nodes))
    assert ((("colour", "blue"), ("size", "l")) not in described) and ((("colour", "red"), ("size", "l"))
                                                                       in described)
    assert domain.describe(0) == {}
    assert list(domain.depth()) == [0, 1, 1, 1, 1, 2, 2, 2]


def test_children_fix_one_more_attribute(domain):
    assert sorted(domain.children(0)) == [1, 2, 3, 4]
    red = domain.item_node[0, 0b01]
    kids = domain.children(red)
    assert sorted(tuple(domain.describe(v).items()) for v in kids) == [
        (("colour", "red"), ("size", "l")), (("colour", "red"), ("size", "s"))]
    assert domain.children(domain.item_node[0, 0b11]).size == 0


def test_members_and_the_nodes_below(domain):
    red = domain.item_node[0, 0b01]
    assert list(domain.members(red)) == [True, True, False, False, True]
    assert list(domain.members(red, np.array([2, 4]))) == [False, True]
    below = domain.below(red, np.array([0, 1]))
    assert below.shape == (2, 2)  # the node itself and its (colour, size) child
    assert np.all(below[:, 0] == red)
    assert domain.describe(below[1, 1]) == {"colour": "red", "size": "l"}


def test_raised_to_children_by_hand(domain):
    """Leaves (red,s) 2, (red,l) 1, (blue,s) 3: colour red 3 and blue 3, size s 5 and l 1 (raised bottom-up), the
    root max(3 + 3, 5 + 1) = 6; a node whose own value is larger keeps it, and its parent sums the larger one."""
    values = np.zeros(domain.n_nodes)
    red_s, red_l, blue_s = domain.item_node[[0, 1, 2], 0b11]
    values[[red_s, red_l, blue_s]] = 2.0, 1.0, 3.0
    red, blue = domain.item_node[[0, 2], 0b01]
    small, large = domain.item_node[[0, 1], 0b10]
    raised = domain.raised_to_children(values)
    assert raised[[red, blue, small, large, 0]] == pytest.approx([3.0, 3.0, 5.0, 1.0, 6.0])
    values[large] = 4.0  # more than its one child holds
    raised = domain.raised_to_children(values)
    assert raised[[large, 0]] == pytest.approx([4.0, 9.0]) and raised[red_s] == 2.0


def test_empty_attribute_value_is_an_error():
    frame = pd.DataFrame({"a": ["x", None]})
    with pytest.raises(ValueError, match="data row 2: attribute a is empty"):
        Hierarchy.from_frame(frame, ["a"])
