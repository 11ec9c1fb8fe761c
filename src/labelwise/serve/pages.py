"""The server's HTML pages and static files, filled in on the server.

The templates (``static/*.html``) hold ``{{name}}`` slots; :func:`page`
fills them with escaped text or with HTML built here from escaped parts.
"""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path

__all__ = ["STATIC", "label_buttons", "page", "static_file"]

STATIC = Path(__file__).parent / "static"
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}


@cache
def _template(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def page(template: str, markup: dict[str, str] | None = None, /, **text: object) -> str:
    """Template file ``template`` with its slots filled: ``text`` values escaped, ``markup`` values as given."""
    out = _template(template)
    for key, value in text.items():
        out = out.replace("{{" + key + "}}", html.escape(str(value)))
    for key, value in (markup or {}).items():
        out = out.replace("{{" + key + "}}", value)
    return out


def static_file(name: str) -> tuple[str, str] | None:
    """``(text, media type)`` of a served static file (scripts and styles only), else ``None``."""
    suffix = Path(name).suffix
    if "/" in name or suffix not in (".js", ".css") or not (STATIC / name).is_file():
        return None
    return _template(name), _TYPES[suffix]


def label_buttons(n_classes: int) -> str:
    """One button per answer with its key: ``a``/``x`` for a binary pool, ``1``-``9`` for classes."""
    if n_classes == 2:
        keys = [("a", 1, "accept (1)"), ("x", 0, "reject (0)")]
    else:
        keys = [(str(k + 1), k, f"class {k}") for k in range(min(n_classes, 9))]
    return "".join(f'<button type="button" data-label="{y}" data-key="{html.escape(k)}"><kbd>{html.escape(k)}</kbd> '
                   f"{html.escape(text)}</button>" for k, y, text in keys)
