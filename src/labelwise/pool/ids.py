"""Item ids exactly as given: integers stay integers, strings stay strings (``00123`` is not ``123``).

String ids are kept as an object array of Python strings (memory in
proportion to their bytes, never a fixed-width NumPy unicode array), and
are at most :data:`MAX_ID_LENGTH` characters long.  Ids read from a file
(pool, labels or predictions) lose surrounding spaces (:func:`strip_ids`),
so `` 17`` in a labels file is the pool's ``17``.  A text column (a CSV
file) becomes integers only when every id is a plain integer without
leading zeros or sign (``0``, ``17``, ``-3``), so writing the ids back gives
the same text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import PoolError

__all__ = ["MAX_ID_LENGTH", "as_item_ids", "ids_from_text", "lost_zeros", "match_pool_ids", "show_id",
           "strip_ids"]

#: Longest id accepted, in characters.
MAX_ID_LENGTH = 1000

_PLAIN_INT = r"0|-?[1-9][0-9]{0,17}"  # integers whose text int64 gives back exactly


def show_id(value) -> str:
    """``repr`` of an id as the user wrote it (``5``, ``'a'``), not NumPy's ``np.int64(5)``."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def strip_ids(column: pd.Series) -> pd.Series:
    """A file's id column without the spaces around its text ids (numbers and empty cells as they are)."""
    text = column.astype(object)
    strings = text.map(type).eq(str).to_numpy()
    if strings.any():
        text = text.copy()
        text[strings] = text[strings].str.strip()
    return text


def ids_from_text(column: pd.Series) -> np.ndarray:
    """Ids read as text, surrounding spaces stripped: int64 when every one is a plain integer, else the strings."""
    text = strip_ids(column)
    if text.map(type).eq(str).all() and text.str.fullmatch(_PLAIN_INT).all():
        return text.astype(np.int64).to_numpy()
    return text.to_numpy(dtype=object)


def as_item_ids(values: np.ndarray) -> np.ndarray:
    """Checked ids: int64 for integers (and whole floats), an object array of ``str`` otherwise.

    Raises
    ------
    PoolError
        For missing ids, non-whole floats, ids longer than :data:`MAX_ID_LENGTH`
        characters and ids holding a NUL character.
    """
    ids = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    if ids.dtype.kind in "iub":
        return ids.astype(np.int64)
    if ids.dtype.kind == "f":
        if not np.all(np.isfinite(ids)) or np.any(ids != np.round(ids)):
            raise PoolError("item_ids: floating-point ids must be whole numbers; give integer or string ids")
        return ids.astype(np.int64)
    text = pd.Series(ids, dtype=object, copy=False)
    missing = text.isna().to_numpy()
    if missing.any():
        raise PoolError(f"item_ids: the id on row {int(np.argmax(missing)) + 1} is missing; give every item an id")
    if not text.map(type).eq(str).all():
        text = text.astype(str)
    length = text.str.len().to_numpy()
    if length.size and length.max() > MAX_ID_LENGTH:
        row = int(np.argmax(length))
        raise PoolError(f"item_ids: the id on row {row + 1} has {int(length[row])} characters; ids may have at "
                        f"most {MAX_ID_LENGTH}: shorten it (a hash or a row key)")
    nul = text.str.contains("\x00", regex=False).to_numpy()
    if nul.any():
        raise PoolError(f"item_ids: the id on row {int(np.argmax(nul)) + 1} holds a NUL character; remove it")
    return text.to_numpy(dtype=object)


def match_pool_ids(ids: np.ndarray, pool_ids: np.ndarray) -> np.ndarray:
    """``ids`` in the type of the pool's ids, for a look-up: text ``"17"`` finds integer id 17 (but
    ``"017"`` finds nothing), integer 17 finds text id ``"17"``.

    Text ids are matched to integer pool ids one by one: the plain integers among them become integers
    and the rest stay text (which finds nothing), so one typo does not make every other id unknown.
    """
    if pool_ids.dtype.kind in "iu" and ids.dtype.kind in "OUS":
        text = pd.Series(ids, dtype=object).astype(str)
        plain = text.str.fullmatch(_PLAIN_INT).to_numpy()
        if plain.all():
            return text.astype(np.int64).to_numpy()
        matched = text.to_numpy(dtype=object)
        matched[plain] = text[plain].astype(np.int64).tolist()
        return matched
    if pool_ids.dtype.kind == "O" and ids.dtype.kind != "O":
        return ids.astype(str).astype(object)
    return ids


def lost_zeros(unknown, pool_ids: np.ndarray) -> str:
    """A hint for an id not in the pool that is a text pool id without its leading zeros (``123`` for ``00123``, as
    a spreadsheet writes a column of numbers back): `` (the pool has '00123': ...)``, else ``""``."""
    want = str(unknown).lstrip("0")
    if pool_ids.dtype.kind != "O" or not want:
        return ""
    text = pd.Series(pool_ids, dtype=object, copy=False)
    hit = text[text.str.startswith("0").to_numpy() & (text.str.lstrip("0") == want).to_numpy()]
    return "" if hit.empty else (f" (the pool has {hit.iloc[0]!r}: were its leading zeros dropped, e.g. by a "
                                 "spreadsheet?)")
