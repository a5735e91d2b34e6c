"""No missing or weak secret ever means "no authentication"; secrets are written atomically."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykueue.api.meta.clock import SystemClock
from pykueue.apiserver.app import create_app
from pykueue.apiserver.bearer_token import MIN_TOKEN_LENGTH, load_or_create_token
from pykueue.apiserver.private_files import write_atomically
from pykueue.registry import Registry
from pykueue.store import Store


@pytest.mark.parametrize("token", ["", "   "])
def test_an_app_without_a_token_is_refused(token: str) -> None:
    with pytest.raises(ValueError, match="without a bearer token"):
        create_app(Registry(Store(None), clock=SystemClock()), token=token)


def test_a_new_token_is_made_and_kept(tmp_path: Path) -> None:
    token = load_or_create_token(tmp_path)
    assert len(token) >= MIN_TOKEN_LENGTH
    assert (tmp_path / "token").stat().st_mode & 0o777 == 0o600
    assert load_or_create_token(tmp_path) == token


@pytest.mark.parametrize("content", [b"", b"\n", b"short", b"x" * 40 + b" y", b"\xff\xfe" * 30])
def test_an_unusable_token_file_is_replaced(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "token").write_bytes(content)
    token = load_or_create_token(tmp_path)
    assert len(token) >= MIN_TOKEN_LENGTH
    assert (tmp_path / "token").read_text() == token


def test_an_unreadable_token_file_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "token"
    path.write_text("a" * 43)
    real_read_text = Path.read_text

    def denied(self: Path, *args: object, **kwargs: object) -> str:
        if self == path:  # root reads any file, so the permission error is made here
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", denied)
    token = load_or_create_token(tmp_path)
    monkeypatch.undo()
    assert token != "a" * 43
    assert path.read_text() == token


def test_a_token_path_that_cannot_be_replaced_refuses_to_start(tmp_path: Path) -> None:
    (tmp_path / "token").mkdir()  # neither readable as a token nor replaceable by a file
    with pytest.raises(IsADirectoryError):
        load_or_create_token(tmp_path)


def test_an_atomic_write_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_bytes(b"old")
    path.chmod(0o644)
    write_atomically(path, b"new")
    assert path.read_bytes() == b"new"
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["secret"]


def test_a_failed_atomic_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret"
    path.write_bytes(b"old")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pykueue.apiserver.private_files.os.fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["secret"]
