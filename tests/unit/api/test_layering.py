"""api/'s modules import at the top: an import inside a function must say, on the line above or
on its own line, why it is deferred (never to dodge a cycle: scripts/import_cycles.py counts it)."""

from __future__ import annotations

import ast
from pathlib import Path

API = Path(__file__).resolve().parents[3] / "src" / "pykueue" / "api"


def _nested_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.If)):
            for child in ast.walk(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    above = lines[child.lineno - 2] if child.lineno > 1 else ""
                    found.append((child.lineno, above.strip() + " " + lines[child.lineno - 1].strip()))
    return found


def test_every_import_below_module_level_in_api_is_a_documented_deferral() -> None:
    offenders = []
    for path in sorted(API.rglob("*.py")):
        for lineno, line in _nested_imports(path):
            if "# deferred" not in line:
                offenders.append(f"{path.relative_to(API)}:{lineno}: {line.strip()}")
    assert offenders == [], "\n".join(offenders)
