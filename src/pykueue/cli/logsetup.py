"""How pykueue's processes log: ``--log-level`` and ``--log-format text|json``.

Owned by ``cli/``: configuring the root logger is a process-wide choice, made once by the command
that runs (``pykueue --log-level debug --log-format json up``; the controller process gets the same
choice from the server). Text lines read ``2026-01-01T10:00:00.123Z INFO pykueue.admission: admitted
...``; JSON lines are one object per line with ``time``, ``level``, ``logger``, ``msg``, the
``component`` (server or controllers) and the structured fields a call passed in ``extra``
(``workload``, ``clusterQueue``, ``flavors``, ``reason``, ``preemptor``, ...).
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson

__all__ = ["FORMATS", "LEVELS", "JsonFormatter", "configure_logging", "log_option_error"]

LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("text", "json")

# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is a field.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "taskName"}


def _timestamp(record: logging.LogRecord) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{seconds}.{int(record.msecs):03d}Z"


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def __init__(self, component: str) -> None:
        super().__init__()
        self._component = component

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            "component": self._component,
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class _TextFormatter(logging.Formatter):
    def __init__(self, component: str) -> None:
        prefix = f"{component}: " if component != "server" else ""
        super().__init__(f"%(asctime)s %(levelname)s {prefix}%(name)s: %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return _timestamp(record)


def log_option_error(level: str, fmt: str) -> str | None:
    """The one-line error for a bad ``--log-level`` / ``--log-format`` (None: both are fine)."""
    if level.lower() not in LEVELS:
        return f"--log-level {level!r}: use one of {', '.join(LEVELS)}"
    if fmt.lower() not in FORMATS:
        return f"--log-format {fmt!r}: use 'text' or 'json'"
    return None


def configure_logging(level: str = "info", fmt: str = "text", *, component: str = "server") -> None:
    """Send every log record of at least ``level`` to stderr, as text or JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(component) if fmt.lower() == "json" else _TextFormatter(component))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
