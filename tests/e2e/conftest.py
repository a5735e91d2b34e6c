from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import Pykueue


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def pykueue(tmp_path: Path) -> Iterator[Pykueue]:
    """A fresh ``pykueue up`` (API + controllers + embedded cluster) with its own data dir."""
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def api_only(tmp_path: Path) -> Iterator[Pykueue]:
    """``pykueue up --no-kueue``: the API server alone."""
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--no-kueue"]).start()
    try:
        yield server
    finally:
        server.stop()
