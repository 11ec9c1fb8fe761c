"""The two passes of an engine pool as SQL, for any engine with a :class:`~labelwise.engines.hashing.SqlDialect`.

* :func:`summary_query`: one scan grouping the rows by block
  (:mod:`labelwise.engines.blocks`), counting them and summing their prior,
  with a count of invalid cells per column.
* :func:`draw_query`: one scan keeping the rows with ``u < b`` for their
  block's inclusion probability ``b`` (a small table joined by block key)
  and ``u`` the shared hash (:mod:`labelwise.engines.hashing`).
* :func:`rows_query`: the rows of given ids, every column (content included).
* :func:`threshold_groups_query` and :func:`value_moments_query`: one scan
  grouping the rows by block and by the thresholds at or below a score
  column, or summing a column and its square per block (the losses of a
  measure of the scores reused from a session's labels,
  :mod:`labelwise.engines.reused_losses`).
* :func:`score_range_query`, :func:`fine_counts_query` and
  :func:`stratum_draw_query`: the passes of ``stratified``
  (:mod:`labelwise.engines.strata`).
* :func:`duplicate_id_query` and :func:`checksum_query`: one scan each, an
  id held by several rows (refused at ``init``), and a checksum of the
  systems' outputs by item (a session refuses a pool whose outputs changed);
  :func:`class_sums_query`: probability columns that are one system's
  class probabilities (refused: engine pools are binary).
"""

from __future__ import annotations

import numpy as np

from .blocks import LEVEL_EDGES, LEVELS, N_BINS, PER_LEVEL, key_bits, level_scale
from .columns import EngineColumns
from .hashing import SqlDialect, uniform_sql

__all__ = ["FINE_STRATA", "checksum_query", "class_sums_query", "draw_query", "duplicate_id_query",
           "fine_counts_query", "fine_strata", "rows_query", "score_range_query", "stratum_draw_query",
           "summary_query", "threshold_groups_query", "value_moments_query"]


def _prior_sql(cols: EngineColumns, d: SqlDialect) -> str:
    """``p(y=1|x)``: the systems' mean probability, else mean logistic score, else mean prediction."""
    q = d.quote
    if cols.probs:
        terms = [f"CAST({q(c)} AS DOUBLE)" for c in cols.probs]
    elif cols.scores:
        terms = [f"1.0 / (1.0 + exp(-CAST({q(c)} AS DOUBLE)))" for c in cols.scores]
    else:
        terms = [f"CAST({q(c)} AS DOUBLE)" for c in cols.preds]
    return f"(({' + '.join(terms)}) / {len(terms)})"


def _double(x: float) -> str:
    """A DOUBLE literal read back exactly (the shortest round-trip decimal)."""
    return f"CAST('{float(x)!r}' AS DOUBLE)"


def _level_bin_sql(k: int) -> str:
    """The bin of ``_lw_q`` within level ``k`` (:func:`~labelwise.engines.blocks.prior_bins`), plus the level's first."""
    sub = f"CAST(floor(_lw_q * {_double(float(level_scale(np.array(k))))}) AS BIGINT)" + (f" - {PER_LEVEL}" if k else "")
    return f"{k * PER_LEVEL} + LEAST({sub}, {PER_LEVEL - 1})"


def _half_bin_sql(lo: int = 0, hi: int = LEVELS - 1) -> str:
    """The bin of ``_lw_q`` in [0, 1/2] among levels ``lo..hi``: a binary search on the level edges, so a row makes
    five comparisons rather than one per level."""
    if lo == hi:
        return _level_bin_sql(lo)
    mid = (lo + hi + 1) // 2
    return (f"(CASE WHEN _lw_q >= {_double(LEVEL_EDGES[mid - 1])} THEN {_half_bin_sql(mid, hi)} "
            f"ELSE {_half_bin_sql(lo, mid - 1)} END)")


#: The small table of every fine bin's stratum (columns ``_lw_fine_bin``, ``_lw_stratum``) the queries within
#: strata join (:func:`fine_strata`).
FINE_STRATA = "lw_fine_strata"


def fine_strata(strata) -> tuple[np.ndarray, np.ndarray]:
    """The columns of :data:`FINE_STRATA`: every fine bin of ``strata`` and its stratum (the number of cuts below it)."""
    fine = np.arange(strata.n_fine, dtype=np.int64)
    return fine, np.searchsorted(strata.cuts, fine, side="left").astype(np.int64)


def _key_sql(cols: EngineColumns, d: SqlDialect, strata=None) -> str:
    """The block key (:func:`labelwise.engines.blocks.block_keys`) of the rows of :func:`_with_bin`; with
    ``strata`` (:class:`~labelwise.engines.strata.EngineStrata`) the key within the row's stratum
    (:func:`~labelwise.engines.blocks.stratum_keys`)."""
    key = "_lw_bin"
    if cols.preds:
        bits = " + ".join(f"CAST({d.quote(c)} AS BIGINT) * {1 << s}" for s, c in enumerate(cols.preds))
        key = f"(_lw_bin * {1 << len(cols.preds)} + {bits})"
    if strata is not None:
        key = f"(_lw_stratum * {1 << key_bits(len(cols.system_names), bool(cols.preds))} + {key})"
    return key


def _with_bin(source: str, cols: EngineColumns, d: SqlDialect, strata=None) -> str:
    """``source``'s rows with their prior ``_lw_prior`` and its bin ``_lw_bin`` (:func:`~labelwise.engines.blocks.prior_bins`),
    and with ``strata`` their stratum ``_lw_stratum`` (from the table :data:`FINE_STRATA`, registered by the caller).

    One projection per step, each reading the previous one's column:
    ``q = min(p, 1 - p)``, its bin in [0, 1/2], then the bin of ``p``.
    """
    stages = [f"{_prior_sql(cols, d)} AS _lw_prior",
              "CASE WHEN _lw_prior < 0.5 THEN _lw_prior ELSE CAST(1 AS DOUBLE) - _lw_prior END AS _lw_q",
              f"{_half_bin_sql()} AS _lw_half",
              f"CASE WHEN _lw_prior < 0.5 THEN _lw_half ELSE {N_BINS - 1} - _lw_half END AS _lw_bin"]
    if strata is not None:
        stages.append(f"{_fine_sql(strata.column, strata.lo, strata.scale, strata.n_fine, d)} AS _lw_fine")
    # only the columns the queries read: a `*` would make some engines decode every column (content included)
    used = ", ".join(d.quote(c) for c in dict.fromkeys([cols.id, *cols.outputs, *filter(None, [cols.label])]))
    query = f"(SELECT {used} FROM {source}) _s"
    for j, stage in enumerate(stages):
        query = f"(SELECT *, {stage} FROM {query}) _s{j}"
    return query if strata is None else f"({_stratum_join(query)}) _sm"


def _stratum_join(rows: str) -> str:
    """``rows`` (a subquery with the fine bin ``_lw_fine``) with their stratum ``_lw_stratum``: a join with the
    small table :data:`FINE_STRATA` (registered by the caller), as a CASE per row costs far more."""
    return f"SELECT * FROM {rows} JOIN {FINE_STRATA} _m ON _lw_fine = _m._lw_fine_bin"


def _invalid_sql(column: str, kind: str, d: SqlDialect) -> str:
    """True for a cell the pool cannot use (missing, or outside the label set or [0, 1])."""
    c = d.quote(column)
    return {"id": f"{c} IS NULL",
            "pred": f"{c} IS NULL OR {c} NOT IN (0, 1)",
            "label": f"{c} IS NULL OR {c} NOT IN (0, 1)",
            "prob": f"{c} IS NULL OR NOT ({c} >= 0 AND {c} <= 1)",
            "score": f"{c} IS NULL OR isnan({c}) OR abs({c}) = CAST('Infinity' AS DOUBLE)"}[kind]


def checked_columns(cols: EngineColumns) -> list[tuple[str, str]]:
    """(column, kind) of every column the summary validates: those whose invalid cells ``bad_0, bad_1, ...`` of
    :func:`summary_query` count (id, preds, probs, scores in that order)."""
    return ([(cols.id, "id")] + [(c, "pred") for c in cols.preds] + [(c, "prob") for c in cols.probs]
            + [(c, "score") for c in cols.scores])


def summary_query(source: str, cols: EngineColumns, d: SqlDialect, strata=None) -> str:
    """Rows ``(key, n, prior_sum, bad_0, bad_1, ...)``: one per block (within its stratum with ``strata``),
    ``bad_j`` counting invalid cells of the j-th :func:`checked_columns`."""
    bad = ", ".join(f"SUM(CASE WHEN {_invalid_sql(c, kind, d)} THEN 1 ELSE 0 END) AS bad_{j}"
                    for j, (c, kind) in enumerate(checked_columns(cols)))
    return (f"SELECT {_key_sql(cols, d, strata)} AS block, COUNT(*) AS n, SUM(_lw_prior) AS prior_sum, {bad} "
            f"FROM {_with_bin(source, cols, d, strata)} GROUP BY 1")


def first_invalid_query(source: str, cols: EngineColumns, column: str, kind: str, d: SqlDialect) -> str:
    """One row ``(item_id, value)`` whose ``column`` (of that :func:`checked_columns` kind) is invalid, for the
    error message."""
    return (f"SELECT {d.quote(cols.id)} AS item_id, {d.quote(column)} AS value FROM {source} "
            f"WHERE {_invalid_sql(column, kind, d)} LIMIT 1")


def threshold_groups_query(source: str, cols: EngineColumns, column: str, thresholds: np.ndarray, d: SqlDialect,
                           strata=None) -> str:
    """Rows ``(block, k, n, value)``: the items of a block (within its stratum with ``strata``) with ``k`` of the
    increasing ``thresholds`` at or below their value of ``column``, their number and the least such value (as
    ``np.searchsorted(thresholds, value, side="right")`` counts them: exact comparisons of doubles)."""
    v = f"CAST({d.quote(column)} AS DOUBLE)"
    k = " + ".join(f"CASE WHEN {v} >= {_double(t)} THEN 1 ELSE 0 END" for t in thresholds)
    return (f"SELECT {_key_sql(cols, d, strata)} AS block, {k} AS k, COUNT(*) AS n, MIN({v}) AS value "
            f"FROM {_with_bin(source, cols, d, strata)} GROUP BY 1, 2")


def value_moments_query(source: str, cols: EngineColumns, column: str, d: SqlDialect, strata=None) -> str:
    """Rows ``(block, n, total, total_sq)``: the items of a block (within its stratum with ``strata``), and the sum
    of their values of ``column`` and of their squares."""
    v = f"CAST({d.quote(column)} AS DOUBLE)"
    return (f"SELECT {_key_sql(cols, d, strata)} AS block, COUNT(*) AS n, SUM({v}) AS total, SUM({v} * {v}) AS "
            f"total_sq FROM {_with_bin(source, cols, d, strata)} GROUP BY 1")


def draw_query(source: str, cols: EngineColumns, plan_table: str, seed: int, d: SqlDialect,
               exclude_table: str | None = None, strata=None) -> str:
    """Rows ``(item_id, u, b, block)`` of the items with ``u < b``; ``plan_table`` has columns ``block`` and ``b``
    (blocks within strata with ``strata``).

    ``exclude_table`` (column ``item_id``): items never drawn (those handed out in earlier rounds).
    """
    excluded = "" if exclude_table is None else f" WHERE k.item_id NOT IN (SELECT item_id FROM {exclude_table})"
    keyed = (f"SELECT k.item_id AS item_id, p.b AS b, k.block AS block FROM (SELECT {d.quote(cols.id)} AS item_id, "
             f"{_key_sql(cols, d, strata)} AS block FROM {_with_bin(source, cols, d, strata)}) k "
             f"JOIN {plan_table} p ON k.block = p.block{excluded}")
    hashed = uniform_sql(keyed, "item_id", seed, ["item_id", "b", "block"], d, out="u", bound="b")
    return f"SELECT item_id, u, b, block FROM ({hashed}) h WHERE u < b"


def rows_query(source: str, cols: EngineColumns, ids_table: str, d: SqlDialect) -> str:
    """Every column of the rows whose id is in ``ids_table`` (column ``item_id``)."""
    return f"SELECT * FROM {source} WHERE {d.quote(cols.id)} IN (SELECT item_id FROM {ids_table})"


def _fine_sql(column: str, lo: float, scale: float, n_fine: int, d: SqlDialect) -> str:
    """The fine bin ``min(floor((s - lo) * scale), n_fine - 1)`` of a score column, as NumPy computes it
    (:meth:`labelwise.engines.strata.EngineStrata.of_scores`): a subtraction and a product of doubles."""
    return (f"LEAST(CAST(floor((CAST({d.quote(column)} AS DOUBLE) - {_double(lo)}) * {_double(scale)}) AS BIGINT), "
            f"{n_fine - 1})")


def score_range_query(source: str, column: str, d: SqlDialect) -> str:
    """One row ``(lo, hi, n)``: the least and greatest score of ``column`` and the number of rows."""
    c = f"CAST({d.quote(column)} AS DOUBLE)"
    return f"SELECT MIN({c}) AS lo, MAX({c}) AS hi, COUNT(*) AS n FROM {source}"


def fine_counts_query(source: str, column: str, lo: float, scale: float, n_fine: int, d: SqlDialect) -> str:
    """Rows ``(fine, n)``: items per non-empty fine bin of ``column`` (:func:`_fine_sql`)."""
    return f"SELECT {_fine_sql(column, lo, scale, n_fine, d)} AS fine, COUNT(*) AS n FROM {source} GROUP BY 1"


def stratum_draw_query(source: str, cols: EngineColumns, strata, bounds_table: str, seed: int, d: SqlDialect) -> str:
    """Rows ``(item_id, u, stratum)`` of the items with ``u < b`` of their stratum; ``bounds_table`` has columns
    ``stratum`` and ``b``, and the table :data:`FINE_STRATA` of ``strata`` is registered by the caller."""
    fine = (f"(SELECT {d.quote(cols.id)} AS item_id, {_fine_sql(strata.column, strata.lo, strata.scale, strata.n_fine, d)}"
            f" AS _lw_fine FROM {source}) _f")
    keyed = (f"SELECT k.item_id AS item_id, p.b AS b, k._lw_stratum AS stratum FROM ({_stratum_join(fine)}) k "
             f"JOIN {bounds_table} p ON k._lw_stratum = p.stratum")
    hashed = uniform_sql(keyed, "item_id", seed, ["item_id", "b", "stratum"], d, out="u", bound="b")
    return f"SELECT item_id, u, stratum FROM ({hashed}) h WHERE u < b"


def truth_query(source: str, cols: EngineColumns, d: SqlDialect) -> str:
    """Rows ``(block, label, n, bad)``: items per block and ground-truth label (simulations), ``bad`` counting
    those whose label is not 0 or 1 (the cast would round 0.5)."""
    return (f"SELECT {_key_sql(cols, d)} AS block, CAST({d.quote(cols.label)} AS BIGINT) AS label, "
            f"COUNT(*) AS n, SUM(CASE WHEN {_invalid_sql(cols.label, 'label', d)} THEN 1 ELSE 0 END) AS bad "
            f"FROM {_with_bin(source, cols, d)} GROUP BY 1, 2")


def duplicate_id_query(source: str, cols: EngineColumns, d: SqlDialect) -> str:
    """At most one row ``(item_id, n)``: an id held by ``n > 1`` rows (none when every id is unique)."""
    i = d.quote(cols.id)
    return f"SELECT {i} AS item_id, COUNT(*) AS n FROM {source} GROUP BY {i} HAVING COUNT(*) > 1 LIMIT 1"


#: Two primes below 2^16: an id's weight in :func:`checksum_query` is ``(id mod P1) 2^16 + (id mod P2) + 1``, which
#: repeats only every ``P1 P2`` (about 4.3e9) ids.
_WEIGHT_PRIMES = (65521, 65519)
#: A probability ``p`` enters :func:`checksum_query` as ``round(p 2^30)``: a change of 2^-30 (9.3e-10) or more
#: always moves it (a smaller one may).
_PROB_SCALE = 2**30
#: A score ``s`` enters as ``round(sign(s) ln(1 + |s|) 2^20)``: a change of ``s`` that moves ``ln(1 + |s|)`` by
#: 2^-20 or more, i.e. one above about ``1e-6 (1 + |s|)``, always moves it, a relative resolution at any
#: magnitude; ``ln(1 + |s|) < 710`` for every double, so a code stays below 2^30 and its product with a weight
#: (below 2^32) below 2^62.
_SCORE_SCALE = 2**20


def checksum_query(source: str, cols: EngineColumns, d: SqlDialect) -> str:
    """One row ``(n, ids, c_0, c_1, ...)``, as text (exact in every engine): the number of rows, the sum of the ids'
    weights, and for each output column (:attr:`EngineColumns.outputs`) the sum over rows of its value, coded as an
    integer (:data:`_PROB_SCALE`, :data:`_SCORE_SCALE`), times the row's id weight.

    A change of any item's outputs changes a sum, but for a coincidence, when it changes a code: every flipped
    prediction, a probability changed by 2^-30 (9.3e-10) or more, a score by more than about ``1e-6 (1 + |s|)``,
    outputs moved between items (other weights); smaller changes of a probability or score may keep its code.  Integer
    sums are exact, so the same pool gives the same text whatever the order or partitioning of its rows.
    """
    i, (p1, p2) = f"CAST({d.quote(cols.id)} AS BIGINT)", _WEIGHT_PRIMES
    weight = f"((({i} % {p1}) + {p1}) % {p1}) * 65536 + ((({i} % {p2}) + {p2}) % {p2}) + 1"
    value = lambda c: f"CAST({d.quote(c)} AS DOUBLE)"
    codes = ([f"CAST({d.quote(c)} AS BIGINT)" for c in cols.preds]
             + [f"CAST(round({value(c)} * {_PROB_SCALE}) AS BIGINT)" for c in cols.probs]
             + [f"CAST(round(CASE WHEN {value(c)} < 0 THEN -1 ELSE 1 END * ln(1 + abs({value(c)})) * {_SCORE_SCALE}) "
                "AS BIGINT)" for c in cols.scores])
    total = lambda term: f"CAST(SUM(CAST({term} AS DECIMAL(38, 0))) AS STRING)"
    sums = ", ".join(f"{total(f'_lw_c{j} * _lw_w')} AS c_{j}" for j in range(len(codes)))
    coded = ", ".join(f"{code} AS _lw_c{j}" for j, code in enumerate(codes))
    return (f"SELECT CAST(COUNT(*) AS STRING) AS n, {total('_lw_w')} AS ids, {sums} "
            f"FROM (SELECT {weight} AS _lw_w, {coded} FROM {source}) _k")


def class_sums_query(source: str, cols: EngineColumns, sizes: list[int], tolerance: float, d: SqlDialect) -> str:
    """One row ``(n, soft, s_0, t_0, s_1, t_1, ...)``: the rows, those with a probability strictly between 0 and 1,
    and for each size ``C`` of ``sizes`` the rows on which every consecutive group of ``C`` probability columns sums
    to 1 within ``tolerance``, all of them (``s_j``) and the soft ones (``t_j``)
    (:func:`~labelwise.pool.class_columns.read_as_classes`)."""
    probs = [f"CAST({d.quote(c)} AS DOUBLE)" for c in cols.probs]
    soft = " OR ".join(f"({p} > 0 AND {p} < 1)" for p in probs)
    counts = [f"SUM(CASE WHEN {soft} THEN 1 ELSE 0 END) AS soft"]
    for j, size in enumerate(sizes):
        groups = [" + ".join(probs[g:g + size]) for g in range(0, len(probs), size)]
        every = " AND ".join(f"abs({group} - 1) <= {_double(tolerance)}" for group in groups)
        counts += [f"SUM(CASE WHEN {every} THEN 1 ELSE 0 END) AS s_{j}",
                   f"SUM(CASE WHEN ({every}) AND ({soft}) THEN 1 ELSE 0 END) AS t_{j}"]
    return f"SELECT COUNT(*) AS n, {', '.join(counts)} FROM {source}"
