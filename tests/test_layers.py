"""The package's layers import one way (issue 22).

Walks every module's imports (module-level and inside functions; ``if TYPE_CHECKING:`` blocks
are annotations, not imports) and fails on an import from a lower layer to a higher one, on an
import cycle between modules, and on an import of a gpuarray module inside a function that does
not say why it is deferred (``# deferred: <reason>``: a module that pulls in a heavy optional
dependency). The layer order is written once, here, bottom first; docs/architecture.md draws it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gpuarray"

# Bottom first. A module belongs to the first layer one of whose prefixes names it or a package
# above it; modules of one layer may import each other (without cycles) and every lower layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core: op and dtype tables, errors, settings, counters", ("gpuarray.core",)),
    ("graph: lazy nodes, shapes, views", ("gpuarray.graph",)),
    ("compiler: schedule, kernel IR, fusion, plan cache", ("gpuarray.compiler",)),
    ("render: WGSL source", ("gpuarray.render",)),
    ("providers: wgpu and in-process execution", ("gpuarray.providers",)),
    ("runtime: devices, planner, residency, replay", ("gpuarray.runtime",)),
    ("array object: GpuArray, indexing, views, methods", ("gpuarray.array_object",)),
    ("namespace: Array API functions by spec category", ("gpuarray.namespace",)),
    ("extensions: linalg, fft, random", ("gpuarray.linalg", "gpuarray.fft", "gpuarray.random")),
    ("interop: NumPy protocols, adapters, DLPack, dask", ("gpuarray.interop",)),
    ("entry points: the package, special, lib, the command line",
     ("gpuarray.special", "gpuarray.lib", "gpuarray.__main__", "gpuarray")),
]


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


MODULES = _modules()


def layer_of(module: str) -> int:
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_layers.py")


def _target(module: str, is_package: bool, node: ast.ImportFrom, alias: str) -> str | None:
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        full = ".".join(base + ([node.module] if node.module else []))
    else:
        full = node.module or ""
    if not full.startswith("gpuarray"):
        return None
    if f"{full}.{alias}" in MODULES:
        return f"{full}.{alias}"
    while full and full not in MODULES:
        full = full.rpartition(".")[0]
    return full or None


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports_of(module: str, path: Path) -> list[tuple[str, str, bool, int, str]]:
    source = path.read_text()
    lines = source.splitlines()
    is_package = path.name == "__init__.py"
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub, in_function)
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            targets: list[str | None] = []
            if isinstance(child, ast.ImportFrom):
                targets = [_target(module, is_package, child, a.name) for a in child.names]
            elif isinstance(child, ast.Import):
                for a in child.names:
                    name = a.name
                    while name.startswith("gpuarray") and name not in MODULES:
                        name = name.rpartition(".")[0]
                    targets.append(name if name.startswith("gpuarray") else None)
            for t in dict.fromkeys(targets):
                if t is not None and t != module:
                    out.append((module, t, in_function, child.lineno, lines[child.lineno - 1]))
            visit(child, inner)

    visit(ast.parse(source), False)
    return out


def imports() -> list[tuple[str, str, bool, int, str]]:
    """(importer, imported, inside a function, line, source line) for every gpuarray import."""
    return [row for module, path in MODULES.items() for row in _imports_of(module, path)]


IMPORTS = imports()


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_import_reaches_up() -> None:
    up = [f"{a} ({LAYERS[layer_of(a)][0].split(':')[0]}) imports {b} "
          f"({LAYERS[layer_of(b)][0].split(':')[0]}), line {line}"
          for a, b, _, line, _ in IMPORTS if layer_of(b) > layer_of(a)]
    assert not up, "imports from a lower layer to a higher one:\n" + "\n".join(up)


def test_no_import_cycle() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for a, b, *_ in IMPORTS:
        graph[a].add(b)
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                cycle = walk(n)
                if cycle:
                    return cycle
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(MODULES):
        if m not in state:
            cycle = walk(m)
            assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_deferred_imports_say_why() -> None:
    bare = [f"{a} line {line}: {src.strip()}" for a, _, inside, line, src in IMPORTS
            if inside and "# deferred:" not in src]
    assert not bare, ("imports of gpuarray modules inside functions (import at the top, or mark a "
                      "heavy optional dependency with '# deferred: <why>'):\n" + "\n".join(bare))


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_size(path: Path) -> None:
    n = len(path.read_text().splitlines())
    assert n <= 600, f"{path.relative_to(PACKAGE.parent)} has {n} lines; split it (at most 600)"


def test_package_root_holds_folders() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py", "special.py"], modules
