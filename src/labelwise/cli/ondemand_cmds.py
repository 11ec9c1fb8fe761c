"""``labelwise ondemand ...``: on-demand evaluation of systems submitted one after another.

``init``, ``submit``, ``next``, ``label``, ``annotate`` and ``report`` run
an evaluation answered by people (:class:`~labelwise.ondemand.OnDemandSession`,
one file, every step its own process); ``simulate`` runs it against a truth
table.

The method is that of Chaganty, Paranjape, Liang and Manning, "Importance
sampling for unbiased on-demand evaluation of knowledge base population",
EMNLP 2017 (:mod:`labelwise.ondemand`).  Its ``--json`` output is a stable
contract, like ``labelwise simulate``'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from .options import UserError, check_level, session_path, user_errors
from .render import print_json

__all__ = ["ondemand"]

ondemand = typer.Typer(name="ondemand", no_args_is_help=True,
                       help="On-demand evaluation of systems submitted one after another (precision, recall, "
                            "F1 with label reuse across systems).")


def _columns(path: Path, kind: str, wanted: tuple[str, ...], optional: tuple[str, ...] = (),
             task: str | None = None, may_be_empty: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """The ``wanted`` (and present ``optional``) columns of a CSV/TSV/JSON-lines/Parquet file (the errors call it
    ``kind``), ids as text without surrounding spaces (as a pool's).

    With ``task``, a file with a ``task`` column (as ``next`` writes) keeps only that task's rows.
    An empty cell is an error outside the columns ``may_be_empty``, and so is a ``score`` that is not a finite
    number.
    """
    from ..pool.cells import check_cells
    from ..pool.ids import strip_ids
    from ..pool.table import read_table

    frame = read_table(path, id_col="instance_id", kind=kind)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    if task is not None and "task" in frame.columns:
        frame = frame[frame["task"].astype(str).str.strip() == task]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise UserError(f"{path}: no column {', '.join(missing)}; the file needs columns {', '.join(wanted)}"
                        + (f" (and optionally {', '.join(optional)})" if optional else ""))
    for column in wanted + optional:
        if column in frame.columns and column not in may_be_empty and frame[column].isna().any():
            row = int(frame.index[frame[column].isna().to_numpy()][0])
            raise UserError(f"{path}, data row {row}: column {column} is empty; fill it or drop the row")
    if "score" in frame.columns and "score" in wanted + optional:  # a system's scores: finite numbers
        check_cells(frame, {"score": ["score"]})
    frame = frame.assign(**{c: strip_ids(frame[c]) for c in ("instance_id", "doc_id") if c in frame.columns})
    return {c: frame[c].to_numpy() for c in wanted + optional if c in frame.columns}


EvalArg = Annotated[Path, typer.Argument(help="On-demand evaluation file (from `labelwise ondemand init`).")]
HalfWidthOpt = Annotated[float, typer.Option("--half-width", help="Target half-width of the precision and recall "
                                             "intervals.")]
LevelOpt = Annotated[float, typer.Option("--level", help="Interval level.")]
VerificationPriceOpt = Annotated[float, typer.Option("--verification-price", help="Dollars per verified instance.")]
DocumentPriceOpt = Annotated[float, typer.Option("--document-price", help="Dollars per exhaustively annotated "
                                                 "document.")]


def _config(half_width: float, level: float, verification_price: float, document_price: float,
            scheme: str = "overlap", control_variate: bool = False, composite: bool = False,
            normalized: bool | None = None, combined_recall: bool = True):
    """The :class:`~labelwise.ondemand.OnDemandConfig` of the options, each checked; ``normalized`` None: the
    self-normalized estimator unless a control variate or the composite adjusts the unnormalized one."""
    from ..ondemand import OnDemandConfig
    from ..ondemand.costs import Prices

    check_level(level)
    if half_width <= 0:
        raise UserError(f"--half-width: give a positive number, got {half_width:g}")
    if scheme not in ("overlap", "size", "uniform"):
        raise UserError(f"--scheme: {scheme!r} is not one of overlap, size, uniform")
    if verification_price < 0 or document_price < 0:
        raise UserError("--verification-price and --document-price: give prices of 0 or more")
    adjusted = control_variate or composite
    if normalized and adjusted:
        raise UserError("--normalized: --control-variate and --composite adjust the unnormalized joint precision; "
                        "drop --normalized (or those options)")
    return OnDemandConfig(half_width=half_width, level=level, scheme=scheme, control_variate=control_variate,
                          composite=composite, normalized=not adjusted if normalized is None else normalized,
                          combined_recall=combined_recall, prices=Prices(verification_price, document_price))


def _open(path: Path):
    from ..ondemand import OnDemandSession

    return OnDemandSession.open(path)


def _in_file(path: Path):
    """Errors of the session on a file's content, prefixed by the file."""
    from contextlib import contextmanager

    @contextmanager
    def scope():
        try:
            yield
        except UserError:
            raise
        except ValueError as exc:
            raise UserError(f"{path}: {exc}") from None

    return scope()


@ondemand.command("init")
def init_cmd(
    evaluation: Annotated[Path | None, typer.Argument(help="On-demand evaluation file to create (or --session).",
                                                      show_default=False)] = None,
    session: Annotated[Path | None, typer.Option("--session", "-s", help="The file to create, as `labelwise "
                                                 "init` names it.", show_default=False)] = None,
    documents: Annotated[Path, typer.Option("--documents", help="CSV/TSV/JSON lines/Parquet with a doc_id column: "
                                            "the corpus.")] = ...,
    half_width: HalfWidthOpt = 0.05,
    level: LevelOpt = 0.95,
    verification_price: VerificationPriceOpt = 0.18,
    document_price: DocumentPriceOpt = 15.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draws.")] = 0,
) -> None:
    """Start an on-demand evaluation over a corpus of documents."""
    with user_errors():
        from ..ondemand import OnDemandSession

        evaluation = session_path(evaluation, session, "ondemand init")
        config = _config(half_width, level, verification_price, document_price)
        docs = _columns(documents, "documents file", ("doc_id",))["doc_id"]
        with _in_file(documents):
            OnDemandSession.create(evaluation, docs, config, seed=seed)
        typer.echo(f"created {evaluation}: {len(docs)} documents; next `labelwise ondemand submit {evaluation} "
                   "NAME predictions.csv`")


@ondemand.command("submit")
def submit_cmd(
    evaluation: EvalArg,
    name: Annotated[str, typer.Argument(help="The system's name (new to the evaluation).")],
    predictions: Annotated[Path, typer.Argument(help="CSV/TSV/JSONL/Parquet instance_id,doc_id[,score]: its output.")],
    half_width: Annotated[float | None, typer.Option("--half-width", help="This system's precision target "
                                                     "(default: the evaluation's).")] = None,
) -> None:
    """Add a system: plan how many new verifications it needs (bisection on the variance) and draw them."""
    with user_errors():
        cols = _columns(predictions, "predictions file", ("instance_id", "doc_id"), ("score",))
        session = _open(evaluation)
        with _in_file(predictions):
            done = session.submit(name, cols["instance_id"], cols["doc_id"], cols.get("score"), half_width)
        typer.echo(f"{done['system']}: {done['planned_verifications']} new verifications ({done['draws']} draws; "
                   f"{done['reason']}); {done['pending_documents']} documents wait for annotation")


@ondemand.command("next")
def next_cmd(
    evaluation: EvalArg,
    out: Annotated[Path | None, typer.Option("--out", help="Write the tasks here: .csv, .tsv, .jsonl, .json or "
                                             ".parquet; - (the default) for CSV on standard output.")] = None,
) -> None:
    """The tasks waiting for people: instances to verify and documents to annotate exhaustively.

    One row per task: ``task`` (verify or annotate), ``instance_id``,
    ``doc_id`` and an empty ``label`` to fill in for verifications.
    """
    with user_errors():
        import pandas as pd

        from ..pool.writers import write_table

        session = _open(evaluation)
        tasks = session.pending()
        verify, documents = np.asarray(tasks["verifications"], dtype=object), np.asarray(tasks["documents"], dtype=object)
        write_table(pd.DataFrame({
            "task": np.repeat(["verify", "annotate"], [len(verify), len(documents)]),
            "instance_id": np.concatenate([verify, np.full(len(documents), "", dtype=object)]),
            "doc_id": np.concatenate([np.asarray(session.documents_of(verify), dtype=object), documents]),
            "label": "",
        }), out)
        typer.echo(f"{len(tasks['verifications'])} instances to verify, {len(tasks['documents'])} documents to "
                   "annotate", err=True)


@ondemand.command("label")
def label_cmd(
    evaluation: EvalArg,
    labels: Annotated[Path, typer.Argument(help="CSV/TSV/JSONL/Parquet instance_id,label (1 correct, 0 incorrect); the "
                                           "file from `next` with its label column filled works too.")],
) -> None:
    """Store verification answers."""
    with user_errors():
        cols = _columns(labels, "labels file", ("instance_id", "label"), task="verify")
        with _in_file(labels):
            done = _open(evaluation).add_labels(cols["instance_id"], _binary(cols["label"], "label"))
        typer.echo(f"stored {done['stored']} answers; {done['pending_verifications']} instances and "
                   f"{done['pending_documents']} documents wait")


@ondemand.command("annotate")
def annotate_cmd(
    evaluation: EvalArg,
    found: Annotated[Path, typer.Argument(help="CSV/TSV/JSONL/Parquet doc_id,instance_id: the correct instances found in "
                                          "annotated documents (an empty instance_id: none found).")],
) -> None:
    """Store exhaustive annotations: every correct instance of each annotated document."""
    with user_errors():
        import pandas as pd

        cols = _columns(found, "found file", ("doc_id",), ("instance_id",), may_be_empty=("instance_id",))
        ids = cols.get("instance_id", np.full(cols["doc_id"].size, np.nan, dtype=object))
        session = _open(evaluation)
        frame = pd.DataFrame({"doc_id": cols["doc_id"], "instance_id": ids})
        if frame.empty:
            raise UserError(f"{found}: no rows; give doc_id,instance_id for each annotated document")
        waiting = len(session.pending()["documents"])
        with _in_file(found):
            for doc, rows in frame.groupby("doc_id", sort=False):  # one call per document
                done = session.add_found(doc, rows["instance_id"].dropna().astype(str).to_numpy())
        stored = frame["doc_id"].nunique()
        more = done["pending_documents"] - (waiting - stored)  # requested once the last of these was in
        why = (f" ({more} more requested: recall's interval, planned from the documents annotated so far, needs "
               "them to reach the half-width)") if more > 0 else ""
        typer.echo(f"stored {stored} documents; {done['pending_verifications']} instances and "
                   f"{done['pending_documents']} documents wait{why}")


@ondemand.command("report")
def report_cmd(
    evaluation: EvalArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """A leaderboard: precision, recall and F1 with intervals, labels and dollars."""
    with user_errors():
        report = _open(evaluation).report()
        if as_json:
            print_json(report)
            return
        _print_report(report)


def _binary(values: np.ndarray, column: str) -> np.ndarray:
    """0/1 (or true/false) answers as integers; a ValueError naming ``column`` and the first bad value."""
    flags = np.char.lower(np.char.strip(values.astype(str)))
    valid = np.isin(flags, ["0", "1", "true", "false", "0.0", "1.0"])
    if not valid.all():
        raise ValueError(f"column {column}: {str(values[~valid][0])!r} is not 0 or 1; give 1 for a correct "
                         "instance and 0 for a wrong one")
    return np.isin(flags, ["1", "true", "1.0"]).astype(np.int64)


def _print_report(report: dict) -> None:
    from rich.table import Table

    from .render import rich_console

    def cell(row: dict, key: str) -> str:
        if row[key] is None:
            return "-"
        lo, hi = row[f"{key}_ci"]
        return f"{row[key]:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None else f"{row[key]:.3f}"

    level = f"{100 * report['level']:g}%"
    table = Table(title=f"On-demand evaluation ({level} intervals, joint estimator)")
    for head in ("system", "precision", "recall", "F1", "verified", "status"):
        table.add_column(head)
    for row in report["systems"]:
        table.add_row(row["name"], cell(row, "precision"), cell(row, "recall"), cell(row, "f1"),
                      str(row["verified"]), row["status"])
    console = rich_console()
    console.print(table)
    console.print(f"{report['labels']} verifications and {report['documents']} documents: "
                  f"${report['dollars']:.2f} (exhaustive annotation: ${report['exhaustive_dollars']:.2f}); "
                  f"waiting: {report['pending_verifications']} instances, {report['pending_documents']} documents")


def _system(spec: str) -> tuple[str, Path]:
    name, sep, file = spec.partition("=")
    if not sep or not name.strip() or not file.strip():
        raise UserError(f"--system: {spec!r} is not NAME=FILE; give e.g. --system base=base.csv")
    return name.strip(), Path(file.strip())


@ondemand.command("simulate")
def simulate_cmd(
    truth: Annotated[Path, typer.Option("--truth", help="CSV/TSV/JSONL/Parquet instance_id,doc_id,correct: every instance "
                                        "of every system and every correct instance of the corpus.")],
    system: Annotated[list[str], typer.Option("--system", help="NAME=FILE with columns instance_id,doc_id"
                                              "[,score]; repeat, in submission order.")],
    half_width: HalfWidthOpt = 0.05,
    repeats: Annotated[int, typer.Option("--repeats", help="Independent runs.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the first run.")] = 0,
    level: LevelOpt = 0.95,
    scheme: Annotated[str, typer.Option("--scheme", help="Mixture weights of the joint estimator: overlap, size "
                                        "or uniform.")] = "overlap",
    normalized: Annotated[bool | None, typer.Option("--normalized/--unnormalized", help="Self-normalized joint "
                                                    "precision, never noisier than the system's own draws "
                                                    "(default), or the paper's unnormalized sum.")] = None,
    control_variate: Annotated[bool, typer.Option("--control-variate/--plain", help="The unnormalized joint "
                                                  "precision with a control variate, or without one "
                                                  "(default).")] = False,
    composite: Annotated[bool, typer.Option("--composite/--joint-only", help="Combine the joint precision with "
                                            "the system's own simple estimate at the minimum-variance weight, "
                                            "or the joint estimate alone (default).")] = False,
    combined_recall: Annotated[bool, typer.Option("--combined-recall/--product-recall", help="Recall as pool "
                                                  "recall x pooled recall combined with the annotated documents' "
                                                  "direct ratio at the minimum-variance weight (default), or the "
                                                  "paper's product alone.")] = True,
    verification_price: VerificationPriceOpt = 0.18,
    document_price: DocumentPriceOpt = 15.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON (a stable contract).")] = False,
) -> None:
    """Simulate systems submitted one after another and compare the joint and simple estimators with the truth.

    On each arrival the verifications (and annotated documents) that reach
    --half-width are bought; the truth file plays the annotators.
    """
    with user_errors():
        from ..ondemand.simulate import simulate

        config = _config(half_width, level, verification_price, document_price, scheme, control_variate, composite,
                         normalized, combined_recall)
        if repeats < 1:
            raise UserError(f"--repeats: give at least 1, got {repeats}")
        table = _columns(truth, "truth file", ("instance_id", "doc_id", "correct"))
        with _in_file(truth):
            correct = _binary(table["correct"], "correct")
        known = table["instance_id"].astype(str)
        systems, scores = [], {}
        for spec in system:
            name, file = _system(spec)
            if any(name == s for s, _ in systems):
                raise UserError(f"--system: name {name!r} is given twice; give each system its own name")
            cols = _columns(file, "predictions file", ("instance_id", "doc_id"), ("score",))
            ids = cols["instance_id"].astype(str)
            unknown = ~np.isin(ids, known)
            if unknown.any():
                raise UserError(f"{file}: instance {str(ids[np.argmax(unknown)])!r} is not in {truth}; the truth "
                                "file must list every instance of every system")
            systems.append((name, ids))
            if "score" in cols:
                scores[name] = cols["score"].astype(float)
        result = simulate(table["instance_id"].astype(str), table["doc_id"].astype(str), correct, systems, config,
                          repeats=repeats, seed=seed, scores=scores or None)
        if as_json:
            print_json(result)
            return
        _print_table(result)


def _print_table(result: dict) -> None:
    from rich.table import Table

    from .render import rich_console

    table = Table(title="On-demand evaluation (joint vs simple estimator)")
    for head in ("system", "P", "R", "F1", "MSE P joint/simple", "MSE R joint/simple", "cov P", "cov R",
                 "labels joint/simple"):
        table.add_column(head)
    for s in result["systems"]:
        j, p = s["joint"], s["simple"]
        table.add_row(s["name"], f"{s['true_precision']:.3f}", f"{s['true_recall']:.3f}", f"{s['true_f1']:.3f}",
                      f"{j['mse_precision']:.1e} / {p['mse_precision']:.1e}",
                      f"{j['mse_recall']:.1e} / {p['mse_recall']:.1e}",
                      f"{j['coverage_precision']:.2f} / {p['coverage_precision']:.2f}",
                      f"{j['coverage_recall']:.2f} / {p['coverage_recall']:.2f}",
                      f"{j['labels']:.0f} / {p['labels']:.0f}")
    console = rich_console()
    console.print(table)
    cost = result["cost"]
    console.print(f"dollars: joint {cost['joint_dollars']:.0f}, simple {cost['simple_dollars']:.0f}, "
                  f"exhaustive annotation {cost['exhaustive_dollars']:.0f}")
