"""One writer per store file: an exclusive advisory lock, held from the first commit to close.

Owned by ``store/``; taken and released by :class:`pykueue.store.sqlite.SqliteBackend`.
Two processes (say, two ``pykueue up`` on one data directory) each keeping their own in-memory
index of the same file would hand out the same resourceVersions and overwrite each other's
objects without any error. So a store takes ``flock(LOCK_EX)`` on ``<path>.lock`` (a separate
file: opening and closing the database file itself would drop SQLite's own POSIX locks) at its
first commit and keeps it until closed; a second writer's commit fails with a clear error.
Stores that only read (a tool, a test checking what is on disk) never take it. The kernel
releases the lock when the process dies, ``kill -9`` included, so a crash leaves no stale lock.
"""

from __future__ import annotations

import fcntl
import os

__all__ = ["FileLock", "StoreInUse"]


class StoreInUse(OSError):
    """Another store (this process or another) holds the file."""


class FileLock:
    def __init__(self, path: str) -> None:
        self.path = path + ".lock"
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreInUse(f"in use by another store (pid {holder})") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd: int | None = fd

    def release(self) -> None:
        """Idempotent; the lock file stays (removing it would race with the next opener)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
