"""The Alibaba "openb" GPU trace (``openb_pod_list_*.csv``, ``openb_node_list_*.csv``) and its mapping.

Owns reading the pod and node lists and the documented, configurable mapping onto Kueue's objects
(:class:`OpenbMapping`, defaults below, overridable with ``--mapping FILE.yaml``):

* GPUs: a task asks ``num_gpu × gpu_milli`` of the resource ``gpuResource`` (default
  ``pykueue.io/gpu-milli``, thousandths of a GPU, so GPU-sharing tasks keep their fraction).
* GPU models: one ResourceFlavor per model (``flavors``: model -> flavor name, default
  ``gpu-<model in lower case>``), with node label ``gpuModelLabel`` = the model; a task's
  ``gpu_spec`` (``A|B``) becomes a required node affinity ``gpuModelLabel In [A, B]``, so only
  those flavors fit it.
* QoS -> WorkloadPriorityClass name (``qos``, default LS and Guaranteed -> ``high``, Burstable ->
  ``medium``, BE -> ``low``); unknown classes map to ``low``.
* Runtime: ``deletion_time - scheduled_time``; a task production never scheduled (empty
  ``scheduled_time``) runs ``deletion_time - creation_time`` when ``includeUnscheduled`` (default),
  else it is skipped.
* Queues: ``queues`` (``namespace/name`` list); empty (default): every LocalQueue of the
  configuration, a task going to ``queues[crc32(name) % len(queues)]`` (stable across runs).

Who calls it: the CLI (``simulate run --format openb``, ``simulate init``). Invariant: rows are
returned in (creation time, name) order; a malformed row raises ``SimulateError`` with its line.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pykueue.simulate.model import PodSetSpec, SimulateError, Task

__all__ = ["Node", "OpenbMapping", "load_mapping", "read_nodes", "read_pods"]

POD_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")


@dataclass(frozen=True, slots=True)
class OpenbMapping:
    gpu_resource: str = "pykueue.io/gpu-milli"
    gpu_model_label: str = "pykueue.io/gpu-model"
    flavors: dict[str, str] = field(default_factory=dict)
    qos: dict[str, str] = field(
        default_factory=lambda: {"LS": "high", "Guaranteed": "high", "Burstable": "medium", "BE": "low"}
    )
    default_class: str = "low"
    include_unscheduled: bool = True
    queues: tuple[str, ...] = ()

    def flavor_of(self, model: str) -> str:
        return self.flavors.get(model) or f"gpu-{model.lower()}"


_KEYS = {
    "gpuResource": "gpu_resource",
    "gpuModelLabel": "gpu_model_label",
    "flavors": "flavors",
    "qos": "qos",
    "defaultClass": "default_class",
    "includeUnscheduled": "include_unscheduled",
    "queues": "queues",
}


def load_mapping(path: Path | None) -> OpenbMapping:
    if path is None:
        return OpenbMapping()
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SimulateError(f"{path}: cannot read the mapping: {exc.__class__.__name__}") from exc
    if not isinstance(data, dict):
        raise SimulateError(f"{path}: the mapping must be a YAML mapping")
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        attr = _KEYS.get(key)
        if attr is None:
            raise SimulateError(f"{path}: unknown mapping key {key!r} (known: {', '.join(sorted(_KEYS))})")
        if attr in ("flavors", "qos"):
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise SimulateError(f"{path}: {key} must map names to names")
            value = {str(k): v for k, v in value.items()}
        elif attr == "queues":
            if not isinstance(value, list) or not all(isinstance(v, str) and "/" in v for v in value):
                raise SimulateError(f"{path}: queues must be a list of namespace/name")
            value = tuple(value)
        elif attr == "include_unscheduled":
            if not isinstance(value, bool):
                raise SimulateError(f"{path}: includeUnscheduled must be true or false")
        elif not isinstance(value, str) or not value:
            raise SimulateError(f"{path}: {key} must be a non-empty string")
        kwargs[attr] = value
    return OpenbMapping(**kwargs)


def _rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        handle = path.open(newline="")
    except OSError as exc:
        raise SimulateError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in columns if c not in (reader.fieldnames or ())]
        if missing:
            raise SimulateError(f"{path}: not an openb file: missing column(s) {', '.join(missing)}")
        try:
            for row in reader:
                yield reader.line_num, row
        except (csv.Error, UnicodeDecodeError) as exc:
            raise SimulateError(f"{path} line {reader.line_num}: {exc}") from exc


def _number(path: Path, line: int, row: dict[str, str], column: str, *, optional: bool = False) -> float | None:
    text = (row.get(column) or "").strip()
    if not text and optional:
        return None
    try:
        value = float(text)
    except ValueError:
        raise SimulateError(f"{path} line {line}: column {column}: {text!r} is not a number") from None
    if value < 0 or value != value:
        raise SimulateError(f"{path} line {line}: column {column}: must be a non-negative number")
    return value


def read_pods(path: Path, mapping: OpenbMapping) -> list[Task]:
    tasks: list[Task] = []
    seen: set[str] = set()
    for line, row in _rows(path, POD_COLUMNS):
        name = (row.get("name") or "").strip()
        if not name:
            raise SimulateError(f"{path} line {line}: column name is empty")
        if name in seen:
            raise SimulateError(f"{path} line {line}: task {name} appears twice")
        seen.add(name)
        cpu, mem, gpus, gpu_milli, created, deleted = (
            _number(path, line, row, c) or 0.0
            for c in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time", "deletion_time")
        )
        scheduled = _number(path, line, row, "scheduled_time", optional=True)
        if scheduled is None and not mapping.include_unscheduled:
            continue
        start = created if scheduled is None else scheduled
        requests = {"cpu": f"{int(cpu)}m", "memory": f"{int(mem)}Mi"}
        allowed = None
        if gpus > 0:
            requests[mapping.gpu_resource] = str(int(gpus * (gpu_milli or 1000)))
            spec = (row.get("gpu_spec") or "").strip()
            if spec:
                allowed = (mapping.gpu_model_label, tuple(sorted(m for m in spec.split("|") if m)))
        pod_set = PodSetSpec("main", 1, tuple(sorted(requests.items())), allowed=allowed)
        qos = (row.get("qos") or "").strip()
        tasks.append(
            Task(
                name=name,
                submit_s=created,
                runtime_s=max(0.0, deleted - start),
                pod_sets=(pod_set,),
                priority_class=mapping.qos.get(qos, mapping.default_class),
                labels=(("qos", qos),),
            )
        )
    tasks.sort(key=lambda t: (t.submit_s, t.name))
    return tasks


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str
    """Empty for a CPU-only node."""


def read_nodes(path: Path) -> list[Node]:
    nodes: list[Node] = []
    for line, row in _rows(path, NODE_COLUMNS):
        cpu, mem, gpus = (int(_number(path, line, row, c) or 0) for c in ("cpu_milli", "memory_mib", "gpu"))
        nodes.append(Node((row.get("sn") or "").strip(), cpu, mem, gpus, (row.get("model") or "").strip()))
    if not nodes:
        raise SimulateError(f"{path}: no nodes")
    return nodes
