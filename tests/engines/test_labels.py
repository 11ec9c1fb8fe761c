"""Checking the labels given to an engine session (labelwise.engines.labels)."""

import numpy as np
import pytest

from labelwise.engines.labels import new_labels
from labelwise.ledger import LabelError

HANDED = np.array([7, 3, 9, 5])
STORED_IDS, STORED = np.array([3]), np.array([1])


def test_only_the_labels_not_stored_yet_are_new_in_increasing_id():
    ids, labels = new_labels(np.array(["9", "3", "7", "9"]), np.array(["0", "1", "1", "0"]), HANDED, STORED_IDS,
                             STORED)
    assert ids.tolist() == [7, 9] and labels.tolist() == [1, 0]


@pytest.mark.parametrize(("item_ids", "labels", "message", "index"), [
    (["7", "x"], ["1", "0"], "id 'x' is not an integer id", 1),
    (["7", "9.5"], ["1", "0"], "id '9.5' is not an integer id", 1),  # not item 9
    (["7", "9"], ["1", "2"], "label 2 of item 9 is not 0 or 1", 1),
    (["9", "7", "7"], ["1", "1", "0"], "item 7 has two different labels", 1),
    (["7", "4"], ["1", "0"], "item 4 was not handed out", 1),
    (["7", "3"], ["1", "0"], "item 3 already has label 1", 1),
])
def test_bad_labels_name_the_first_culprit_and_its_place(item_ids, labels, message, index):
    with pytest.raises(LabelError, match=message) as err:
        new_labels(np.array(item_ids, dtype=object), np.array(labels, dtype=object), HANDED, STORED_IDS, STORED)
    assert err.value.index == index  # the CLI names the data row of the file (labelwise label)
