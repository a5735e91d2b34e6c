"""``--durability``: fsync (the default) makes SQLite fsync the WAL at every commit; os leaves it to the OS."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykueue.store.sqlite import SqliteBackend


@pytest.mark.parametrize(("durability", "synchronous"), [("fsync", "FULL"), ("os", "NORMAL")])
def test_each_mode_sets_sqlites_synchronous(tmp_path: Path, durability: str, synchronous: str) -> None:
    backend = SqliteBackend(str(tmp_path / "state.db"), durability=durability)
    try:
        assert backend.synchronous == synchronous
    finally:
        backend.close()


def test_the_default_survives_power_loss(tmp_path: Path) -> None:
    backend = SqliteBackend(str(tmp_path / "state.db"))
    try:
        assert backend.synchronous == "FULL"
    finally:
        backend.close()


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="durability 'sometimes'"):
        SqliteBackend(str(tmp_path / "state.db"), durability="sometimes")
