from __future__ import annotations

import subprocess
import sys
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


@pytest.fixture(scope="session")
def kueue_crds_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``pykueue crds`` prints (Kueue's and JobSet's CRDs), written once per test session."""
    path = tmp_path_factory.mktemp("crds") / "kueue-crds.yaml"
    printed = subprocess.run([sys.executable, "-m", "pykueue", "crds"], capture_output=True, text=True, check=True)
    path.write_text(printed.stdout)
    return path


@pytest.fixture
def kueue_api(api_only: Pykueue, kueue_crds_file: Path) -> Pykueue:
    """``pykueue up --no-kueue`` with Kueue's and JobSet's CRDs applied the way a user applies them
    (``kubectl apply --server-side``): their kinds served, no pykueue controllers."""
    api_only.kubectl("apply", "--server-side", "-f", str(kueue_crds_file))
    return api_only
