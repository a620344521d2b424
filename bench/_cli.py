"""The command-line options the benchmarks share: ``--device``, ``--out`` and, where a script
times repetitions, ``--reps`` and ``--trials``."""

from __future__ import annotations

import argparse
from typing import Any

import gpuarray as xp


def parser(doc: str | None = None, *, reps: int | None = None, trials: int | None = None,
           out: str = "", prog: str | None = None) -> argparse.ArgumentParser:
    """An argument parser with ``--device`` (default: the default device), ``--out`` (default
    ``out``) and, when given defaults, ``--reps`` and ``--trials``; a script adds its own.

    >>> parser(reps=5).parse_args(["--reps", "2"]).reps
    2
    """
    p = argparse.ArgumentParser(prog=prog, description=doc.strip().split("\n")[0] if doc else None)
    p.add_argument("--device", default="", help="gpuarray device (default: the default device)")
    p.add_argument("--out", default=out, help="where the results go" + (f" (default {out})" if out else ""))
    if reps is not None:
        p.add_argument("--reps", type=int, default=reps)
    if trials is not None:
        p.add_argument("--trials", type=int, default=trials)
    return p


def device(args: argparse.Namespace) -> Any:
    """The device ``--device`` names, else the default device."""
    return xp.Device(args.device) if args.device else xp.default_device()


def adapter_info(dev: Any) -> dict[str, Any]:
    """What the device's provider says about its adapter (``name``, ``adapter_type``, ...), or {}."""
    return dev.provider.device_info() if hasattr(dev, "provider") else {}
