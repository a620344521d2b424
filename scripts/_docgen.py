"""The command line of the scripts that generate a docs page from the code (``gen_coverage.py``,
``gen_numpy_coverage.py``): write the page, or with ``--check`` exit 1 when it is out of date."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def page_main(path: str, render: Callable[[], str], script: str, argv: list[str] | None = None) -> int:
    """Write ``render()`` to ``path`` (``--check``: compare instead, 1 when it differs)."""
    rel = os.path.relpath(path, ROOT)
    p = argparse.ArgumentParser()
    p.add_argument("--check", action="store_true", help=f"exit 1 if {rel} is out of date")
    a = p.parse_args(argv)
    text = render()
    if a.check:
        current = open(path).read() if os.path.exists(path) else ""
        if current != text:
            print(f"{rel} is out of date: run python scripts/{script}", file=sys.stderr)
            return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0
