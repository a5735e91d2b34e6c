"""Fixtures for the store tests: one store per backend (in memory, SQLite file)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pykueue.store import Store


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The same behaviour is required with and without a database behind the store."""
    s = Store(None if request.param == "memory" else str(tmp_path / "store.db"))
    yield s
    s.close()
