"""What a session file holds, read without the design's set-up: status, the latest estimate, the export.

After every write the command line stores the session's estimate with the
file's revision (:func:`save_estimate`); ``labelwise estimate`` and
``labelwise status`` print it while the revision is current
(:func:`cached_estimate`), so they read a few rows, not the pool.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from .estimators.result import Estimate
from .store import Store
from .store.answers import answer_rows

if TYPE_CHECKING:  # pandas and the session (designs, scipy) are not needed to read a stored estimate
    import pandas as pd

    from .session import Session

__all__ = ["INTERVAL_RULES", "LOSS_RULES", "cached_estimate", "estimate_record", "export_frame", "loss_rules_note",
           "save_estimate", "session_status"]

_ARRAYS = ("value", "cov", "defined", "lower_bound", "upper_bound", "R")
#: The rules behind a stored interval: an estimate stored under other rules is computed again.  2: the Beta
#: interval on an effective count (:func:`~labelwise.estimators.intervals.beta_interval`); 3: a boundary
#: estimate with a zero variance counts the draws that inform it (:func:`~labelwise.estimators.component_counts`);
#: 4: a ratio estimated 0 with no hit labeled reaches the hits its unlabeled items may hold
#: (:func:`~labelwise.estimators.with_zero_hits`); 5: online-poisson's interval before any positive is labeled
#: reaches the positives the labels cannot rule out (:mod:`~labelwise.estimators.unseen_positives`), the basis
#: names the calibration, and ``brier`` sums over every class of a multi-class pool; 6: a measure whose loss totals
#: are all known but one takes the image of that total's interval (:func:`~labelwise.estimators.segment.with_segment`).
INTERVAL_RULES = 6
#: The rules behind a session's losses, recorded in its file at creation (``loss_rules`` in its config; a file
#: without it was written before).  1: ``brier`` on a pool of more than two classes sums ``(p_c - 1{y=c})^2`` over
#: every class, where it took class 1 against the rest, ``2 (p_1 - 1{y=1})^2`` (:func:`loss_rules_note`).
LOSS_RULES = 1


def save_estimate(session: Session) -> Estimate:
    """The session's estimate at its level, stored in its file with the file's revision."""
    est = session.estimate()
    if session.store is not None:
        record = {"revision": session.store.revision(), "measure": session.measure.name, "names": list(est.names),
                  "n_labels": est.n_labels, "n_draws": est.n_draws, "level": est.level, "basis": est.basis,
                  # passive's interval is its posterior's quantiles: keep the draws, or the interval changes
                  "posterior": None if est.posterior is None else est.posterior.tolist(),
                  # the printed interval, so that reading the estimate back needs no scipy
                  "interval": [bound.tolist() for bound in est.interval()], "interval_rules": INTERVAL_RULES,
                  **{k: getattr(est, k).tolist() for k in _ARRAYS}}
        session.store.put_cache("estimate", json.dumps(record).encode())
    return est


def estimate_record(est: Estimate, measure_name: str, n_excluded: int) -> dict:
    """The estimate as ``labelwise estimate --json`` prints it (and ``labelwise serve``'s ``/api/estimate``)."""
    return {"measure": measure_name, "excluded": n_excluded, **est.to_dict()}


def cached_estimate(store: Store, level: float | None = None) -> tuple[Estimate, str] | None:
    """The stored estimate and its measure's name if the file has not changed since (and ``level`` is its
    level, and its interval follows :data:`INTERVAL_RULES`), else ``None``."""
    raw = store.cached("estimate")
    if raw is None:
        return None
    record = json.loads(raw)
    if (record["revision"] != store.revision() or (level is not None and level != record["level"])
            or record.get("interval_rules") != INTERVAL_RULES):
        return None
    arrays = {k: np.asarray(record[k], dtype=bool if k == "defined" else float) for k in _ARRAYS}
    posterior = record.get("posterior")
    est = Estimate(names=tuple(record["names"]), n_labels=record["n_labels"], n_draws=record["n_draws"],
                   level=record["level"], basis=record.get("basis", ""),
                   posterior=None if posterior is None else np.asarray(posterior, dtype=float), **arrays)
    if record.get("interval") is not None:  # files written before it was stored have none
        est = est.with_stored_interval(*record["interval"])
    return est, record["measure"]


def loss_rules_note(store: Store, measure_name: str) -> str | None:
    """The warning that ``measure_name`` (a session's, or ``estimate -m``'s) is not what it was when the file was
    written (:data:`LOSS_RULES`), else ``None``.

    The labels and the estimate stay valid: only ``brier`` on a pool of more than two classes measures something
    else than a labelwise older than the file's rules printed for it, so the estimates are said not to be
    comparable.
    """
    if ("brier" not in measure_name.split("+") or store.pool_meta()["n_classes"] <= 2
            or store.config().get("loss_rules", 0) >= 1):
        return None
    return ("warning: this session file predates brier's sum over every class of a pool of more than two classes: "
            "the labelwise that wrote it may have scored class 1 against the rest, 2 (p_1 - 1{y=1})^2, so the brier "
            "it printed is not comparable with this one, sum_c (p_c - 1{y=c})^2")


def session_status(store: Store) -> dict:
    """Pool, design, labels, pending, deferred and excluded items, corrections and file health, from a few rows.

    ``outputs`` lists the pool's kinds of system output (``preds``, ``probs``, ``scores``).

    ``pending`` counts items waiting for a label (draws under a stochastic oracle).
    """
    config, pool_meta = store.config(), store.pool_meta()
    stochastic = (config.get("oracle") or config["design"].get("oracle")) == "stochastic"
    q = store.conn.execute
    out = "item NOT IN (SELECT item FROM excluded)"
    if stochastic:
        pending = q(f"SELECT COUNT(*) FROM draws WHERE seq - 1 NOT IN (SELECT draw FROM labels) AND {out}").fetchone()[0]
        labels = q("SELECT COUNT(*) FROM labels").fetchone()[0]
    else:
        pending = q(f"SELECT COUNT(DISTINCT item) FROM draws WHERE item NOT IN (SELECT item FROM labels) AND {out}"
                    ).fetchone()[0]
        labels = q("SELECT COUNT(DISTINCT item) FROM labels").fetchone()[0]
    deferred = q("SELECT COUNT(DISTINCT item) FROM deferred WHERE item NOT IN (SELECT item FROM labels) "
                 f"AND {out}").fetchone()[0]
    counts = store.counts()
    n_items = pool_meta.get("n_items")
    outputs = [name for (name,) in q("SELECT name FROM pool_arrays WHERE name IN ('preds', 'scores', 'probs') "
                                     "ORDER BY name")]
    return {
        "session": str(store.path), "pool": pool_meta["name"],
        "n_items": int(n_items) if n_items is not None else int(store.load_item_ids().size),
        "n_classes": int(pool_meta["n_classes"]), "label_names": pool_meta.get("label_names") or [],
        "outputs": outputs,
        "systems": pool_meta["system_names"], "measure": config["measure"], "design": config["design"],
        "budget": config.get("budget"),
        "oracle": "stochastic" if stochastic else "deterministic", "labels": int(labels), "pending": int(pending),
        "deferred": int(deferred), "relabels": counts["relabels"], "excluded": counts["excluded"],
        "draws": int(q("SELECT COALESCE(SUM(count), 0) FROM draws").fetchone()[0]), "health": store.quick_check(),
    }


def export_frame(store: Store) -> pd.DataFrame:
    """Every label, correction and exclusion, oldest first: item id as given, label, draw, weight, time, source.

    ``event`` is ``label`` for an annotator's answer, ``relabel`` for a
    correction (an item's latest label is the one its estimates use) and
    ``exclude`` for an item excluded as not judgeable (no label; the draw is
    the item's first); under a stochastic oracle ``answer`` for a further
    answer to a labeled draw and ``retract`` when it was taken back.
    """
    import pandas as pd

    columns = ["draw", "item", "label", "weight", "created", "source", "event", "seq", "kind"]
    rows = pd.DataFrame(store.journal_rows() + answer_rows(store), columns=columns)
    rows = rows.sort_values(["created", "kind", "seq"], kind="stable", ignore_index=True)
    ids = store.load_item_ids()
    return pd.DataFrame({
        "item_id": ids[rows["item"].to_numpy(dtype=np.int64)],
        "label": rows["label"].astype("Int64").array,  # NumPy would make the labels floats once one is missing
        "draw": rows["draw"].to_numpy(dtype=np.int64),
        "weight": rows["weight"].to_numpy(dtype=float),
        "time": pd.to_datetime(rows["created"].to_numpy(dtype=float), unit="s", utc=True).strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ") if len(rows) else pd.Series([], dtype=str),
        "source": rows["source"].astype(str).to_numpy(),
        "event": rows["event"].astype(str).to_numpy(),
    })
