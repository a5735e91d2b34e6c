"""Checks of command-line values that typer's types cannot express, shared by every command.

Each returns None when the value is fine, else the one line the command prints before exiting 2,
so the same option is refused with the same words wherever it appears.
"""

from __future__ import annotations

from pykueue.store import DURABILITY

__all__ = ["durability_error", "port_error"]


def port_error(port: int) -> str | None:
    return None if 0 <= port <= 65535 else f"--port {port}: must be between 0 and 65535 (0 = any free port)"


def durability_error(value: str) -> str | None:
    if value in DURABILITY:
        return None
    return f"--durability {value!r}: use " + " or ".join(repr(mode) for mode in DURABILITY)
