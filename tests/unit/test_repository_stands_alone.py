"""The repository stands alone: no code, test, doc or config points at a document or folder outside it.

A reader of a fresh clone must be able to follow every reference. Numbered sections of an outside
document ("section 3.4" by its sign), a design document that is not in the repository, and folders beside the clone
are all references they cannot follow; say the thing in the project's own words instead, or name
Kueue's public concept (``docs/semantics.md`` lists them with links to Kueue's documentation).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCANNED_DIRS = ("src", "tests", "docs", "scripts", "charts")
SCANNED_FILES = ("README.md", "pyproject.toml", "Makefile", ".pre-commit-config.yaml", "Dockerfile")
SKIPPED_PARTS = {"__pycache__", ".egg-info"}

# Spelled in pieces so this file does not match itself.
SECTION = "\u00a7"
OUTSIDE_REFERENCES = {
    "a numbered section of an outside document": re.compile(SECTION + r"\s*\d|\bspec\s+" + SECTION),
    "a design document that is not in the repository": re.compile(r"\bDESIGN" + r"\.md\b"),
    "a folder beside the clone": re.compile(r"\.\./" + r"shared\b|/work/" + r"shared\b"),
}


def _text_files() -> dict[Path, str]:
    paths = [REPO / name for name in SCANNED_FILES if (REPO / name).is_file()]
    for top in SCANNED_DIRS:
        if (REPO / top).is_dir():
            paths += sorted(p for p in (REPO / top).rglob("*") if p.is_file())
    out = {}
    for path in paths:
        if any(part in SKIPPED_PARTS or part.endswith(".egg-info") for part in path.parts):
            continue
        try:
            out[path.relative_to(REPO)] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # images and other binary files
            continue
    return out


def outside_references(files: dict[Path, str]) -> list[str]:
    """``path:line: what`` for every line that points outside the repository."""
    found = []
    for path, text in files.items():
        for number, line in enumerate(text.splitlines(), start=1):
            for what, pattern in OUTSIDE_REFERENCES.items():
                if pattern.search(line):
                    found.append(f"{path}:{number}: {what}: {line.strip()[:100]}")
                    break
    return found


def test_the_scan_sees_the_repository() -> None:
    names = {p.as_posix() for p in _text_files()}
    assert {"README.md", "pyproject.toml", "Makefile", "docs/architecture.md", "tests/e2e/harness.py"} <= names
    assert any(n.startswith("src/pykueue/scheduler/") for n in names)


@pytest.mark.parametrize(
    "line",
    [
        "rules of spec " + SECTION + "3.4",
        "(" + SECTION + "2.4 step 11)",
        "the layers of DESIGN" + ".md",
        "lives in ../" + "shared/examples",
        'Path("/work/' + 'shared/examples")',
    ],
)
def test_each_kind_of_outside_reference_is_caught(line: str) -> None:
    found = outside_references({Path("probe.py"): f"a line in our own words\n{line}\n"})
    assert [f.split(":")[:2] for f in found] == [["probe.py", "2"]]


def test_nothing_points_outside_the_repository() -> None:
    found = outside_references(_text_files())
    assert not found, f"{len(found)} references outside the repository:\n" + "\n".join(found)
