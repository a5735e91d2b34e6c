"""Container log records in the kubelet's on-disk format, and how ``kubectl logs`` options read them.

Owned by ``cluster/``. A ``process`` node's shim (:mod:`.container_shim`, standard library only, so it
writes the same format by itself) stores a container's output as the CRI runtimes do, one record a
line::

    2026-12-01T20:07:10.123456789Z stdout F a whole line of output
    2026-12-01T20:07:10.123456789Z stdout P the start of a line that was not finished yet

``F`` ends a line, ``P`` is part of one (the next record continues it). The timestamp is when the
shim read the output, in UTC with nine fraction digits, so timestamps compare as bytes. These
pure functions turn records into what the kubelet answers: the content alone, or each record's
timestamp and a space before it (``timestamps=true``); only records not older than ``sinceTime``;
the last ``tailLines`` records. They work on whole blocks of records with compiled regular
expressions, never a Python loop per line on the common path.
"""

from __future__ import annotations

import os
import re
import time

__all__ = ["record", "render", "since_filter", "tail_offset", "timestamp"]

_RECORD_PREFIX = re.compile(rb"^[^ \n]+ (?:stdout|stderr) (?:F |P ([^\n]*)\n)", re.MULTILINE)
"""A record's prefix; for a ``P`` record also its content and newline (a partial line has none)."""
_RECORD_PREFIX_KEEP_TIME = re.compile(rb"^([^ \n]+) (?:stdout|stderr) (?:F |P ([^\n]*)\n)", re.MULTILINE)
_TAIL_BLOCK = 64 * 1024


def timestamp(ns: int | None = None) -> bytes:
    """``ns`` (nanoseconds since the epoch, default now) as a record's timestamp."""
    ns = time.time_ns() if ns is None else ns
    seconds, fraction = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)).encode() + b".%09dZ" % fraction


def record(text: str, ns: int | None = None) -> bytes:
    """``text`` (one or more lines) as ``F`` records: what the agent writes itself (a start error)."""
    prefix = timestamp(ns) + b" stdout F "
    lines = text.encode(errors="replace").rstrip(b"\n").split(b"\n")
    return b"".join(prefix + line + b"\n" for line in lines)


def render(records: bytes, *, timestamps: bool) -> bytes:
    """Whole records (ending in a newline) as the client sees them. Lines that are not records (a
    log written before this format) pass unchanged."""
    if timestamps:
        return _RECORD_PREFIX_KEEP_TIME.sub(rb"\1 \2", records)
    return _RECORD_PREFIX.sub(rb"\1", records)


def since_filter(records: bytes, since: bytes) -> tuple[bytes, bool]:
    """The records not older than ``since`` (a :func:`timestamp`), and whether any was.

    Records are in time order, so once one is kept, all later ones are: the caller stops filtering.
    """
    if not records:
        return records, False
    last_start = records.rfind(b"\n", 0, len(records) - 1) + 1
    if records[last_start : records.find(b" ", last_start)] < since:
        return b"", False  # the whole block is older: one comparison
    start = 0
    while start < len(records):
        if records[start : records.find(b" ", start)] >= since:
            return records[start:], True
        start = records.find(b"\n", start) + 1
    return b"", False


def tail_offset(fd: int, lines: int, end: int) -> int:
    """Where the last ``lines`` records of the file ``fd`` (up to byte ``end``) start, read backwards
    in blocks: ``tailLines`` costs what it returns, not the file's size."""
    if lines <= 0:
        return end
    position, newlines = end, 0
    skip_last = True  # the newline that ends the last record does not start one
    while position > 0:
        size = min(_TAIL_BLOCK, position)
        position -= size
        block = os.pread(fd, size, position)
        index = len(block)
        while True:
            index = block.rfind(b"\n", 0, index)
            if index < 0:
                break
            if skip_last and position + index == end - 1:
                skip_last = False
                continue
            skip_last = False
            newlines += 1
            if newlines == lines:
                return position + index + 1
    return 0
