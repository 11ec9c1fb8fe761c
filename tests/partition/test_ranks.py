"""The rank of every entry within its group (labelwise.partition.ranks)."""

import itertools

import numpy as np

from labelwise.partition.ranks import ranks_within


def test_ranks_count_the_earlier_entries_of_the_same_group_for_every_short_sequence():
    # every sequence of up to 5 entries over 3 groups, against the definition counted entry by entry
    for n in range(6):
        for groups in itertools.product(range(3), repeat=n):
            expected = [sum(g == groups[i] for g in groups[:i]) for i in range(n)]
            assert ranks_within(np.array(groups, dtype=np.int64)).tolist() == expected, groups
