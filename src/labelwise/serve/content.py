"""What an annotator sees of an item: the ``--content`` file's columns, rendered as escaped HTML.

The content file (CSV, TSV, JSONL or Parquet) has an id column and any
other columns.  They are shown as

* a record pair, side by side, when columns come in pairs named
  ``left_X``/``right_X``, ``X_left``/``X_right``, ``a_X``/``b_X`` or
  ``X_a``/``X_b`` (fields that differ are highlighted);
* an image, for columns named ``image``/``image_url``/``image_path`` or
  whose value ends in an image extension (URLs as they are, local paths,
  relative to the content file, through ``/image/{item}/{column}``);
* text otherwise.

Every value is HTML-escaped.  Items are looked up by pool position in an
array built once, so showing an item never scans the pool.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from ..pool import Pool, PoolError, read_pool_file
from ..pool.ids import match_pool_ids

__all__ = ["Content"]

_PAIRS = (("left_", "right_", True), ("a_", "b_", True), ("_left", "_right", False), ("_a", "_b", False))
_IMAGE_NAMES = {"image", "image_url", "image_path", "img"}
_IMAGE_VALUE = re.compile(r"\.(png|jpe?g|gif|webp|svg)(\?.*)?$", re.IGNORECASE)


class Content:
    """Item content keyed by pool position, rendered as HTML fragments.

    Parameters
    ----------
    pool : Pool
    path : Path, optional
        The content file; without it an item shows its id alone.
    id_col : str
    predictions : bool
        Show the systems' predictions and scores (hidden by default, to avoid anchoring).
    """

    def __init__(self, pool: Pool, path: Path | None = None, id_col: str = "item_id", predictions: bool = False):
        self.pool, self.predictions = pool, predictions
        self.folder = None if path is None else Path(path).resolve().parent
        self.frame = pd.DataFrame(index=pd.RangeIndex(0))
        self.row = np.full(pool.n_items, -1, dtype=np.int64)
        if path is not None:
            if not Path(path).is_file():
                raise PoolError(f"--content {str(path)!r} does not exist; give the CSV/Parquet file of the items' "
                                "content")
            frame = read_pool_file(Path(path), id_col=id_col)
            if id_col not in frame.columns:
                raise PoolError(f"--content {str(path)!r}: no id column {id_col!r}; name it with --content-id")
            pos = pool.index.get_indexer(match_pool_ids(frame[id_col].to_numpy(), pool.item_ids))
            if not (pos >= 0).any():
                raise PoolError(f"--content {str(path)!r}: none of its ids is in the session's pool; check "
                                f"the id column {id_col!r}")
            self.frame = frame.drop(columns=[id_col]).reset_index(drop=True)
            self.row[pos[pos >= 0]] = np.flatnonzero(pos >= 0)
        self.pairs = _pairs(list(self.frame.columns))
        paired = {c for pair in self.pairs for c in pair[1:]}
        self.singles = [c for c in self.frame.columns if c not in paired]

    def values(self, item: int) -> dict[str, str]:
        """The content of the item at pool position ``item``, as text (empty without content)."""
        r = self.row[item]
        if r < 0:
            return {}
        row = self.frame.iloc[[r]].to_dict("records")[0]  # each column's own type: an integer stays one
        return {c: "" if pd.isna(v) else str(v) for c, v in row.items()}

    def image_file(self, item: int, column: str) -> Path | None:
        """The local image file named in ``column`` of the item, if it is one (else ``None``)."""
        value = self.values(item).get(column, "")
        if not value or _is_url(value) or not _is_image(column, value):
            return None
        path = Path(value) if Path(value).is_absolute() else self.folder / value
        return path if path.is_file() else None

    def html(self, item: int) -> str:
        """The item's HTML fragment: its id, its content and (if shown) the systems' outputs; all escaped."""
        item_id = self.pool.item_ids[item]
        values = self.values(item)
        parts = [f'<div class="item-id">item {html.escape(str(item_id))}</div>']
        if self.pairs and values:
            parts.append(self._pair_table(values))
        for column in self.singles:
            value = values.get(column, "")
            if _is_image(column, value):
                src = value if _is_url(value) else f"/image/{quote(str(item_id), safe='')}/{quote(column, safe='')}"
                parts.append(f'<figure><img alt="{html.escape(column)}" src="{html.escape(src)}">'
                             f"<figcaption>{html.escape(column)}</figcaption></figure>")
            else:
                parts.append(f'<div class="field"><div class="name">{html.escape(column)}</div>'
                             f'<div class="text">{html.escape(value)}</div></div>')
        if self.predictions:
            parts.append(self._outputs(item))
        return "\n".join(parts)

    def _pair_table(self, values: dict[str, str]) -> str:
        rows = []
        for name, left, right in self.pairs:
            a, b = values.get(left, ""), values.get(right, "")
            differ = ' class="differ"' if a.strip().casefold() != b.strip().casefold() else ""
            rows.append(f"<tr{differ}><th>{html.escape(name)}</th><td>{html.escape(a)}</td>"
                        f"<td>{html.escape(b)}</td></tr>")
        return '<table class="pair"><tr><th></th><th>left</th><th>right</th></tr>' + "".join(rows) + "</table>"

    def _outputs(self, item: int) -> str:
        out = self.pool.outputs(np.array([item]))
        rows = []
        for s, name in enumerate(self.pool.system_names):
            pred = "" if out.preds is None else f"prediction {int(out.preds[0, s])}"
            score = "" if out.scores is None else f"score {float(out.scores[0, s]):.3g}"
            rows.append(f"<li>{html.escape(name)}: {', '.join(x for x in (pred, score) if x)}</li>")
        return '<ul class="outputs">' + "".join(rows) + "</ul>"


def _pairs(columns: list[str]) -> list[tuple[str, str, str]]:
    """(field, left column, right column) for the first naming scheme that pairs any columns."""
    for one, two, prefix in _PAIRS:
        found = []
        for c in columns:
            if prefix and c.startswith(one) and two + c[len(one):] in columns:
                found.append((c[len(one):], c, two + c[len(one):]))
            elif not prefix and c.endswith(one) and c[: -len(one)] + two in columns:
                found.append((c[: -len(one)], c, c[: -len(one)] + two))
        if found:
            return found
    return []


def _is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


def _is_image(column: str, value: str) -> bool:
    return bool(value) and (column.lower() in _IMAGE_NAMES or bool(_IMAGE_VALUE.search(value)))
