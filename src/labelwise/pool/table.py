"""Reading a pool file into a table, whatever its name claims.

* The format comes from the file's first bytes where they are telling
  (``PAR1``: Parquet, ``1f 8b``: gzip, ``PK``: a ZIP archive such as an Excel
  workbook), else from the extension.
* The delimiter of a text file is the one of ``,``, tab, ``;`` and ``|`` its
  header line holds most often (the extension's on a tie).
* Text must be UTF-8 (a byte-order mark is allowed); the first byte that is
  not is reported by line and column.

The table's index is where each row sits in the file -- its line (the header
is line 1) for text files, its row (from 1) for Parquet -- and
``df.attrs["source"]`` names the file and that unit, so that
:mod:`~labelwise.pool.cells` can name the line of a bad value.  Blank lines
are dropped without shifting the line numbers of the others.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd

from .errors import PoolError

__all__ = ["DELIMITERS", "file_suffixes", "read_table"]

#: Delimiters recognised in a text file's header line, the first preferred on a tie.
DELIMITERS = (",", "\t", ";", "|")
_PARQUET, _GZIP, _ZIP = b"PAR1", b"\x1f\x8b", b"PK\x03\x04"


def file_suffixes(path: Path) -> str:
    """All suffixes of ``path``, lower case (``".csv.gz"``)."""
    return "".join(path.suffixes).lower()


def read_table(path: Path, id_col: str | None = None, kind: str = "pool file") -> pd.DataFrame:
    """The table of a pool file (or another input table): Parquet, or delimited UTF-8 text (optionally gzipped).

    Parameters
    ----------
    path : Path
    id_col : str, optional
        The id column, read from text as text (``00123`` stays ``00123``);
        matched regardless of case and surrounding spaces, as every column.
    kind : str
        What the file is, as the errors name it (``"labels file"``, ``"predictions file"``, ...).

    Returns
    -------
    pandas.DataFrame
        Indexed by line (text) or row (Parquet) in the file; ``attrs["source"]``
        is ``(file name, "line" or "row")``.

    Raises
    ------
    PoolError
        One line naming the file, the line and column where known, and the fix:
        a missing or empty file, an unknown format, a file whose content
        contradicts its extension, bytes that are not UTF-8, or a line with
        more fields than the header.
    """
    name = repr(str(path))
    if not path.is_file():
        raise PoolError(f"{kind} {name} does not exist; check the path")
    with path.open("rb") as fh:
        magic = fh.read(4)
    suffixes = file_suffixes(path)
    if magic == _PARQUET:
        df = pd.read_parquet(path)
        df.index = pd.RangeIndex(1, len(df) + 1)
        df.attrs["source"] = (str(path), "row")
        return df
    if ".parquet" in suffixes or ".pq" in suffixes:
        raise PoolError(f"{kind} {name} is named Parquet but is not a Parquet file (it does not start with "
                        "PAR1); write it with pandas' to_parquet, or name a text file .csv")
    if magic.startswith(_ZIP):
        raise PoolError(f"{kind} {name} is a ZIP archive (an Excel workbook?); export the sheet as CSV "
                        "(UTF-8) or Parquet")
    if not any(s in suffixes for s in (".csv", ".tsv", ".txt")) and not magic.startswith(_GZIP):
        raise PoolError(f"{kind} {name}: unknown format; use .csv, .csv.gz, .tsv or .parquet")
    compression = "gzip" if magic.startswith(_GZIP) else None
    opener = gzip.open if compression else open
    with opener(path, "rb") as fh:
        header = fh.readline()
    if not header.strip():
        raise PoolError(f"{kind} {name}: the first line is empty; line 1 must hold the column names")
    sep = _delimiter(header, "\t" if ".tsv" in suffixes else ",")
    try:
        df = pd.read_csv(path, sep=sep, compression=compression, encoding="utf-8-sig", skip_blank_lines=False,
                         dtype=_text_columns(header, sep, id_col))
    except UnicodeDecodeError:
        raise _not_utf8(path, opener, sep, kind) from None
    except pd.errors.ParserError as exc:
        raise PoolError(f"{kind} {name}: {str(exc).strip()}; every line needs as many {_sep_name(sep)}-separated fields "
                        "as the header (quote values that contain the delimiter)") from None
    df.index = pd.RangeIndex(2, len(df) + 2)
    blank = df.isna().all(axis=1).to_numpy()
    if blank.any():
        df = df[~blank]
    df.attrs["source"] = (str(path), "line")
    return df


def _text_columns(header: bytes, sep: str, id_col: str | None) -> dict[str, type] | None:
    """``{name: str}`` for the header's column that is ``id_col`` but for case, spaces and quotes."""
    if id_col is None:
        return None
    names = header.decode("utf-8-sig", errors="replace").rstrip("\r\n").split(sep)
    wanted = id_col.strip().casefold()
    return {n.strip().strip('"'): str for n in names if n.strip().strip('"').strip().casefold() == wanted} or None


def _delimiter(header: bytes, default: str) -> str:
    """The delimiter the header line holds most often; ``default`` when none beats it."""
    counts = {sep: header.count(sep.encode()) for sep in DELIMITERS}
    best = max(DELIMITERS, key=lambda sep: counts[sep])
    return default if counts[best] <= counts[default] else best


def _sep_name(sep: str) -> str:
    return {"\t": "tab", ",": "comma", ";": "semicolon", "|": "pipe"}[sep]


def _not_utf8(path: Path, opener, sep: str, kind: str) -> PoolError:
    """The error naming the line and column of the first byte of ``path`` that is not UTF-8."""
    with opener(path, "rb") as fh:
        data = fh.read()
    try:
        data.decode("utf-8")
        start = 0  # pragma: no cover - pandas only fails on text that does not decode
    except UnicodeDecodeError as exc:
        start = exc.start
    line_start = data.rfind(b"\n", 0, start) + 1
    field = data[line_start:start].count(sep.encode())
    columns = data.split(b"\n", 1)[0].decode("utf-8", "replace").strip().split(sep)
    column = repr(columns[field].strip()) if field < len(columns) else f"#{field + 1}"
    line = data.count(b"\n", 0, start) + 1
    return PoolError(
        f"{kind} {str(path)!r}, line {line}, column {column}: byte "
        f"0x{data[start]:02x} is not UTF-8 text; save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"
    )
