"""Resumable on-demand session answered through the API (Chaganty et al., EMNLP 2017, Sec. 3.3).

The annotator is the truth table of a small generated corpus.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from labelwise.ondemand import OnDemandConfig, OnDemandSession, Process
from labelwise.ondemand.corpus import SystemSpec, make_kbp_corpus
from labelwise.ondemand.simulate import build_problem, final_estimates, true_scores

SPECS = [SystemSpec("a", threshold=0.0, gap=1.0, noise=0.5), SystemSpec("a2", kind="copy", source=0, change=0.05)]


@pytest.fixture(scope="module")
def corpus():
    c = make_kbp_corpus(n_docs=60, systems=SPECS, seed=1)
    c["truth"] = dict(zip(c["instance_id"].tolist(), c["correct"].tolist(), strict=True))
    c["doc_of"] = dict(zip(c["instance_id"].tolist(), c["doc_id"].tolist(), strict=True))
    return c


def submit(session, corpus, i):
    name, inst = corpus["systems"][i]
    return session.submit(name, inst, [corpus["doc_of"][x] for x in inst])


def answer_all(session, corpus):
    """Answer every pending verification and document from the truth table until nothing waits."""
    for _ in range(100):
        pend = session.pending()
        if not pend["verifications"] and not pend["documents"]:
            return
        if pend["verifications"]:
            session.add_labels(pend["verifications"], [int(corpus["truth"][x]) for x in pend["verifications"]])
        for d in pend["documents"]:
            session.add_found(d, [x for x in corpus["instance_id"].tolist()
                                  if str(corpus["doc_of"][x]) == d and corpus["truth"][x]])
    raise AssertionError("the session kept asking")


def run(tmp_path, corpus, config, name="s.db"):
    session = OnDemandSession.create(tmp_path / name, np.arange(corpus["n_docs"]), config, seed=3)
    plans = []
    for i in range(len(corpus["systems"])):
        plans.append(submit(session, corpus, i))
        answer_all(session, corpus)
    return session, plans


def test_report_equals_process_on_same_draws_and_resumes(tmp_path, corpus):
    config = OnDemandConfig(half_width=0.1, initial_documents=5)
    session, plans = run(tmp_path, corpus, config)
    report = session.report()
    assert report["pending_verifications"] == 0 and report["pending_documents"] == 0
    assert all(s["status"] == "estimated" for s in report["systems"])
    # the same draws and documents replayed through Process against the truth table
    state = session._read()
    problem = build_problem(corpus["instance_id"], corpus["doc_id"], corpus["correct"], corpus["systems"],
                            n_docs=corpus["n_docs"])
    pos = {x: k for k, x in enumerate(corpus["instance_id"].tolist())}
    proc = Process(problem, config, np.random.default_rng(0), fixed_labels=np.array([d.size for d in state.draws]),
                   fixed_documents=int(state.doc_done.size))
    proc.perm = [np.array([pos[state.instance_ids[c]] for c in d]) for d in state.draws]
    done_docs = np.array([int(state.doc_ids[c]) for c in state.doc_done])
    proc.doc_perm = np.concatenate([done_docs, np.setdiff1d(np.arange(corpus["n_docs"]), done_docs)])
    for _ in range(problem.m):
        proc.arrive()
    expected = final_estimates(proc, config.level)
    for i, row in enumerate(report["systems"]):
        for k in ("precision", "recall", "f1"):
            assert row[k] == pytest.approx(expected[k][i], rel=1e-9)
            assert row[f"{k}_ci"] == pytest.approx([expected[f"{k}_lo"][i], expected[f"{k}_hi"][i]], rel=1e-9)
    assert report["labels"] == proc.ledger.labels and report["documents"] == proc.ledger.documents
    assert report["dollars"] == pytest.approx(config.prices.dollars(report["labels"], report["documents"]))
    assert report["exhaustive_dollars"] == config.prices.exhaustive(corpus["n_docs"])
    # (2) resumable: a fresh open of the file gives the identical report
    assert OnDemandSession.open(tmp_path / "s.db").report() == report
    # (4) the overlapping second system needs fewer new verifications than the first
    assert plans[1]["planned_verifications"] < plans[0]["planned_verifications"]
    assert plans[0]["reason"]


def test_everything_verified_gives_true_scores(tmp_path, corpus):
    config = OnDemandConfig(half_width=1e-4, initial_documents=corpus["n_docs"])
    session, _ = run(tmp_path, corpus, config)
    report = session.report()
    problem = build_problem(corpus["instance_id"], corpus["doc_id"], corpus["correct"], corpus["systems"],
                            n_docs=corpus["n_docs"])
    truth = true_scores(problem)
    assert report["documents"] == corpus["n_docs"]
    for i, row in enumerate(report["systems"]):
        assert row["draws"] == len(corpus["systems"][i][1])
        assert row["precision"] == pytest.approx(truth["precision"][i], abs=1e-12)
        assert row["recall"] == pytest.approx(truth["recall"][i], abs=1e-12)


def test_bad_input_raises_and_leaves_the_file_unchanged(tmp_path, corpus):
    path = tmp_path / "bad.db"
    session = OnDemandSession.create(path, np.arange(corpus["n_docs"]), OnDemandConfig(half_width=0.1), seed=3)
    submit(session, corpus, 0)
    pend = session.pending()
    first = pend["verifications"][0]
    session.add_labels([first], [int(corpus["truth"][first])])
    before = path.read_bytes()
    second = pend["verifications"][1]
    not_drawn = next(x for x in corpus["instance_id"].tolist() if x not in pend["verifications"])
    with pytest.raises(ValueError, match=repr(first)):  # already answered
        session.add_labels([second, first], [1, 1])
    with pytest.raises(ValueError, match="not waiting"):
        session.add_labels([not_drawn], [0])
    with pytest.raises(ValueError, match="not 0 or 1"):
        session.add_labels([second], [2])
    with pytest.raises(ValueError, match="not waiting for annotation"):
        session.add_found("no-such-doc", [])
    with pytest.raises(ValueError, match="already submitted"):
        submit(session, corpus, 0)
    assert path.read_bytes() == before
    assert session.pending()["verifications"] == pend["verifications"][1:]
    with pytest.raises(ValueError, match="exists"):
        OnDemandSession.create(path, np.arange(3))


def test_a_file_written_before_the_normalized_default_keeps_the_paper_estimator():
    from labelwise.ondemand.store import config_from_json, config_to_json

    assert config_from_json(config_to_json(OnDemandConfig())).normalized is True
    old = json.loads(config_to_json(OnDemandConfig()))
    del old["normalized"]  # a session file written before the field existed
    assert config_from_json(json.dumps(old)).normalized is False


def test_a_file_written_before_the_combined_recall_keeps_the_product():
    from labelwise.ondemand.store import config_from_json, config_to_json

    assert config_from_json(config_to_json(OnDemandConfig())).combined_recall is True
    old = json.loads(config_to_json(OnDemandConfig()))
    del old["combined_recall"], old["normalized"]  # a session file written before either field existed
    config = config_from_json(json.dumps(old))
    assert config.combined_recall is False and config.normalized is False


def test_a_file_written_before_the_post_stratified_default_keeps_one_ratio():
    from labelwise.ondemand.store import config_from_json, config_to_json

    assert config_from_json(config_to_json(OnDemandConfig())).post_stratified is True
    old = json.loads(config_to_json(OnDemandConfig()))
    del old["post_stratified"]  # a session file written before the field existed
    assert config_from_json(json.dumps(old)).post_stratified is False
