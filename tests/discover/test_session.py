"""The discovery session file: the loop, resuming, and bad input leaving the file untouched."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelwise.discover import CostModel, DiscoverySession, Hierarchy, QueryPolicy
from labelwise.discover.crowd import SimulatedCrowd


def items(n=60, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"item_id": [f"it{i}" for i in range(n)], "a": rng.choice(["u", "v", "w"], n),
                         "b": rng.choice(["p", "q"], n)})


def test_session_replays_exactly_the_policy_run(tmp_path):
    """Answers given through the file lead to the same queries as the policy run in memory."""
    frame = items()
    positive = np.arange(60) % 3 == 0
    costs = CostModel()
    session = DiscoverySession.create(tmp_path / "d.lw", frame, ["a", "b"], budget=25.0, costs=costs, seed=4)
    hierarchy = Hierarchy.from_frame(frame, ["a", "b"])
    crowd = SimulatedCrowd(hierarchy, positive, np.ones(60))
    policy = QueryPolicy(hierarchy, costs, "crux", seed=4)
    rng = np.random.default_rng(9)
    for _ in range(6):
        shown = session.next_query()
        assert session.next_query() == shown  # the pending query again
        query = policy.choose(25.0 - policy.spent, np.random.default_rng([4, policy.round, 1]))
        assert shown["node"] == hierarchy.describe(query.node) and shown["k"] == query.k
        assert shown["exclude"] == [f"it{i}" for i in query.exclude]
        answer = crowd.answer(query, rng)
        policy.record(query, answer)
        done = session.answer([f"it{i}" for i in answer])
        assert done["found"] == int(policy.found.sum())
    report = session.report()
    assert report["found"] == int(policy.found.sum()) and report["spent"] == pytest.approx(policy.spent)
    assert report["remaining_estimate"]["value"] == pytest.approx(policy.remaining()["remaining"])
    assert sum(row["queries"] for row in report["nodes"]) == 6
    assert session.found_ids() == [f"it{i}" for i in np.flatnonzero(policy.found)]


@pytest.mark.parametrize(("answer", "message"), [
    (["nope"], "'nope' is not in the session's items"),
    (["it0", "it0"], "'it0' is given twice"),
])
def test_bad_answers_leave_the_file_untouched(tmp_path, answer, message):
    path = tmp_path / "d.lw"
    session = DiscoverySession.create(path, items(), ["a", "b"], budget=25.0)
    session.next_query()
    before = path.read_bytes()
    with pytest.raises(ValueError, match=message):
        session.answer(answer)
    assert path.read_bytes() == before


def test_answers_must_lie_in_the_node_and_not_be_excluded(tmp_path):
    frame = items()
    costs = CostModel(k=(5,), l=(0,), per_level=0.0)
    session = DiscoverySession.create(tmp_path / "d.lw", frame, ["a", "b"], budget=100.0, costs=costs)
    for _ in range(2):  # two root queries, the second recapturing the first's five answers
        assert not session.next_query()["node"]
        session.answer([f"it{i}" for i in range(5)])
    query = session.next_query()
    assert query["node"], "with free levels and the root's answers recaptured, the policy goes one level down"
    attr, value = next(iter(query["node"].items()))
    outside = frame.loc[frame[attr] != value, "item_id"].iloc[0]
    with pytest.raises(ValueError, match="is not in the queried node"):
        session.answer([outside])
    with pytest.raises(ValueError, match="for a query of up to 5"):
        session.answer([f"it{i}" for i in range(60) if all(frame.loc[i, a] == v for a, v in query["node"].items())
                        ][:6])


def test_the_budget_ends_the_queries(tmp_path):
    session = DiscoverySession.create(tmp_path / "d.lw", items(), ["a", "b"], budget=1.6,
                                      costs=CostModel(k=(5,), l=(0,)))
    session.next_query()  # costs 1.5
    session.answer([])
    with pytest.raises(ValueError, match="no query fits in the budget left"):
        session.next_query()


def test_create_refuses_repeated_ids_and_existing_files(tmp_path):
    frame = items()
    frame.loc[3, "item_id"] = "it0"
    with pytest.raises(ValueError, match="data row 4: item 'it0' is listed twice"):
        DiscoverySession.create(tmp_path / "d.lw", frame, ["a"], budget=5.0)
    assert not (tmp_path / "d.lw").exists()
    DiscoverySession.create(tmp_path / "d.lw", items(), ["a"], budget=5.0)
    with pytest.raises(ValueError, match="exists"):
        DiscoverySession.create(tmp_path / "d.lw", items(), ["a"], budget=5.0)
