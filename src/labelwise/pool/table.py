"""Reading an input table into a DataFrame, whatever its name claims.

Every table labelwise reads -- pools, labels, predictions, logs, the files of
``ondemand`` and ``discover`` -- goes through :func:`read_table`, so every
command takes the same formats:

* The format comes from the file's first bytes where they are telling
  (``PAR1``: Parquet, ``1f 8b``: gzip, ``PK``: a ZIP archive such as an Excel
  workbook), else from the extension: ``.jsonl``/``.ndjson`` (JSON lines),
  ``.json`` (an array of records), ``.csv``, ``.tsv``, ``.txt``.
* The delimiter of a text file is the one of ``,``, tab, ``;`` and ``|`` its
  header line holds most often (the extension's on a tie).
* Text must be UTF-8 (a byte-order mark is allowed); the first byte that is
  not is reported by data row and column, and UTF-16 text by its byte-order mark.

The table's index is each row's *data row* in the file: 1 for the first row
after the header (the first line of JSON lines, the first row of Parquet),
and ``df.attrs["source"]`` names the file and that unit (``attrs["kind"]`` what
the file is), so that
:mod:`~labelwise.pool.cells` can name the row of a bad value.  Blank lines
are dropped without shifting the numbers of the others.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pandas as pd

from .errors import PoolError

__all__ = ["DELIMITERS", "ROW", "delimiter_of", "file_suffixes", "read_delimited", "read_table"]

#: Delimiters recognised in a text file's header line, the first preferred on a tie.
DELIMITERS = (",", "\t", ";", "|")
_PARQUET, _GZIP, _ZIP = b"PAR1", b"\x1f\x8b", b"PK\x03\x04"
#: The byte-order marks of UTF-16, little and big endian
_UTF16 = (b"\xff\xfe", b"\xfe\xff")
#: How every error names a row of an input table: "data row N", 1 being the first row after the header.
ROW = "data row"


def file_suffixes(path: Path) -> str:
    """All suffixes of ``path``, lower case (``".csv.gz"``)."""
    return "".join(path.suffixes).lower()


def read_table(path: Path, id_col: str | None = None, kind: str = "pool file") -> pd.DataFrame:
    """The table of a pool file (or another input table): Parquet, JSON lines, or delimited UTF-8 text
    (optionally gzipped).

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
        Indexed by data row (1 = the first row after the header); ``attrs["source"]``
        is ``(file name, "data row")``, ``attrs["kind"]`` is ``kind``.

    Raises
    ------
    PoolError
        One line naming the file, the data row and column where known, and the
        fix: a missing or empty file, an unknown format, a file whose content
        contradicts its extension, bytes that are not UTF-8, or a row with
        more fields than the header.
    """
    name = repr(str(path))
    if not path.is_file():
        raise PoolError(f"{kind} {name} does not exist; check the path")
    with path.open("rb") as fh:
        magic = fh.read(4)
    if not magic.strip() and _blank(path):
        raise PoolError(f"{kind} {name} is empty; it needs a header line with the column names and a row per item")
    suffixes = file_suffixes(path)
    if magic == _PARQUET:
        return _numbered(pd.read_parquet(path), path, kind)
    if ".parquet" in suffixes or ".pq" in suffixes:
        raise PoolError(f"{kind} {name} is named Parquet but is not a Parquet file (it does not start with "
                        "PAR1); write it with pandas' to_parquet, or name a text file .csv")
    if magic.startswith(_ZIP):
        raise PoolError(f"{kind} {name} is a ZIP archive (an Excel workbook?); export the sheet as CSV "
                        "(UTF-8) or Parquet")
    if magic.startswith(_UTF16):
        raise PoolError(f"{kind} {name} is UTF-16 text (Excel's \"Unicode Text\"?); save it as UTF-8 "
                        "(e.g. iconv -f utf-16 -t utf-8)")
    compression = "gzip" if magic.startswith(_GZIP) else None
    if ".json" in suffixes or ".ndjson" in suffixes:
        return _numbered(_read_json(path, compression, kind, ".jsonl" in suffixes or ".ndjson" in suffixes), path,
                         kind)
    if not any(s in suffixes for s in (".csv", ".tsv", ".txt")) and not compression:
        raise PoolError(f"{kind} {name}: unknown format; use .csv, .csv.gz, .tsv, .jsonl or .parquet")
    opener = gzip.open if compression else open
    with opener(path, "rb") as fh:
        header = fh.readline()
    if not header.strip():
        raise PoolError(f"{kind} {name}: the header (the first line) is empty; it must hold the column names")
    sep = delimiter_of(header, "\t" if ".tsv" in suffixes else ",")
    try:
        df = read_delimited(path, header, sep, id_col=id_col, what=f"{kind} {name}", compression=compression)
    except UnicodeDecodeError:
        raise _not_utf8(path, opener, sep, kind) from None
    df.attrs |= {"source": (str(path), ROW), "kind": kind}
    return df


def read_delimited(source, header: bytes, sep: str, *, id_col: str | None, what: str,
                   compression: str | None = None) -> pd.DataFrame:
    """The table of delimited UTF-8 text (a path or a binary buffer), indexed by data row, blank rows dropped.

    Parameters
    ----------
    source : Path or binary file object
    header : bytes
        The text's first line, whose column that is ``id_col`` is read as text.
    sep : str
        The delimiter (:func:`delimiter_of` finds it).
    id_col : str, optional
    what : str
        The input as errors name it (``"labels file 'x.csv'"``).
    compression : str, optional
        ``"gzip"`` for gzipped text.

    Raises
    ------
    PoolError
        For a row with more or fewer fields than the header.
    UnicodeDecodeError
        For bytes that are not UTF-8 (the caller names the row).
    """
    fields = f"every row needs as many {_sep_name(sep)}-separated fields as the header"
    try:
        df = pd.read_csv(source, sep=sep, compression=compression, encoding="utf-8-sig", skip_blank_lines=False,
                         dtype=_text_columns(header, sep, id_col))
    except pd.errors.ParserError as exc:
        raise PoolError(f"{what}: {_parser_problem(exc)}; {fields} (quote values that contain the delimiter)") \
            from None
    if not isinstance(df.index, pd.RangeIndex):
        # every data row has more fields than the header (often a trailing delimiter): pandas would silently take
        # the first fields as the index and shift every column to the left
        width = len(df.columns)
        raise PoolError(f"{what}: {ROW} 1 has {width + df.index.nlevels} fields, the header {width}, and so has "
                        f"every row (a {_sep_name(sep)} at the end of each line?); {fields}")
    df.index = pd.RangeIndex(1, len(df) + 1)
    blank = df.isna().all(axis=1).to_numpy()
    return df[~blank] if blank.any() else df


def _blank(path: Path) -> bool:
    """Whether the file holds nothing but white space (read a megabyte at a time)."""
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            if chunk.strip():
                return False
    return True


def _numbered(df: pd.DataFrame, path: Path, kind: str) -> pd.DataFrame:
    """``df`` indexed by data row (from 1), its ``attrs["source"]`` naming ``path`` (``attrs["kind"]``: a ``kind``)."""
    df.index = pd.RangeIndex(1, len(df) + 1)
    df.attrs |= {"source": (str(path), ROW), "kind": kind}
    return df


def _read_json(path: Path, compression: str | None, kind: str, lines: bool) -> pd.DataFrame:
    """JSON lines (one object per line) or a JSON array of objects; values as written (``dtype=False``)."""
    try:
        return pd.read_json(path, lines=lines, dtype=False, compression=compression)
    except ValueError as exc:
        shape = "one JSON object per line" if lines else "a JSON array of objects"
        raise PoolError(f"{kind} {str(path)!r} is not {shape} ({' '.join(str(exc).split())}); write it with "
                        "pandas' to_json(orient='records'" + (", lines=True)" if lines else ")")) from None


def _parser_problem(exc: Exception) -> str:
    """pandas' "Expected 4 fields in line 4, saw 5" as ``data row 3 has 5 fields, the header 4``."""
    found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
    if found is None:
        return " ".join(str(exc).split())
    want, line, saw = map(int, found.groups())
    return f"{ROW} {line - 1} has {saw} fields, the header {want}"


def _text_columns(header: bytes, sep: str, id_col: str | None) -> dict[str, type] | None:
    """``{name: str}`` for the header's column that is ``id_col`` but for case, spaces and quotes."""
    if id_col is None:
        return None
    names = header.decode("utf-8-sig", errors="replace").rstrip("\r\n").split(sep)
    wanted = id_col.strip().casefold()
    return {n.strip().strip('"'): str for n in names if n.strip().strip('"').strip().casefold() == wanted} or None


def delimiter_of(header: bytes, default: str = ",") -> str:
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
    row = data.count(b"\n", 0, start)  # the header is data row 0
    where = f"{ROW} {row}" if row else "the header"
    return PoolError(
        f"{kind} {str(path)!r}, {where}, column {column}: byte "
        f"0x{data[start]:02x} is not UTF-8 text; save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"
    )
