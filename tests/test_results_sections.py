"""``benchmarks/sections.py``: each stored run of a script with named runs is a RESULTS.md section of its own."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def sections(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import sections

    # the script renders its JSON's "text" (the real one needs a full benchmark output)
    stub = types.SimpleNamespace(summary_section=lambda data: data["text"])
    monkeypatch.setitem(sys.modules, "design_variants", stub)
    return sections


def _store(out: Path, name: str, text: str) -> None:
    (out / f"{name}.json").write_text(json.dumps({"text": text}))


def test_a_named_run_is_its_own_section_and_one_no_longer_stored_keeps_its_text(sections, tmp_path):
    old = ("# Results\n\n<!-- section: design_variants -->\n## first, old\n"
           "\n<!-- section: design_variants_b -->\n## b, old\n")
    _store(tmp_path, "design_variants_a", "## a, new")
    _store(tmp_path, "design_variants", "## first, new")
    text = sections.rerender(old, tmp_path)
    assert text == ("# Results\n\n<!-- section: design_variants -->\n## first, new\n"
                    "\n<!-- section: design_variants_a -->\n## a, new\n"
                    "\n<!-- section: design_variants_b -->\n## b, old\n")


def test_a_named_run_renders_even_when_the_scripts_first_run_is_not_stored(sections, tmp_path):
    _store(tmp_path, "design_variants_a", "## a")
    assert sections.rerender("# Results\n", tmp_path) == "# Results\n\n<!-- section: design_variants_a -->\n## a\n"
    assert sections.script_of("design_variants_a") == "design_variants"
    assert sections.script_of("robustness-accuracy") == "robustness"
    assert sections.script_of("discover_gain_calibration") == "discover_gain_calibration"


def test_a_stored_run_is_written_and_its_section_printed(sections, tmp_path, capsys):
    sections.store("design_variants_a", {"text": "## a"}, tmp_path)
    assert json.loads((tmp_path / "design_variants_a.json").read_text()) == {"text": "## a"}
    assert capsys.readouterr().out.startswith("## a\n")
