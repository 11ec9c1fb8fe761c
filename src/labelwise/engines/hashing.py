"""The shared per-item uniform ``u = H(item_id, seed)`` every engine draws by.

An item is in a sample when ``u < pi`` (its inclusion probability), so the
sample is a function of the item ids, the seed and the plan alone: the same
in NumPy, DuckDB and Spark, whatever the order or partitioning of the rows.
No engine's built-in hash is used (they differ between engines and
versions); ``H`` is defined here on 32-bit words with operations every SQL
engine evaluates exactly in signed 64-bit integers:

``mix32(x)`` is the "lowbias32" integer finaliser (C. Wellons, "Prospecting
for hash functions", 2018)::

    x ^= x >> 16;  x = x * 0x7FEB352D mod 2^32
    x ^= x >> 15;  x = x * 0x846CA68B mod 2^32
    x ^= x >> 16

For a 64-bit item id ``k`` (two's complement) split into words
``lo = k mod 2^32`` and ``hi = floor(k / 2^32) mod 2^32``, and a seed ``s``
in ``[0, 2^64)`` with seed words ``a0 = mix32((s mod 2^32) xor 0x243F6A88)``
and ``b0 = mix32((floor(s / 2^32) mod 2^32) xor 0x85A308D3)``::

    a = mix32(lo xor mix32(hi xor a0))
    b = mix32(hi xor mix32(lo xor b0))
    u = (a * 2^21 + floor(b / 2^11)) / 2^53        # 53 bits, exactly a double in [0, 1)

In SQL a product ``x * c mod 2^32`` is computed from the 16-bit halves of
``c`` (``x * c_lo + ((x * c_hi) mod 2^16) * 2^16``), so no intermediate
exceeds 2^49 and no engine overflows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["DUCKDB", "SPARK", "SqlDialect", "generator_seed", "item_uniform", "uniform_sql", "uniforms_below"]

_MASK = 0xFFFFFFFF
_M1, _M2 = 0x7FEB352D, 0x846CA68B
_SALT_A, _SALT_B = 0x243F6A88, 0x85A308D3


def _mix32(x: np.ndarray) -> np.ndarray:
    """lowbias32 on uint32 arrays (products wrap mod 2^32 in NumPy, as the docstring's ``mod 2^32``)."""
    x = x ^ (x >> np.uint32(16))
    x *= np.uint32(_M1)
    x ^= x >> np.uint32(15)
    x *= np.uint32(_M2)
    x ^= x >> np.uint32(16)
    return x


def _seed_words(seed: int) -> tuple[int, int]:
    """``a0, b0`` of the module docstring."""
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed: must lie in [0, 2^64), got {seed}")
    words = np.array([(seed & _MASK) ^ _SALT_A, ((seed >> 32) & _MASK) ^ _SALT_B], dtype=np.uint32)
    a0, b0 = _mix32(words)
    return int(a0), int(b0)


def _id_words(item_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``lo, hi`` (uint32) of integer ids taken as 64-bit two's complement."""
    k = np.asarray(item_ids)
    if k.dtype.kind not in "iu":
        raise ValueError(f"item_ids: the shared hash needs integer ids, got dtype {k.dtype}")
    words = k.astype("<i8", copy=False).view("<u4").reshape(-1, 2)  # little-endian: low word first, no copy
    return words[:, 0], words[:, 1]


def _high_word(lo: np.ndarray, hi: np.ndarray, a0: int) -> np.ndarray:
    """``a = mix32(lo xor mix32(hi xor a0))``; the inner mix is computed once when every ``hi`` is 0 (ids in
    ``[0, 2^32)``, the usual case)."""
    inner = _mix32(np.array([a0], dtype=np.uint32))[0] if not hi.any() else _mix32(hi ^ np.uint32(a0))
    return _mix32(lo ^ inner)


def _combine(a: np.ndarray, lo: np.ndarray, hi: np.ndarray, b0: int) -> np.ndarray:
    """``u`` from the word ``a`` and the id words (module docstring)."""
    b = _mix32(hi ^ _mix32(lo ^ np.uint32(b0)))
    high = a.astype(np.uint64) << np.uint64(21)
    return (high + (b >> np.uint32(11)).astype(np.uint64)).astype(np.float64) / 2.0**53


def item_uniform(item_ids: np.ndarray, seed: int) -> np.ndarray:
    """``u = H(item_id, seed)`` for integer item ids (module docstring), vectorized.

    Parameters
    ----------
    item_ids : ndarray of int
        Item ids (64-bit two's complement).
    seed : int
        In ``[0, 2^64)``.

    Returns
    -------
    ndarray of float64
        One uniform in ``[0, 1)`` per id, equal to what :func:`uniform_sql` computes in any engine.
    """
    a0, b0 = _seed_words(seed)
    lo, hi = _id_words(item_ids)
    return _combine(_high_word(lo, hi, a0), lo, hi, b0)


def uniforms_below(item_ids: np.ndarray, seed: int, bound: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the ids with ``u = H(item_id, seed) < bound`` and their ``u``.

    Parameters
    ----------
    item_ids : ndarray of int
    seed : int
    bound : float or ndarray of float
        One bound for every id, or one per id.

    Since ``u >= a / 2^32``, only the ids with ``a < bound 2^32`` are hashed
    in full: when few are kept this costs about half of :func:`item_uniform`.
    """
    a0, b0 = _seed_words(seed)
    lo, hi = _id_words(item_ids)
    a = _high_word(lo, hi, a0)
    limit = np.asarray(bound, dtype=float)
    near = np.flatnonzero(a < limit * 2.0**32)
    u = _combine(a[near], lo[near], hi[near], b0)
    keep = u < (limit if limit.ndim == 0 else limit[near])
    return near[keep], u[keep]


def generator_seed(rng: np.random.Generator) -> int:
    """The hash seed of a NumPy generator: the seed it was made from, so that ``default_rng(s)`` draws like seed ``s``.

    An in-memory design that draws by the shared hash takes its seed from the
    session's generator: for ``np.random.default_rng(s)`` with an integer
    ``s`` in ``[0, 2^64)`` that is ``s`` itself, the seed an engine session
    given ``s`` hashes with, so both hand out the same items.  Any other
    generator (spawned children, ``default_rng(None)``) gives 64 bits of its
    seed sequence, distinct per child.  The generator's stream is not used.
    """
    seq = rng.bit_generator.seed_seq
    entropy = getattr(seq, "entropy", None)
    if isinstance(entropy, int) and 0 <= entropy < 2**64 and not getattr(seq, "spawn_key", ()):
        return entropy
    return int(seq.generate_state(1, np.uint64)[0])


@dataclass(frozen=True)
class SqlDialect:
    """How an engine's SQL writes bitwise xor and shifts of 64-bit integers, and quotes a column name."""

    name: str
    xor: Callable[[str, str], str]
    shift_right: Callable[[str, int], str]
    shift_left: Callable[[str, int], str]
    quote: Callable[[str], str]


DUCKDB = SqlDialect("duckdb", lambda a, b: f"xor({a}, {b})", lambda a, n: f"({a} >> {n})",
                    lambda a, n: f"({a} << {n})", lambda c: '"' + c.replace('"', '""') + '"')
SPARK = SqlDialect("spark", lambda a, b: f"({a} ^ {b})", lambda a, n: f"shiftright({a}, {n})",
                   lambda a, n: f"shiftleft({a}, {n})", lambda c: "`" + c.replace("`", "``") + "`")


def _mulmod32(x: str, c: int, d: SqlDialect) -> str:
    """``x * c mod 2^32`` for a 32-bit ``x`` without exceeding 2^49 (module docstring)."""
    lo, hi = c & 0xFFFF, c >> 16
    return f"(({x} * {lo} + {d.shift_left(f'(({x} * {hi}) & 65535)', 16)}) & {_MASK})"


def _mix32_stages(x: str, d: SqlDialect) -> list[str]:
    """mix32 as five expressions, each of the previous one named ``x`` (one SQL stage each)."""
    return [d.xor(x, d.shift_right(x, 16)), _mulmod32(x, _M1, d), d.xor(x, d.shift_right(x, 15)),
            _mulmod32(x, _M2, d), d.xor(x, d.shift_right(x, 16))]


def uniform_sql(source: str, id_col: str, seed: int, carry: list[str], dialect: SqlDialect,
                out: str = "_u", bound: str | None = None) -> str:
    """A query adding ``out = H(id_col, seed)`` (a DOUBLE) to the rows of ``source``.

    Parameters
    ----------
    source : str
        A query (or table) with an integer column ``id_col``.
    id_col : str
        Its id column (quoted as needed by the caller).
    seed : int
    carry : list of str
        Columns of ``source`` to keep (``id_col`` among them if wanted).
    dialect : SqlDialect
        :data:`DUCKDB` or :data:`SPARK`.
    bound : str, optional
        A column among ``carry``: only rows with ``out < bound`` are wanted.
        Since ``u >= a / 2^32``, rows with ``a >= bound * 2^32`` are dropped
        before ``b`` is computed, which halves the work when few rows are kept.

    Each step of the hash is one nested projection, so an expression never
    repeats a sub-expression (engines merge the projections into one scan).
    """
    a0, b0 = _seed_words(seed)
    keep = ", ".join(carry)
    word = f"CAST({id_col} AS BIGINT)"
    query = (f"SELECT {keep}, ({word} & {_MASK}) AS _lo, ({dialect.shift_right(word, 32)} & {_MASK}) AS _hi "
             f"FROM ({source}) _src")
    with_words = f"{keep}, _lo, _hi"

    def stage(exprs: dict[str, str], kept: str) -> None:
        nonlocal query
        query = f"SELECT {kept}, " + ", ".join(f"{e} AS {n}" for n, e in exprs.items()) + f" FROM ({query}) _s"

    def mix(name: str, first: str, second: str, seed_word: int, kept: str) -> None:
        """``name = mix32(second xor mix32(first xor seed_word))`` (module docstring)."""
        stage({name: dialect.xor(first, str(seed_word))}, kept)
        for step in _mix32_stages(name, dialect):
            stage({name: step}, kept)
        stage({name: dialect.xor(second, name)}, kept)
        for step in _mix32_stages(name, dialect):
            stage({name: step}, kept)

    mix("_a", "_hi", "_lo", a0, with_words)
    if bound is not None:
        query = f"SELECT * FROM ({query}) _f WHERE CAST(_a AS DOUBLE) < {bound} * CAST({2**32} AS DOUBLE)"
    mix("_b", "_lo", "_hi", b0, f"{with_words}, _a")
    combined = f"CAST(({dialect.shift_left('_a', 21)} + {dialect.shift_right('_b', 11)}) AS DOUBLE) / CAST({2**53} AS DOUBLE)"
    return f"SELECT {keep}, {combined} AS {out} FROM ({query}) _h"
