"""The serve dashboard shows the kept plan; the `--until-half-width` stop rule ends the hand-out."""

from __future__ import annotations

import pytest

from labelwise.planning import save_target
from labelwise.serve.app import Server
from labelwise.session import Session

from .conftest import make_session


def test_the_dashboard_shows_the_kept_plan(serve_env):
    env = serve_env()
    boss = env.auth["boss"]
    assert env.client.get("/api/dashboard", headers=boss).json()["plan"] is None
    with Session.open(env.path) as s:
        save_target(s, 0.05, 0.9)
        expected = s.labels_needed(0.05, level=0.9).to_dict()
    plan = env.client.get("/api/dashboard", headers=boss).json()["plan"]
    assert plan == {"half_width": 0.05, "level": 0.9, **expected}


@pytest.mark.parametrize(("half_width", "more"), [(0.49, 0), (0.48, 4)])
def test_the_stop_rule_hands_out_no_new_items_once_the_anytime_interval_is_narrow(serve_env, answer_items,
                                                                                  half_width, more):
    # 8 labels in one batch only calibrate the bets: the anytime interval is the F1 values a labeling of the
    # 292 unlabeled items allows (labelwise.anytime.possible), [0.020, 0.991], half-width 0.485
    env = serve_env(until_half_width=half_width)
    assert len(answer_items(env, "ann", 8)) == 8
    assert len(env.client.get("/api/next?n=4", headers=env.auth["ann"]).json()["items"]) == more


def test_the_stop_rule_refuses_a_design_it_cannot_serve(tmp_path):
    path, _ = make_session(tmp_path / "p.lw", design="online-poisson")
    with pytest.raises(ValueError, match="--design passive"):
        Server(path, until_half_width=0.05)
