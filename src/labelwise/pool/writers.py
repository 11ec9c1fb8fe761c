"""Writing a table where an ``--out`` option says: standard output, or a file whose extension names the format.

Every command that writes a table (``next``, ``export``, ``calibrate``,
``logs calibrate``, ``ondemand next``, ``discover next`` and ``export``)
writes it through :func:`write_table`, so the formats are the same
everywhere: CSV (``.csv``, or standard output), TSV (``.tsv``), JSON lines
(``.jsonl``, ``.ndjson``), a JSON array of records (``.json``) and Parquet
(``.parquet``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from .table import file_suffixes

__all__ = ["OUT_FORMATS", "check_folder", "is_stdout", "where", "write_table"]

#: The extensions :func:`write_table` knows, as its errors list them.
OUT_FORMATS = ".csv, .tsv, .jsonl, .json or .parquet"


def is_stdout(out: Path | str | None) -> bool:
    """Whether ``out`` means standard output: no file, ``-`` or ``/dev/stdout``."""
    return out is None or str(out) in ("-", "/dev/stdout")


def check_folder(out: Path, option: str = "--out") -> None:
    """``ValueError`` naming ``option`` when the folder ``out`` is to be written in does not exist."""
    if not out.parent.is_dir():
        raise ValueError(f"{option} {str(out)!r}: the folder {str(out.parent)!r} does not exist; create it "
                         "(mkdir -p) or write elsewhere")


def where(out: Path | str | None) -> str:
    """``'x.csv'`` or ``standard output``: where :func:`write_table` wrote, as the commands report it."""
    return "standard output" if is_stdout(out) else repr(str(out))


def write_table(df: pd.DataFrame, out: Path | str | None, option: str = "--out") -> None:
    """Write ``df`` (without its index) to ``out``, in the format its extension names; CSV on standard output.

    Parameters
    ----------
    df : pandas.DataFrame
    out : Path, str or None
        The file to write; ``None``, ``-`` or ``/dev/stdout`` for CSV on standard output.
    option : str
        The command-line option that named ``out``, as the errors name it.

    Raises
    ------
    ValueError
        One line naming the option and the fix: an unknown extension, or a folder that does not exist.
    """
    if is_stdout(out):
        sys.stdout.write(df.to_csv(index=False))
        return
    out = Path(out)
    suffixes = file_suffixes(out)
    check_folder(out, option)
    if ".jsonl" in suffixes or ".ndjson" in suffixes:
        df.to_json(out, orient="records", lines=True)
    elif ".json" in suffixes:
        df.to_json(out, orient="records")
    elif ".tsv" in suffixes:
        df.to_csv(out, sep="\t", index=False)
    elif ".csv" in suffixes:
        df.to_csv(out, index=False)
    elif ".parquet" in suffixes:
        df.to_parquet(out, index=False)
    else:
        raise ValueError(f"{option} {str(out)!r}: unknown format; use a {OUT_FORMATS} file name, or - for CSV on "
                         "standard output")
