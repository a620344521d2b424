"""Generated documentation pages match the code."""

from __future__ import annotations

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", f"{name}.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_coverage_page_is_current():
    gen = _load("gen_coverage")
    with open(os.path.join(ROOT, "docs", "coverage.md")) as f:
        assert f.read() == gen.render(), "docs/coverage.md is out of date: run python scripts/gen_coverage.py"
