"""The dashboard's plan (pilot runs: minutes on a large pool) never holds annotators' answers: it is computed
beside the session thread, and the dashboard shows it once it is ready."""

from __future__ import annotations

import threading
import time

import pytest

import labelwise.planning
from labelwise.planning import Plan, save_target
from labelwise.serve import planner
from labelwise.session import Session

SLOW = 20.0  # seconds the stand-in plan would take unless released


@pytest.fixture
def slow_plan(monkeypatch):
    """``plan_session`` replaced by one that waits for the returned event (at most :data:`SLOW` seconds)."""
    release = threading.Event()

    def plan_session(session, half_width, measure=None, level=0.95, pilot_seed=0):
        release.wait(SLOW)
        return Plan("importance", 123, 100, 150, session.n_labels)

    monkeypatch.setattr(labelwise.planning, "plan_session", plan_session)
    monkeypatch.setattr(planner, "WAIT_SECONDS", 0.5)
    monkeypatch.setattr(planner, "REPLAN_SECONDS", 0.0)
    return release


def test_answers_go_on_while_the_plan_is_computed(serve_env, post_answer, slow_plan):
    env = serve_env()
    with Session.open(env.path) as s:
        save_target(s, 0.05, 0.9)
    boss, ann = env.auth["boss"], env.auth["ann"]
    dashboards: list[dict] = []
    asking = threading.Thread(target=lambda: dashboards.append(env.client.get("/api/dashboard", headers=boss).json()))
    asking.start()
    time.sleep(0.2)  # the plan has started and waits
    start = time.monotonic()
    items = env.client.get("/api/next?n=2", headers=ann).json()["items"]
    assert all(post_answer(env, "ann", item).status_code == 200 for item in items)
    assert time.monotonic() - start < SLOW / 4  # on the session thread they would wait for the plan
    asking.join()
    assert dashboards[0]["plan"] == {"half_width": 0.05, "level": 0.9, "computing": True}
    slow_plan.set()
    deadline = time.monotonic() + SLOW
    while (plan := env.client.get("/api/dashboard", headers=boss).json()["plan"]).get("labels_so_far") != 2:
        assert time.monotonic() < deadline  # the plan is made again for the labels that came meanwhile
        time.sleep(0.1)
    assert plan == {"half_width": 0.05, "level": 0.9, "design": "importance", "labels_needed": 123, "low": 100,
                    "high": 150, "labels_so_far": 2}


def test_a_plan_that_fails_is_shown_as_its_error(serve_env, monkeypatch):
    def refuse(*args, **kwargs):
        raise ValueError("no pilot runs for this measure")

    monkeypatch.setattr(labelwise.planning, "plan_session", refuse)
    env = serve_env()
    with Session.open(env.path) as s:
        save_target(s, 0.05, 0.9)
    reply = env.client.get("/api/dashboard", headers=env.auth["boss"])
    assert reply.status_code == 200
    assert reply.json()["plan"] == {"half_width": 0.05, "level": 0.9, "error": "no pilot runs for this measure"}


def test_labels_arriving_replan_at_most_once_per_gap(serve_env, answer_items, monkeypatch):
    calls: list[int] = []

    def plan_session(session, half_width, measure=None, level=0.95, pilot_seed=0):
        calls.append(session.n_labels)
        return Plan("importance", 10, 5, 20, session.n_labels)

    monkeypatch.setattr(labelwise.planning, "plan_session", plan_session)
    monkeypatch.setattr(planner, "REPLAN_SECONDS", 3600.0)
    env = serve_env()
    with Session.open(env.path) as s:
        save_target(s, 0.05, 0.9)
    boss = env.auth["boss"]
    for _ in range(3):  # labels change between the dashboard's polls
        assert env.client.get("/api/dashboard", headers=boss).json()["plan"]["labels_so_far"] == 0
        answer_items(env, "ann", 1)
    assert calls == [0]
