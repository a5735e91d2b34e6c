"""Server-side printing: objects into ``meta.k8s.io/v1`` Tables, as ``kubectl get`` asks for them.

Owned by ``apiserver/``; called for GET/LIST/WATCH when the client sends
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``. CRD-style kinds print NAME, their
``printer_columns`` (JSONPath evaluated with jsonpath-ng; priority 1 = ``-o wide`` only), or
NAME and AGE when a kind declares no columns (what apiextensions-apiserver does); pods, jobs,
namespaces, nodes and events get the columns kube-apiserver's built-in printers use. Date
columns are rendered as ages ("5m", "3h2m") the way kube's ``HumanDuration`` does.

Invariant: every row has exactly one cell per column definition.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from jsonpath_ng.ext.parser import parse as parse_jsonpath

from pykueue.api.meta.clock import parse_time
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo, PrinterColumn

__all__ = ["human_duration", "table", "table_columns", "table_row"]

Column = JSONDict
_NAME = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "priority": 0,
    "description": "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically.",
}
_AGE = {
    "name": "Age",
    "type": "string",
    "format": "",
    "priority": 0,
    "description": "CreationTimestamp is a timestamp representing the server time when this object was created.",
}


def _col(name: str, description: str = "", *, type: str = "string", priority: int = 0) -> Column:
    return {"name": name, "type": type, "format": "", "description": description, "priority": priority}


def human_duration(seconds: float) -> str:
    """kube's ``duration.HumanDuration``: "45s", "3m20s", "17m", "5h3m", "2d4h", "3y"."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rest == 0 else f"{hours // 24 // 365}y{rest}d"
    return f"{hours // 24 // 365}y"


def _age(value: Any, now: float) -> str:
    if not isinstance(value, str) or not value:
        return "<unknown>"
    try:
        return human_duration(now - parse_time(value))
    except ValueError:
        return "<invalid>"


@cache
def _compiled(path: str) -> Any:
    expression = path.strip()
    if expression.startswith("{") and expression.endswith("}"):
        expression = expression[1:-1]
    if not expression.startswith("$"):
        expression = "$" + (expression if expression.startswith((".", "[")) else "." + expression)
    return parse_jsonpath(expression)


def _jsonpath(obj: JSONDict, path: str) -> list[Any]:
    try:
        return [m.value for m in _compiled(path).find(obj)]
    except Exception:  # a bad printer column path prints <none>, never fails the request
        return []


def _printer_cell(column: PrinterColumn, obj: JSONDict, now: float) -> Any:
    values = _jsonpath(obj, column.json_path)
    if not values:
        return None
    value = values[0]
    if column.type == "date":
        return _age(value, now)
    if column.type == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if column.type == "boolean" and isinstance(value, bool):
        return value
    if isinstance(value, (dict, list)):
        import orjson

        return orjson.dumps(value).decode()
    if len(values) > 1:
        return ",".join(str(v) for v in values)
    return value if isinstance(value, (int, float, bool)) else str(value)


# ---------------------------------------------------------------------------- built-in printers


def _meta(obj: JSONDict) -> JSONDict:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _pod_cells(obj: JSONDict, now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    containers = spec.get("containers") or []
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    reason = status.get("reason") or status.get("phase") or "Pending"
    for cs in statuses:
        state = cs.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif state.get("terminated"):
            terminated = state["terminated"]
            reason = terminated.get("reason") or (
                f"Signal:{terminated['signal']}"
                if terminated.get("signal")
                else f"ExitCode:{terminated.get('exitCode', 0)}"
            )
    if _meta(obj).get("deletionTimestamp"):
        reason = "Terminating"
    return [
        _meta(obj).get("name"),
        f"{ready}/{len(containers)}",
        reason,
        restarts,
        _age(_meta(obj).get("creationTimestamp"), now),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        "<none>",
    ]


def _has_condition(obj: JSONDict, kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or []
    )


def _job_cells(obj: JSONDict, now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    succeeded = int(status.get("succeeded") or 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    else:
        parallelism = int(spec.get("parallelism") or 1)
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    if _has_condition(obj, "Complete"):
        state = "Complete"
    elif _has_condition(obj, "Failed"):
        state = "Failed"
    elif _meta(obj).get("deletionTimestamp"):
        state = "Terminating"
    elif _has_condition(obj, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    elif _has_condition(obj, "Suspended"):
        state = "Suspended"
    elif _has_condition(obj, "FailureTarget"):
        state = "FailureTarget"
    else:
        state = "Running"
    duration = ""
    if status.get("startTime"):
        end = parse_time(status["completionTime"]) if status.get("completionTime") else now
        duration = human_duration(end - parse_time(status["startTime"]))
    template = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    return [
        _meta(obj).get("name"),
        state,
        completions,
        duration,
        _age(_meta(obj).get("creationTimestamp"), now),
        ",".join(c.get("name", "") for c in template),
        ",".join(c.get("image", "") for c in template),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


def _namespace_cells(obj: JSONDict, now: float) -> list[Any]:
    return [
        _meta(obj).get("name"),
        (obj.get("status") or {}).get("phase") or "Active",
        _age(_meta(obj).get("creationTimestamp"), now),
    ]


def _node_cells(obj: JSONDict, now: float) -> list[Any]:
    ready = "Unknown"
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            ready = "Ready" if condition.get("status") == "True" else "NotReady"
    if (obj.get("spec") or {}).get("unschedulable"):
        ready += ",SchedulingDisabled"
    labels = _meta(obj).get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k)
    info = (obj.get("status") or {}).get("nodeInfo") or {}
    return [
        _meta(obj).get("name"),
        ready,
        ",".join(roles) or "<none>",
        _age(_meta(obj).get("creationTimestamp"), now),
        info.get("kubeletVersion") or "",
    ]


def _event_cells(obj: JSONDict, now: float) -> list[Any]:
    involved = obj.get("involvedObject") or {}
    last = (
        obj.get("lastTimestamp")
        or ((obj.get("series") or {}).get("lastObservedTime"))
        or obj.get("eventTime")
        or _meta(obj).get("creationTimestamp")
    )
    target = f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"
    return [_age(last, now), obj.get("type") or "", obj.get("reason") or "", target, obj.get("message") or ""]


def _events_v1_cells(obj: JSONDict, now: float) -> list[Any]:
    """events.k8s.io/v1 names the same fields differently (regarding, note, deprecated*)."""
    regarding = obj.get("regarding") or {}
    last = (
        ((obj.get("series") or {}).get("lastObservedTime"))
        or obj.get("deprecatedLastTimestamp")
        or obj.get("eventTime")
        or _meta(obj).get("creationTimestamp")
    )
    target = f"{str(regarding.get('kind', '')).lower()}/{regarding.get('name', '')}"
    return [_age(last, now), obj.get("type") or "", obj.get("reason") or "", target, obj.get("note") or ""]


_EVENT_COLUMNS = [
    _col("Last Seen", "Time when last event occurred"),
    _col("Type", "Type of this event."),
    _col("Reason", "Reason why this event was generated."),
    _col("Object", "The object that this event is about."),
    _col("Message", "A human-readable description of the status of this operation."),
]

_BUILTIN: dict[str, tuple[list[Column], Callable[[JSONDict, float], list[Any]]]] = {
    "pods": (
        [
            _NAME,
            _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
            _col("Status", "The aggregate status of the containers in this pod."),
            _col("Restarts", "The number of times the containers in this pod have been restarted.", type="integer"),
            _AGE,
            _col("IP", "IP address allocated to the pod.", priority=1),
            _col("Node", "Name of the node the pod is assigned to.", priority=1),
            _col("Nominated Node", "Name of the node the pod is nominated to.", priority=1),
            _col("Readiness Gates", "Pod readiness gates.", priority=1),
        ],
        _pod_cells,
    ),
    "jobs.batch": (
        [
            _NAME,
            _col("Status", "Status of the job."),
            _col("Completions", "The completion status of the job."),
            _col("Duration", "Time required to complete the job."),
            _AGE,
            _col("Containers", "Names of each container in the template.", priority=1),
            _col("Images", "Images referenced by each container in the template.", priority=1),
            _col("Selector", "Selector for the pods of the job.", priority=1),
        ],
        _job_cells,
    ),
    "namespaces": ([_NAME, _col("Status", "The status of the namespace"), _AGE], _namespace_cells),
    "nodes": (
        [
            _NAME,
            _col("Status", "The status of the node"),
            _col("Roles", "The roles of the node"),
            _AGE,
            _col("Version", "Kubelet Version reported by the node."),
        ],
        _node_cells,
    ),
    "events": (_EVENT_COLUMNS, _event_cells),
    "events.events.k8s.io": (_EVENT_COLUMNS, _events_v1_cells),
}


def _printer_columns(kind: KindInfo, version: str) -> tuple[PrinterColumn, ...]:
    return tuple(kind.printer_columns.get(version, ()))


def table_columns(kind: KindInfo, version: str) -> list[Column]:
    builtin = _BUILTIN.get(kind.served_key)
    if builtin is not None:
        return builtin[0]
    columns = [_NAME]
    printer = _printer_columns(kind, version)
    for column in printer:
        columns.append(
            {
                "name": column.name,
                "type": "string" if column.type == "date" else column.type,
                "format": column.format,
                "description": column.description,
                "priority": column.priority,
            }
        )
    if not printer:  # like apiextensions: a CRD without printer columns gets a single Age column
        columns.append(_AGE)
    return columns


def table_row(kind: KindInfo, version: str, obj: JSONDict, now: float, include_object: str) -> JSONDict:
    builtin = _BUILTIN.get(kind.served_key)
    if builtin is not None:
        cells = builtin[1](obj, now)
    else:
        printer = _printer_columns(kind, version)
        cells = [_meta(obj).get("name")] + [_printer_cell(c, obj, now) for c in printer]
        if not printer:
            cells.append(_age(_meta(obj).get("creationTimestamp"), now))
    row: JSONDict = {"cells": cells}
    if include_object == "Object":
        row["object"] = obj
    elif include_object != "None":
        row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": _meta(obj)}
    return row


def table(
    kind: KindInfo,
    version: str,
    objects: list[JSONDict],
    *,
    now: float,
    list_meta: JSONDict | None,
    include_object: str = "Metadata",
    table_version: str = "v1",
    columns: bool = True,
) -> JSONDict:
    out: JSONDict = {"kind": "Table", "apiVersion": f"meta.k8s.io/{table_version}", "metadata": list_meta or {}}
    out["columnDefinitions"] = table_columns(kind, version) if columns else []
    out["rows"] = [table_row(kind, version, obj, now, include_object) for obj in objects]
    return out
