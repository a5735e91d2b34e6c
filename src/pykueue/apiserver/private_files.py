"""Crash-safe writes of the embedded server's secrets and certificates.

The token, the TLS keys and certificates and the kubeconfig decide who may talk to the server. A
crash in the middle of a plain ``open(..., "w")`` leaves an empty or truncated file, and an empty
token once meant "no authentication". So every such file is written to a temporary file in the
same folder, fsynced, renamed over the old one and the folder fsynced: a reader sees the old
content or the new, never a part. Files are created with the given mode (0600 for secrets) before
a byte is written, so a secret is never readable by others, even for a moment.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` durably and atomically (mode applied before writing)."""
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (the new directory entry)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
