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


def test_empty_attribute_value_is_an_error():
    frame = pd.DataFrame({"a": ["x", None]})
    with pytest.raises(ValueError, match="line 3: attribute a is empty"):
        Hierarchy.from_frame(frame, ["a"])
