"""Matmul configurations by name, and the forced one: ``use_config`` (or
``GPUARRAY_MATMUL_CONFIG=<name>``) makes every product take one configuration, for tests and
benchmarks (``wgpu_matmul.CANDIDATES`` names the tuned ones).

>>> config_name(parse_config("b128x128x8_8x8_2"))
'b128x128x8_8x8_2'
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from ..core import config as _config
from ..render.wgsl_matmul import Tiles
from ..render.wgsl_matmul_blocked import BlockTiles

Config = Tiles | BlockTiles
CONFIG_ENV = "GPUARRAY_MATMUL_CONFIG"


def config_name(cfg: Config) -> str:
    """A configuration's name: ``b128x128x8_8x8_2`` (blocked) or ``g64x128x16_4x8`` (generic)."""
    if isinstance(cfg, BlockTiles):
        return cfg.name
    return f"g{cfg.bm}x{cfg.bn}x{cfg.bk}_{cfg.tm}x{cfg.tn}" + ("" if cfg.strided else "_c")


def parse_config(name: str) -> Config:
    """The configuration named ``name`` (see ``config_name``; any sizes, not only ``CANDIDATES``)."""
    try:
        kind, rest = name[0], name[1:]
        parts = rest.split("_")
        bm, bn, bk = (int(v) for v in parts[0].split("x"))
        tm, tn = (int(v) for v in parts[1].split("x"))
        if kind == "b":
            upper = parts[-1] == "u"
            parts = parts[:-1] if upper else parts
            gram = parts[-1] == "g"
            parts = parts[:-1] if gram else parts
            lanes = parts[3] if len(parts) > 3 else "w8"
            wx = 0 if lanes == "r" else int(lanes[1:]) if lanes[0] == "w" else -1
            cfg: Config = BlockTiles(bm, bn, bk, tm, tn, int(parts[2]), wx, gram, upper)
        elif kind == "g":
            cfg = Tiles(bm, bn, bk, tm, tn, parts[2:] != ["c"])
        else:
            raise ValueError(kind)
        cfg.check()
        return cfg
    except (ValueError, IndexError):
        raise ValueError(f"matmul configuration {name!r}: expected e.g. 'b128x128x8_8x8_2' or "
                         "'g64x64x16_4x4'") from None


_forced: list[Config] = []


@contextlib.contextmanager
def use_config(cfg: Config | str) -> Iterator[Config]:
    """Force one matmul configuration inside the block (a :class:`BlockTiles` applies to float32
    and float64 only; other dtypes keep ``choose_tiles``). Entering and leaving it change the
    settings' generation, so that no evaluation plan recorded with other tiles is replayed."""
    c = parse_config(cfg) if isinstance(cfg, str) else cfg
    c.check()
    _forced.append(c)
    _config.bump()          # evaluation plans recorded before (runtime/replay.py) hold other tiles
    try:
        yield c
    finally:
        _forced.pop()
        _config.bump()


def forced() -> Config | None:
    if _forced:
        return _forced[-1]
    name = os.environ.get(CONFIG_ENV, "").strip()
    return parse_config(name) if name else None
