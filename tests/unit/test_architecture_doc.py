"""The architecture and semantics pages stay true to the tree: every path they name exists, and every
scheduling-scenario topic is a heading of the semantics page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pykueue.testing.scenario_format import SCENARIO_TOPICS

REPO = Path(__file__).resolve().parents[2]
DOCS = ("docs/architecture.md", "docs/semantics.md")
# A repository path in backquotes: starts at a top-level folder of the repository.
PATH_IN_BACKQUOTES = re.compile(r"`((?:src|tests|docs|scripts)/[^`\s]*)`")


def named_paths(text: str) -> list[str]:
    """Paths in backquotes, except placeholders such as ``src/pykueue/controllers/jobs/<name>.py``."""
    return [p for p in PATH_IN_BACKQUOTES.findall(text) if "<" not in p]


def heading_slugs(text: str) -> set[str]:
    """GitHub's anchors for the page's headings: lower case, punctuation dropped, spaces to dashes."""
    slugs = set()
    for line in text.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            slugs.add(re.sub(r"[^a-z0-9 -]", "", title).replace(" ", "-"))
    return slugs


def test_paths_are_found_in_backquotes() -> None:
    assert named_paths("see `src/pykueue/cli/up.py` and `tests/e2e/`, not `pykueue up` nor `docs/<x>.md`") == [
        "src/pykueue/cli/up.py",
        "tests/e2e/",
    ]


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_the_page_names_exists(doc: str) -> None:
    paths = named_paths((REPO / doc).read_text(encoding="utf-8"))
    assert len(paths) >= 10, "the page names the modules it talks about"
    missing = sorted({p for p in paths if not (REPO / p).exists()})
    assert not missing, f"{doc} names paths that do not exist: {missing}"


def test_the_architecture_page_covers_what_a_newcomer_needs() -> None:
    slugs = heading_slugs((REPO / "docs/architecture.md").read_text(encoding="utf-8"))
    assert {
        "the-layers-and-why",
        "the-life-of-a-job",
        "where-each-of-kueues-rules-lives",
        "how-to-add-a-job-integration",
        "how-to-add-a-served-kind",
    } <= slugs


def test_every_scenario_topic_is_a_heading_of_the_semantics_page() -> None:
    slugs = heading_slugs((REPO / "docs/semantics.md").read_text(encoding="utf-8"))
    assert set(SCENARIO_TOPICS) <= slugs, sorted(set(SCENARIO_TOPICS) - slugs)


def test_every_layer_of_the_import_contract_is_explained() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    layers = re.search(r'type = "layers"\s*\nlayers = \[(.*?)\]', pyproject, re.S)
    assert layers is not None
    packages = re.findall(r'"pykueue\.(\w+)"', layers.group(1))
    page = (REPO / "docs/architecture.md").read_text(encoding="utf-8")
    unexplained = [p for p in packages if f"`src/pykueue/{p}/`" not in page]
    assert not unexplained, f"layers missing from docs/architecture.md: {unexplained}"


def test_tests_build_objects_with_the_one_builder_library() -> None:
    """The architecture page promises one builder library in `src/pykueue/testing/builders/`."""
    strays = sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").rglob("*builders*.py"))
    strays = [p for p in strays if not Path(p).name.startswith("test_")]
    assert not strays, f"builder modules outside the builder library: {strays}"
    assert (REPO / "src/pykueue/testing/builders/__init__.py").exists()
