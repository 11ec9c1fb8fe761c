"""The in-memory pool: item ids and the outputs of one or more systems per item.

A :class:`Pool` is a handful of NumPy arrays of length ``N`` (one entry per
item) plus, per system, a predicted label, a real-valued score and/or a
probability.  Ground-truth labels are optional and only used by simulations.
Every constructor validates its input and raises :class:`PoolError` naming the
offending field and how to fix it.  Multi-label pools are built by
:meth:`Pool.from_multilabel` (see :mod:`labelwise.pool.multilabel`), pools in
files by :meth:`Pool.from_file` (see :mod:`labelwise.pool.readers`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from .cells import at_rows
from .checks import check_fields
from .errors import DuplicateIdsError, PoolError
from .ids import lost_zeros, match_pool_ids, show_id
from .multilabel import encode_outputs
from .readers import DEFAULT_COLUMNS, find_column, frame_fields, read_pool_file

__all__ = ["Outputs", "Pool"]


@dataclass(frozen=True)
class Outputs:
    """System outputs for a subset of items (rows) and all systems (columns).

    Attributes
    ----------
    preds, scores, probs
        Arrays of shape ``(n, S)`` (``probs`` is ``(n, S, C)`` for multi-class
        pools), or ``None`` when the pool has no such output.
    n_classes
        Size of the label set ``{0, ..., C-1}``.
    """

    preds: np.ndarray | None
    scores: np.ndarray | None
    probs: np.ndarray | None
    n_classes: int

    def __len__(self) -> int:
        """Number of items (rows)."""
        for arr in (self.preds, self.scores, self.probs):
            if arr is not None:
                return arr.shape[0]
        return 0

    def require(self, kind: str, measure: str) -> np.ndarray:
        """Return the output array ``kind`` or raise a clear error for ``measure``."""
        arr = getattr(self, kind)
        if arr is None:
            column = kind.removesuffix("s")  # the default column of the output: pred, prob
            argmax = ("; when a system predicts its most probable class, that is the argmax of its class "
                      "probabilities" if kind == "preds" and self.probs is not None and self.probs.ndim == 3 else "")
            raise PoolError(
                f"measure {measure!r} needs system output {kind!r}, but the pool has none: give a column "
                f"{column!r} (or name yours with --{column}-col on the command line, {column}_cols= in Python), "
                f"or a {kind} array when building the pool{argmax}"
            )
        return arr


def _checked_type(arr: np.ndarray) -> np.ndarray:
    """``arr`` (predictions or real outputs) in the type the pool's checks give: int64 or float64."""
    return arr.astype(np.int64 if arr.dtype.kind in "iu" else np.float64, copy=False)


@contextmanager
def naming_file(path: Path) -> Iterator[None]:
    """Prefix ``pool file '<path>'`` to the pool errors raised inside (whole-array checks, such as
    duplicate ids, know no file)."""
    try:
        yield
    except PoolError as exc:
        if str(exc).startswith(f"pool file {str(path)!r}"):
            raise
        raise PoolError(f"pool file {str(path)!r}: {exc}") from None


@dataclass(frozen=True, eq=False)
class Pool:
    """Items to evaluate and the outputs of the systems under evaluation.

    Build one with :meth:`from_arrays`, :meth:`from_dataframe` or :meth:`from_file`.

    Attributes
    ----------
    item_ids : ndarray, shape (N,)
        Unique item identifiers exactly as given: int64, or an object array
        of strings (:mod:`labelwise.pool.ids`).
    preds : ndarray of int, shape (N, S), optional
        Predicted label of each system, in ``{0, ..., n_classes-1}``.
    scores : ndarray of float, shape (N, S), optional
        Real-valued scores (larger means more confident in the positive class).
    probs : ndarray of float, shape (N, S) or (N, S, C), optional
        Probabilities: ``p(y=1|x)`` for binary pools, one per class otherwise.
    labels : ndarray of int, shape (N,), optional
        Ground truth (simulation only).
    features : ndarray, shape (N, m), optional
        Feature vectors (used by feature-based partitions).
    system_names : tuple of str
        One name per system.
    n_classes : int
        Size of the label set ``{0, ..., C-1}`` (2 for binary pools, ``2^C``
        for multi-label pools).
    label_names : tuple of str
        Names of the ``C`` labels of a multi-label pool (empty otherwise);
        bit ``k`` of a label code is label ``label_names[k]``.

    Notes
    -----
    A pool read from a session file keeps ``preds``, ``scores``, ``probs``
    and ``labels`` read-only in the type they were stored in (one-byte
    integer predictions and labels, float32 scores: no whole-pool
    conversion on open); :meth:`outputs` and :meth:`primary_scores` give the outputs in
    the checked types above, exactly.
    """

    item_ids: np.ndarray
    preds: np.ndarray | None = None
    scores: np.ndarray | None = None
    probs: np.ndarray | None = None
    labels: np.ndarray | None = None
    features: np.ndarray | None = None
    system_names: tuple[str, ...] = ()
    n_classes: int = 2
    name: str = "pool"
    label_names: tuple[str, ...] = ()
    _index: pd.Index | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ build
    @classmethod
    def from_arrays(
        cls,
        item_ids=None,
        *,
        preds=None,
        scores=None,
        probs=None,
        labels=None,
        features=None,
        system_names: Sequence[str] | None = None,
        n_classes: int | None = None,
        name: str = "pool",
    ) -> Pool:
        """Build and validate a pool from arrays.

        Parameters
        ----------
        item_ids : array-like, optional
            Unique ids; defaults to ``0..N-1``.
        preds, scores : array-like, shape (N,) or (N, S), optional
            Predicted labels / real-valued scores, one column per system.
        probs : array-like, shape (N,), (N, S) or (N, S, C), optional
            Binary pools: ``p(y=1|x)``; multi-class pools: per-class probabilities.
        labels : array-like, shape (N,), optional
            Ground truth for simulation.
        features : array-like, shape (N, m), optional
            Item features.
        system_names : sequence of str, optional
            Defaults to ``system0, system1, ...`` (or ``system`` for one system).
        n_classes : int, optional
            Label-set size; inferred from labels, predictions and probabilities
            (at least 2).
        name : str
            A short name used in reports.

        Raises
        ------
        PoolError
            On empty pools, length mismatches, duplicate ids, NaN/inf scores,
            probabilities outside [0, 1] and labels outside the label set.
        """
        return cls(**check_fields(item_ids, preds, scores, probs, labels, features, system_names, n_classes),
                   name=name)

    @classmethod
    def from_multilabel(
        cls,
        item_ids=None,
        *,
        preds=None,
        probs=None,
        scores=None,
        labels=None,
        features=None,
        label_names: Sequence[str] | None = None,
        system_names: Sequence[str] | None = None,
        name: str = "pool",
    ) -> Pool:
        """Build a multi-label pool: ``C`` binary labels per item (Yilmaz et al., appendix D).

        Label vectors become bitmask codes
        (:func:`~labelwise.pool.multilabel.encode_multilabel`), so the pool has
        ``n_classes = 2^C``; per-label probabilities become the product
        distribution of Yilmaz et al. eq. (89) over the ``2^C`` label sets
        (:func:`~labelwise.pool.multilabel.multilabel_joint`), which is what
        the designs and oracle models see (see
        :mod:`labelwise.pool.multilabel` for the reference).

        Parameters
        ----------
        item_ids : array-like, optional
            Unique ids; defaults to ``0..N-1``.
        preds : array-like of 0/1, shape (N, C) or (N, S, C), optional
            Predicted presence of every label, per system.
        probs : array-like, shape (N, C) or (N, S, C), optional
            Per-label marginals ``p(v_k = 1 | x)`` in [0, 1], per system.
        scores : array-like, shape (N,) or (N, S), optional
            One real-valued ranking score per item and system (score
            partitions of adaptive designs); without it, adaptive designs
            rank by the probability of at least one label.
        labels : array-like of 0/1, shape (N, C), optional
            Ground truth (simulation only).
        features : array-like, shape (N, m), optional
        label_names : sequence of str, optional
            One name per label (default ``label0, label1, ...``); bit ``k`` is
            ``label_names[k]``.
        system_names : sequence of str, optional
        name : str

        Raises
        ------
        PoolError
            When ``preds``/``labels`` hold values other than 0/1, ``probs``
            lie outside [0, 1], the outputs disagree on ``C`` or on the number
            of systems, ``C`` exceeds
            :data:`~labelwise.pool.multilabel.MAX_LABELS`, the joint
            probabilities would not fit in memory, or for any error of
            :meth:`from_arrays`.
        """
        preds, probs, labels, names = encode_outputs(preds, probs, labels, label_names)
        pool = cls.from_arrays(
            item_ids, preds=preds, scores=scores, probs=probs, labels=labels, features=features,
            system_names=system_names, n_classes=2 ** len(names), name=name,
        )
        return replace(pool, label_names=names)

    @classmethod
    def from_dataframe(
        cls,
        df: pd.DataFrame,
        *,
        id_col: str | None = DEFAULT_COLUMNS["id"],
        pred_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["pred"],
        score_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["score"],
        prob_cols: str | Sequence[str] | None = DEFAULT_COLUMNS["prob"],
        label_col: str | None = DEFAULT_COLUMNS["label"],
        feature_cols: Sequence[str] | None = None,
        system_names: Sequence[str] | None = None,
        n_classes: int | None = None,
        name: str = "pool",
        multilabel: Sequence[str] | None = None,
    ) -> Pool:
        """Build a pool from a DataFrame with user-chosen column names.

        Column arguments accept one name or a list (one column per system;
        a multi-class pool's ``prob_cols`` are one per class and system, in
        class order, :mod:`~labelwise.pool.class_columns`).  A default column
        name that is absent from ``df`` is skipped; an explicitly listed column that is absent raises :class:`PoolError`.
        Defaults follow the format of the benchmark pools: ``item_id``,
        ``pred``, ``score``, ``prob``, ``label``.

        Multi-label pools
            With ``multilabel=[name_1, ..., name_C]`` the pool is built by
            :meth:`from_multilabel` and ``pred_cols``, ``prob_cols`` and
            ``label_col`` are *prefixes*: label ``name`` is read from the
            columns ``<prefix>_<name>``, e.g. ``pred_toxic``, ``prob_toxic``
            and ``label_toxic`` with the defaults (0/1 predictions,
            probabilities ``p(toxic=1|x)``, 0/1 truth).  Several systems take a
            list of prefixes (``pred_cols=["a", "b"]`` reads ``a_toxic``,
            ``b_toxic``, ...).  ``score_cols`` keeps its meaning (one ranking
            score per system) and ``n_classes`` must be left unset.
        """
        if multilabel is not None and n_classes is not None:
            raise PoolError("n_classes: leave it unset for a multi-label pool (it is 2^C for C labels)")
        fields = frame_fields(
            df, id_col=id_col, pred_cols=pred_cols, score_cols=score_cols, prob_cols=prob_cols,
            label_col=label_col, feature_cols=feature_cols, system_names=system_names, multilabel=multilabel,
            n_classes=n_classes,
        )
        try:
            if multilabel is not None:
                return cls.from_multilabel(**fields, name=name)
            return cls.from_arrays(**fields, n_classes=n_classes, name=name)
        except DuplicateIdsError as exc:  # found on the arrays, at a tenth of the cost; named by row here
            where = at_rows(df, exc.positions, find_column(df, id_col))
            others = exc.n_repeated - 1
            more = f" ({others} other id{' is' if others == 1 else 's are'} repeated too)" if others else ""
            raise PoolError(f"{where}: the same id {show_id(fields['item_ids'][exc.positions[0]])}{more}; every "
                            "item needs a unique id: drop or renumber the repeats") from None

    @classmethod
    def from_file(cls, path: str | Path, **columns) -> Pool:
        """Read a pool from CSV (optionally gzipped), TSV or Parquet (:func:`~labelwise.pool.readers.read_pool_file`).

        Keyword arguments are the column options of :meth:`from_dataframe`.

        Raises
        ------
        PoolError
            Whose message starts with ``pool file '<path>'``.
        """
        path = Path(path)
        df = read_pool_file(path, id_col=columns.get("id_col", DEFAULT_COLUMNS["id"]))
        columns.setdefault("name", path.name.split(".")[0])
        with naming_file(path):
            return cls.from_dataframe(df, **columns)

    @classmethod
    def from_parquet(cls, path, *, engine: str = "memory", **columns):
        """A pool from Parquet files (a path, a glob or a list of them), in memory or through an engine.

        Parameters
        ----------
        path : str, Path or list of them
        engine : {"memory", "duckdb", "spark"}
            ``"memory"`` reads the rows into a :class:`Pool`; ``"duckdb"`` and
            ``"spark"`` return a :class:`~labelwise.engines.EnginePool` whose rows stay
            in the engine (binary pools with integer ids; see :mod:`labelwise.engines`).
        **columns
            The column options of :meth:`from_dataframe` (an engine pool takes
            ``id_col``, ``pred_cols``, ``prob_cols``, ``score_cols``, ``label_col``,
            ``system_names`` and, for Spark, ``spark`` or ``spark_master``).
        """
        if engine != "memory":
            from ..engines import EnginePool

            return EnginePool.open(path, engine, **columns)
        from ..engines.files import expand_paths

        files = expand_paths(path)
        if len(files) == 1:
            return cls.from_file(files[0], **columns)
        id_col = columns.get("id_col", DEFAULT_COLUMNS["id"])
        df = pd.concat([read_pool_file(f, id_col=id_col) for f in files], ignore_index=True)
        columns.setdefault("name", files[0].name.split(".")[0])
        with naming_file(files[0]):
            return cls.from_dataframe(df, **columns)

    # ------------------------------------------------------------------ use
    @property
    def n_items(self) -> int:
        """Number of items ``N``."""
        return int(self.item_ids.shape[0])

    def __len__(self) -> int:
        """Number of items ``N``."""
        return self.n_items

    @property
    def n_systems(self) -> int:
        """Number of systems ``S``."""
        return len(self.system_names)

    @property
    def index(self) -> pd.Index:
        """The item ids as a :class:`pandas.Index` (for look-ups by id)."""
        if self._index is None:  # built on the first look-up by id
            object.__setattr__(self, "_index", pd.Index(self.item_ids, copy=False))  # 0.3 s less at 10^7
        return self._index

    def outputs(self, idx: np.ndarray | slice | None = None) -> Outputs:
        """System outputs of the items at positions ``idx`` (all items when ``None``)."""
        if idx is None:
            idx = slice(None)
        take = lambda a: None if a is None else _checked_type(a[idx])
        return Outputs(take(self.preds), take(self.scores), take(self.probs), self.n_classes)

    def positions(self, ids, *, field_name: str = "item_id") -> np.ndarray:
        """Positions of ``ids`` in the pool; raises :class:`PoolError` for unknown ids."""
        ids = match_pool_ids(np.asarray(ids), self.item_ids)
        pos = self.index.get_indexer(ids)
        if (pos < 0).any():  # name the first unknown id (callers name its place) and how many more there are
            n_unknown, shown = int((pos < 0).sum()), ids[pos < 0][:6].tolist()
            more = f", nor are {n_unknown - 1} more, e.g. {shown[1:]}" if n_unknown > 1 else ""
            raise PoolError(f"{field_name} {shown[0]!r} is not in the pool{more}; use ids exactly as in the "
                            f"pool's id column{lost_zeros(shown[0], self.item_ids)}")
        return pos

    def primary_scores(self, system: int = 0) -> np.ndarray:
        """A real-valued ranking score for ``system``: score, else prob, else pred."""
        if self.scores is not None:
            return _checked_type(self.scores[:, system])
        if self.probs is not None:
            p = _checked_type(self.probs[:, system])
            return p if p.ndim == 1 else 1.0 - p[:, 0]
        return self.preds[:, system].astype(float)

    def with_labels(self, labels) -> Pool:
        """A copy of this pool with ground-truth ``labels`` attached (validated).

        Multi-label pools take label codes (:func:`~labelwise.pool.multilabel.encode_multilabel`).
        """
        pool = Pool.from_arrays(
            self.item_ids, preds=self.preds, scores=self.scores, probs=self.probs, labels=labels,
            features=self.features, system_names=self.system_names, n_classes=self.n_classes, name=self.name,
        )
        return replace(pool, label_names=self.label_names)
