"""docs/scheduler-api.md's "Inside the package" table names every module of scheduler/, and only modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "pykueue" / "scheduler"


def _section() -> str:
    text = (ROOT / "docs" / "scheduler-api.md").read_text(encoding="utf-8")
    start = text.index("## Inside the package")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _named_paths() -> set[str]:
    table = "\n".join(line for line in _section().splitlines() if line.startswith("|"))
    return set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+(?:\.py|/))`", table))


def test_every_path_named_exists() -> None:
    missing = sorted(p for p in _named_paths() if not (PACKAGE / p).exists())
    assert not missing, f"docs/scheduler-api.md names modules that do not exist: {missing}"


def test_every_module_is_named() -> None:
    named = _named_paths()
    unnamed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.name == "__init__.py":
            continue
        if str(rel) not in named and not any(str(rel).startswith(p) for p in named if p.endswith("/")):
            unnamed.append(str(rel))
    assert not unnamed, f"docs/scheduler-api.md's package table leaves out: {unnamed}"
