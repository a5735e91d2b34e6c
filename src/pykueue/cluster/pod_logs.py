"""Reading a container's log for ``GET pods/<name>/log``: from an offset, off the event loop, following.

Owned by ``cluster/``; the node agents build a reader for a container and :func:`stream_log` turns it
into the chunks the API server sends. What the kubelet does, and so what this does:

- without ``previous``, the running (or last) instance's current log file is read, not the files
  rotation set aside (``kubectl logs`` on a real cluster shows at most one file, 10 MiB by default);
  with it, the current file of the instance before (kept when a container restarts);
- ``tailLines`` starts that many records before the end (found by reading backwards in blocks),
  ``sinceTime``/``sinceSeconds`` skip older records, ``timestamps`` keeps each record's timestamp
  (:mod:`.cri_log`); ``limitBytes`` is applied by the API server on what is sent;
- ``follow`` keeps the file open and, every :data:`POLL_SECONDS`, reads what was appended since its
  offset: nothing already sent is read again. When the shim rotates the file, the open descriptor
  still reads the rest of the old file, then the reader moves on to the file that replaced it
  (found by inode in the rotation chain), so a rotation loses and repeats nothing. It ends once the
  container has ended (its exit is recorded, or its log was set aside because it restarted, or the
  pod is gone) and everything written was sent.

Every read runs in a worker thread (``asyncio.to_thread``), at most :data:`CHUNK_BYTES` at a time: a
large log never holds the event loop, and a follower that has caught up costs one ``fstat`` and one
``stat`` per poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from pykueue.cluster import cri_log

__all__ = [
    "CHUNK_BYTES",
    "POLL_SECONDS",
    "FileLogReader",
    "LogReadOptions",
    "LogReader",
    "MemoryLogReader",
    "stream_log",
]

POLL_SECONDS = 0.25
"""How often a follower that has caught up looks for new output."""
CHUNK_BYTES = 256 * 1024
"""The most one read takes from a log file (one worker-thread call)."""


@dataclass(frozen=True, slots=True)
class LogReadOptions:
    """What a reader needs of the request's options (the API server validated them)."""

    timestamps: bool = False
    tail_lines: int | None = None
    since: bytes | None = None
    """A :func:`cri_log.timestamp`: records older than this are skipped."""


class FileLogReader:
    """Reads one container's log file from an offset, and follows it across rotation.

    Blocking: call its methods from a worker thread. ``path`` is the current log file; rotation renames
    it ``path.1`` (then ``.2`` ...); ``previous`` is where a restart sets the whole file aside.
    """

    def __init__(
        self, path: Path, options: LogReadOptions, *, previous: Path | None = None, max_files: int = 5
    ) -> None:
        self.path = path
        self.previous = previous
        self.options = options
        self.max_files = max_files
        self.ended = False
        """The file this reader follows will not grow again (set aside, removed), and was read to its end."""
        self._fd: int | None = None
        self._inode = 0
        self._rest = b""
        self._since = options.since

    def open(self) -> None:
        """Open the current file and place the offset (``tailLines`` from the end, else the start).
        ``FileNotFoundError`` when there is none."""
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        info = os.fstat(fd)
        self._fd, self._inode = fd, info.st_ino
        if self.options.tail_lines is not None:
            os.lseek(fd, cri_log.tail_offset(fd, self.options.tail_lines, info.st_size), os.SEEK_SET)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def read(self) -> bytes:
        """What was written since the last read (at most about :data:`CHUNK_BYTES`), rendered;
        ``b""`` when there is nothing new. Moves on to the next file after a rotation."""
        while self._fd is not None:
            data = os.read(self._fd, CHUNK_BYTES)
            if data:
                rendered = self._render(data)
                if rendered:
                    return rendered
                continue  # all older than sinceTime, or half a record: read on
            if not self._next_file():
                return b""
        return b""

    def _render(self, data: bytes) -> bytes:
        data = self._rest + data
        cut = data.rfind(b"\n") + 1
        records, self._rest = data[:cut], data[cut:]  # a record being written is read next time
        if self._since is not None and records:
            records, passed = cri_log.since_filter(records, self._since)
            if passed:
                self._since = None  # records are in time order: every later one is newer
        return cri_log.render(records, timestamps=self.options.timestamps) if records else b""

    def _next_file(self) -> bool:
        """At the end of the open file: switch to the file that followed it, if rotation made one.
        Returns whether it switched; sets ``ended`` when the file will never grow again."""
        try:
            current = os.stat(self.path).st_ino
        except FileNotFoundError:
            current = 0
        if current == self._inode:
            return False  # still the file being written: nothing new yet
        chain = [self.path.with_name(f"{self.path.name}.{i}") for i in range(self.max_files - 1, 0, -1)]
        chain.append(self.path)
        inodes = [_inode(p) for p in chain]
        if self._inode in inodes:
            successor = chain[inodes.index(self._inode) + 1]
        elif (self.previous is not None and _inode(self.previous) == self._inode) or not current:
            self.ended = True  # set aside at a restart, or the pod's folder is gone
            self.close()
            return False
        else:  # fell more than the kept files behind: continue from the oldest one left
            successor = next((p for p, ino in zip(chain, inodes, strict=True) if ino), self.path)
        try:
            fd = os.open(successor, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return False  # renamed again meanwhile: the next read looks again
        self.close()
        self._fd, self._inode = fd, os.fstat(fd).st_ino
        return True


def _inode(path: Path) -> int:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return 0


class MemoryLogReader:
    """A log kept in memory as records (a simulated node's): the same options, nothing to follow."""

    def __init__(self, records: bytes, options: LogReadOptions) -> None:
        self._records = records
        self.options = options
        self.ended = False

    def open(self) -> None:
        records = self._records
        if self.options.tail_lines is not None:
            lines = records.splitlines(keepends=True)
            records = b"".join(lines[-self.options.tail_lines :]) if self.options.tail_lines > 0 else b""
        if self.options.since is not None:
            records, _ = cri_log.since_filter(records, self.options.since)
        self._records = records

    def read(self) -> bytes:
        records, self._records = self._records, b""
        return cri_log.render(records, timestamps=self.options.timestamps) if records else b""

    def close(self) -> None:
        self._records = b""


LogReader = FileLogReader | MemoryLogReader


async def stream_log(reader: LogReader, *, follow: bool, running: Callable[[], bool]) -> AsyncIterator[bytes]:
    """The log as chunks: what is there now, then (``follow``) what is written until the container
    ends (``running()`` turns false) and everything it wrote was sent. Reads run in worker threads."""
    try:
        while True:
            still_running = follow and running()  # asked before reading: nothing written before the end is missed
            chunk = await asyncio.to_thread(reader.read)
            if chunk:
                yield chunk
                continue
            if not still_running or reader.ended:
                return
            yield b""  # a heartbeat: the consumer sees a client that went away, or a server stopping
            await asyncio.sleep(POLL_SECONDS)
    finally:
        with contextlib.suppress(OSError):
            reader.close()
