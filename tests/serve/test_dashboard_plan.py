"""The dashboard shows the plan toward the half-width `labelwise plan SESSION` kept."""

from __future__ import annotations

from labelwise.planning import save_target
from labelwise.session import Session


def test_the_dashboard_shows_the_kept_plan(serve_env):
    env = serve_env()
    boss = env.auth["boss"]
    assert env.client.get("/api/dashboard", headers=boss).json()["plan"] is None
    with Session.open(env.path) as s:
        save_target(s, 0.05, 0.9)
        expected = s.labels_needed(0.05, level=0.9).to_dict()
    plan = env.client.get("/api/dashboard", headers=boss).json()["plan"]
    assert plan == {"half_width": 0.05, "level": 0.9, **expected}
