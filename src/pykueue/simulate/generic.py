"""The generic trace formats: JSON Lines (any number of pod sets) and a one-pod-set CSV.

JSONL, one task per line::

    {"name": "t1", "submit": 0, "runtime": 600, "namespace": "team-a", "queue": "lq",
     "priorityClass": "high", "podSets": [{"name": "main", "count": 4, "minCount": 2,
     "requests": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}, "nodeSelector": {...}}]}

``submit`` and ``runtime`` are seconds (``submit`` from the start of the trace); ``namespace`` and
``queue`` may be left out (the replay then spreads tasks over the configuration's LocalQueues);
``priorityClass`` names a WorkloadPriorityClass, ``priority`` sets the value directly.

CSV: columns ``name, submit, runtime, requests`` (``cpu=2;memory=4Gi``) and optionally
``namespace, queue, priorityClass, priority, count, minCount``.

Who calls it: the CLI (``--format jsonl|csv``). Invariant: every error names the file, the line
and the field; quantities are checked with the API's quantity parser.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from pykueue.api.meta.quantity import QuantityError, to_amount
from pykueue.simulate.model import PodSetSpec, SimulateError, Task

__all__ = ["read_csv", "read_jsonl"]


def _fail(where: str, message: str) -> SimulateError:
    return SimulateError(f"{where}: {message}")


def _seconds(where: str, value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != value:
        raise _fail(where, f"{field} must be a non-negative number of seconds")
    return float(value)


def _requests(where: str, value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not value:
        raise _fail(where, "requests must be a non-empty mapping of resource to quantity")
    out: list[tuple[str, str]] = []
    for res, qty in value.items():
        text = str(qty)
        try:
            if to_amount(str(res), text) < 0:
                raise QuantityError("negative")
        except QuantityError:
            raise _fail(where, f"requests.{res}: {text!r} is not a valid quantity") from None
        out.append((str(res), text))
    return tuple(sorted(out))


def _count(where: str, value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(where, f"{field} must be a positive integer")
    return value


def _pod_set(where: str, raw: Any, index: int) -> PodSetSpec:
    if not isinstance(raw, dict):
        raise _fail(where, f"podSets[{index}] must be a mapping")
    at = f"{where}: podSets[{index}]"
    count = _count(at, raw.get("count", 1), "count")
    min_count = raw.get("minCount")
    if min_count is not None and (_count(at, min_count, "minCount") > count):
        raise _fail(at, "minCount must not exceed count")
    selector = raw.get("nodeSelector") or {}
    if not isinstance(selector, dict):
        raise _fail(at, "nodeSelector must be a mapping")
    return PodSetSpec(
        str(raw.get("name") or f"ps{index}"),
        count,
        _requests(at, raw.get("requests")),
        min_count,
        tuple(sorted((str(k), str(v)) for k, v in selector.items())),
    )


def _task(where: str, raw: Any) -> Task:
    if not isinstance(raw, dict):
        raise _fail(where, "each line must be a JSON object")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(where, "name must be a non-empty string")
    pod_sets = raw.get("podSets")
    if not isinstance(pod_sets, list) or not pod_sets:
        raise _fail(where, "podSets must be a non-empty list")
    priority = raw.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise _fail(where, "priority must be an integer")
    for key in ("namespace", "queue", "priorityClass"):
        if raw.get(key) is not None and not isinstance(raw.get(key), str):
            raise _fail(where, f"{key} must be a string")
    return Task(
        name=name,
        submit_s=_seconds(where, raw.get("submit"), "submit"),
        runtime_s=_seconds(where, raw.get("runtime"), "runtime"),
        pod_sets=tuple(_pod_set(where, ps, i) for i, ps in enumerate(pod_sets)),
        namespace=raw.get("namespace"),
        queue=raw.get("queue"),
        priority_class=raw.get("priorityClass"),
        priority=priority,
    )


def _sorted(tasks: list[Task], path: Path) -> list[Task]:
    names: set[str] = set()
    for t in tasks:
        if (t.namespace, t.name) in names:  # type: ignore[comparison-overlap]
            raise SimulateError(f"{path}: task {t.name} appears twice")
        names.add((t.namespace, t.name))  # type: ignore[arg-type]
    if not tasks:
        raise SimulateError(f"{path}: no tasks")
    return sorted(tasks, key=lambda t: (t.submit_s, t.name))


def read_jsonl(path: Path) -> list[Task]:
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SimulateError(f"{path}: cannot read: {exc}") from exc
    tasks: list[Task] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _fail(where, f"not JSON ({exc.msg})") from None
        tasks.append(_task(where, raw))
    return _sorted(tasks, path)


def _csv_requests(where: str, text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        res, sep, qty = part.partition("=")
        if not sep or not res.strip():
            raise _fail(where, f"requests: {part!r} is not resource=quantity")
        out[res.strip()] = qty.strip()
    return out


def read_csv(path: Path) -> list[Task]:
    try:
        handle = path.open(newline="")
    except OSError as exc:
        raise SimulateError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    tasks: list[Task] = []
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("name", "submit", "runtime", "requests") if c not in (reader.fieldnames or ())]
        if missing:
            raise SimulateError(f"{path}: missing column(s) {', '.join(missing)}")
        try:
            for row in reader:
                where = f"{path} line {reader.line_num}"
                raw: dict[str, Any] = {"name": row.get("name")}
                for key in ("submit", "runtime", "count", "minCount", "priority"):
                    text = (row.get(key) or "").strip()
                    if text:
                        try:
                            raw[key] = float(text) if key in ("submit", "runtime") else int(text)
                        except ValueError:
                            raise _fail(where, f"{key}: {text!r} is not a number") from None
                for key in ("namespace", "queue", "priorityClass"):
                    if (row.get(key) or "").strip():
                        raw[key] = row[key].strip()
                pod_set = {
                    "name": "main",
                    "count": raw.pop("count", 1),
                    "requests": _csv_requests(where, row.get("requests") or ""),
                }
                if "minCount" in raw:
                    pod_set["minCount"] = raw.pop("minCount")
                raw["podSets"] = [pod_set]
                tasks.append(_task(where, raw))
        except (csv.Error, UnicodeDecodeError) as exc:
            raise SimulateError(f"{path} line {reader.line_num}: {exc}") from exc
    return _sorted(tasks, path)
