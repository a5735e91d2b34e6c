"""Find import cycles among the modules of one package, counting every import the source names.

    .venv/bin/python scripts/import_cycles.py pykueue.api [--src src]

import-linter reads the same imports but cannot see a cycle that hides behind ``if TYPE_CHECKING:``
or inside a function body: Python only breaks such cycles at run time, and the code still has
modules that need each other. This script parses each module with ``ast`` and takes *every*
``import`` / ``from ... import`` it contains (top level, under ``if TYPE_CHECKING:``, inside
functions), resolves relative imports, keeps the edges that stay inside the package, and exits 1
printing one cycle (``a -> b -> a``) if the graph has any; otherwise it prints how many modules it
checked and exits 0. ``from pkg import name`` counts as an import of ``pkg.name`` when that is a
module, else of ``pkg``. A package's ``__init__`` is only a node when something imports it.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

Graph = dict[str, set[str]]


def _modules(src: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``src``: dotted name -> file (``__init__`` as the package)."""
    root = src.joinpath(*package.split("."))
    if root.is_file() or root.with_suffix(".py").is_file():
        return {package: root if root.is_file() else root.with_suffix(".py")}
    if not (root / "__init__.py").is_file():
        raise SystemExit(f"import_cycles: no package {package!r} under {src}")
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module of the package that ``name`` names or lies in (longest known prefix)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in modules else base)
    edges = {_resolve(t, modules) for t in targets}
    return {e for e in edges if e is not None and e != module}


def build_graph(src: Path, package: str) -> Graph:
    modules = _modules(src, package)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: Graph) -> list[str] | None:
    """One cycle as a path whose last element repeats its first, or None (iterative DFS)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in sorted(graph):
        if state.get(start):
            continue
        path: list[str] = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", help="dotted package name, e.g. pykueue.api")
    parser.add_argument("--src", default="src", help="directory that holds the top-level package")
    args = parser.parse_args(argv)
    graph = build_graph(Path(args.src), args.package)
    cycle = find_cycle(graph)
    if cycle is not None:
        print(f"import cycle in {args.package}: " + " -> ".join(cycle))
        return 1
    print(f"no import cycle among the {len(graph)} modules of {args.package}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
