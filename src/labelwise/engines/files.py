"""The Parquet files of an engine pool: expanding globs and fingerprinting their content cheaply."""

from __future__ import annotations

import glob
import hashlib
import struct
from collections.abc import Sequence
from pathlib import Path

from ..pool import PoolError

__all__ = ["expand_paths", "fingerprint"]


def expand_paths(paths: str | Path | Sequence[str | Path]) -> list[Path]:
    """The files named by ``paths`` (each a file or a glob), sorted, each once.

    Raises
    ------
    PoolError
        When a name matches no file, or a file is not Parquet.
    """
    names = [paths] if isinstance(paths, str | Path) else list(paths)
    found: set[Path] = set()
    for name in names:
        matched = glob.glob(str(name))
        if not matched:
            raise PoolError(f"pool file {str(name)!r}: no such file; give a Parquet file or a glob such as "
                            "'data/*.parquet'")
        found.update(Path(m).resolve() for m in matched)
    for path in found:
        _require_parquet(path)
    return sorted(found)


def _require_parquet(path: Path) -> None:
    """Raise unless ``path`` is a file that starts and ends with Parquet's magic bytes ``PAR1``."""
    if path.is_dir():
        raise PoolError(f"pool file {str(path)!r} is a folder; give its Parquet files as a glob, e.g. "
                        f"'{path}/*.parquet'")
    with path.open("rb") as f:
        head = f.read(4)
        f.seek(max(f.seek(0, 2) - 4, 0))
        tail = f.read(4)
    if head != b"PAR1":
        raise PoolError(f"pool file {str(path)!r}: not a Parquet file (it does not start with PAR1); engine pools "
                        "read Parquet: write it with pandas' to_parquet, or read a CSV, TSV or JSON-lines pool in "
                        "memory, without --engine")
    if tail != b"PAR1":
        raise PoolError(f"pool file {str(path)!r} starts as a Parquet file but does not end as one (no PAR1 "
                        "footer); it may be truncated or still being written: write it again with pandas' to_parquet")


def _footer(path: Path) -> bytes:
    """The Parquet footer: the file metadata (schema, row groups, column-chunk sizes, offsets and statistics)."""
    with path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        if size < 12:
            raise PoolError(f"pool file {str(path)!r}: not a Parquet file (too short)")
        f.seek(size - 8)
        length, magic = struct.unpack("<I4s", f.read(8))
        if magic != b"PAR1" or length + 8 > size:
            raise PoolError(f"pool file {str(path)!r}: not a Parquet file (no PAR1 footer)")
        f.seek(size - 8 - length)
        return f.read(length)


def fingerprint(files: Sequence[Path]) -> str:
    """SHA-256 over every file's name, size and Parquet footer.

    The footer records each column chunk's compressed size, offset and
    min/max statistics, so rewriting a file with other rows or values
    changes it (a rewrite with the same content may keep it, which is what
    a content fingerprint should do), while reading a few kilobytes per
    file instead of the data.
    """
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + str(path.stat().st_size).encode() + b"\0")
        digest.update(_footer(path))
    return digest.hexdigest()
