"""The command line's registration stays light: help lists the registries' names without importing them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import labelwise as lw
from labelwise.cli.options import BUILTIN_DESIGNS, BUILTIN_MEASURES
from labelwise.designs import DESIGNS
from labelwise.measures import MEASURE_NAMES


def test_builtin_names_match_the_registries():
    assert BUILTIN_MEASURES == MEASURE_NAMES
    assert BUILTIN_DESIGNS == tuple(sorted(DESIGNS))


def test_cli_imports_neither_pandas_nor_the_designs():
    """`labelwise status` and the stored `estimate` read a few rows: the commands' modules import the library lazily."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    heavy = ("pandas", "labelwise.designs", "labelwise.measures", "labelwise.pool", "labelwise.session", "fastapi")
    code = f"import sys, labelwise.cli; print([m for m in {heavy!r} if m in sys.modules])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=60)
    assert proc.stdout.strip() == "[]"


def test_public_names_are_listed_and_resolve():
    assert set(lw.__all__) <= set(dir(lw))
    for name in lw.__all__:
        assert getattr(lw, name) is not None
    import labelwise.simulate  # noqa: F401  (the submodule does not shadow the function)

    assert callable(lw.simulate) and lw.simulate.__name__ == "simulate"
