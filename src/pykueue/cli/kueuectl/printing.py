"""Output of the kueuectl verbs: kubectl-style tables, ``-o yaml|json|wide|name``, ages.

Owned by ``cli/kueuectl``. Tables are laid out like kubectl's (upper-case headers, columns three
spaces apart, a NAMESPACE column first with ``-A``); ages read like kubectl's (``45s``, ``3m20s``,
``5h``, ``12d``). ``-o yaml``/``-o json`` print the objects as the server returned them (a ``List``
for list verbs), so scripts can rely on them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

import yaml

from pykueue.api.meta.clock import parse_time
from pykueue.api.meta.json_types import JSONDict

from .connection import CommandError

__all__ = ["OUTPUTS", "age", "check_output", "condition", "print_objects", "render_table", "workload_status"]

OUTPUTS = ("", "wide", "yaml", "json", "name")


def check_output(output: str) -> str:
    if output not in OUTPUTS:
        raise CommandError(
            f'error: unable to match a printer suitable for the output format "{output}", '
            "allowed formats are: json,name,wide,yaml"
        )
    return output


def human_duration(seconds: float) -> str:
    """kubectl's HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def age(stamp: str | None, now: float | None = None) -> str:
    if not stamp:
        return "<unknown>"
    try:
        then = parse_time(stamp)
    except (ValueError, TypeError):
        return "<unknown>"
    return human_duration((time.time() if now is None else now) - then)


def condition(obj: JSONDict, kind: str) -> JSONDict | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def is_true(obj: JSONDict, kind: str) -> bool:
    cond = condition(obj, kind)
    return cond is not None and cond.get("status") == "True"


def workload_status(wl: JSONDict) -> str:
    """Kueue's workload status: finished, admitted, quotareserved or pending."""
    if is_true(wl, "Finished"):
        return "finished"
    if is_true(wl, "Admitted"):
        return "admitted"
    if is_true(wl, "QuotaReserved"):
        return "quotareserved"
    return "pending"


def render_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    table = [[str(h).upper() for h in headers], *[["" if c is None else str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in table) for i in range(len(headers))]
    lines = ["   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table]
    return "\n".join(lines) + "\n"


def _name(obj: JSONDict) -> str:
    kind = str(obj.get("kind") or "").lower()
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    return (
        f"{kind}.{group}/{(obj.get('metadata') or {}).get('name', '')}"
        if group
        else f"{kind}/{(obj.get('metadata') or {}).get('name', '')}"
    )


def print_objects(objs: list[JSONDict], output: str, *, single: bool = False) -> str:
    """``-o yaml|json|name`` of ``objs`` (one object when ``single``, else a ``List``)."""
    if output == "name":
        return "".join(_name(o) + "\n" for o in objs)
    doc: Any = (
        objs[0]
        if single and len(objs) == 1
        else {"apiVersion": "v1", "kind": "List", "items": objs, "metadata": {"resourceVersion": ""}}
    )
    if output == "json":
        return json.dumps(doc, indent=4) + "\n"
    return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))
