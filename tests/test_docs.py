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


def test_numpy_coverage_page_is_current():
    import re

    import numpy as np
    import pytest

    gen = _load("gen_numpy_coverage")
    with open(os.path.join(ROOT, "docs", "numpy-coverage.md")) as f:
        text = f.read()
    made = re.search(r"with NumPy (\d+\.\d+)", text)
    if made is None or made.group(1) != ".".join(np.__version__.split(".")[:2]):
        pytest.skip(f"docs/numpy-coverage.md was generated with another NumPy than {np.__version__}")
    assert text == gen.render(), "docs/numpy-coverage.md is out of date: run python scripts/gen_numpy_coverage.py"
    counts = re.search(r"\*\*(\d+)\*\* functions dispatch through `__array_function__` and are handled", text)
    assert counts is not None and int(counts.group(1)) >= 250
