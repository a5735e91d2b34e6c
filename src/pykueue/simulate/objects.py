"""One configuration to simulate: the Kueue objects, read from YAML files or from a running cluster.

Owns :class:`Configuration` (ResourceFlavors, Cohorts, ClusterQueues, LocalQueues,
WorkloadPriorityClasses and Namespaces, as the plain dicts ``kubectl get -o json`` shows, in
``kueue.x-k8s.io/v1beta2``), its loading from multi-document YAML (``kubectl apply -f`` files) and
from any kubeconfig through the project's ``HttpClient`` (``--from-cluster``), and feeding it to an
engine, and a Kueue ``Configuration`` document (``config.kueue.x-k8s.io``) in the same files sets
the engine's settings (fair sharing, admission fair sharing), as ``pykueue up --config`` would.
Other kinds in a file are skipped (an objects file may hold Jobs too).

Who calls it: the CLI, ``replay`` and ``eta``. Invariant: a ``Configuration`` feeds the engine
without error (``check`` runs it through a fresh engine); a bad file raises ``SimulateError`` with a
one-line message naming the file and the object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.http import HttpClient
from pykueue.controllers.config import ConfigError, parse_config
from pykueue.scheduler import InvalidObject, Scheduler, SchedulerConfig
from pykueue.simulate.model import API, SimulateError

__all__ = ["KINDS", "RESOURCES", "Configuration", "load_objects", "read_cluster"]

KINDS = ("Namespace", "ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass")
RESOURCES = {
    "ResourceFlavor": GroupVersionResource("kueue.x-k8s.io", "v1beta2", "resourceflavors"),
    "Cohort": GroupVersionResource("kueue.x-k8s.io", "v1beta2", "cohorts"),
    "ClusterQueue": GroupVersionResource("kueue.x-k8s.io", "v1beta2", "clusterqueues"),
    "LocalQueue": GroupVersionResource("kueue.x-k8s.io", "v1beta2", "localqueues"),
    "WorkloadPriorityClass": GroupVersionResource("kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses"),
    "Namespace": GroupVersionResource("", "v1", "namespaces"),
}


@dataclass(slots=True)
class Configuration:
    name: str
    """What the reports call it: the file's stem, or ``cluster``."""
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {k: [] for k in KINDS})
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    """From a Kueue ``Configuration`` document in the files (fair sharing, admission fair sharing)."""

    def of(self, kind: str) -> list[dict[str, Any]]:
        return self.objects[kind]

    def local_queues(self) -> list[tuple[str, str]]:
        """(namespace, name) of every LocalQueue, sorted: the targets of tasks without a queue."""
        return sorted(
            (lq["metadata"].get("namespace") or "default", lq["metadata"]["name"]) for lq in self.of("LocalQueue")
        )

    def priorities(self) -> dict[str, int]:
        return {pc["metadata"]["name"]: int(pc.get("value", 0)) for pc in self.of("WorkloadPriorityClass")}

    def cluster_queue_of(self) -> dict[tuple[str, str], str]:
        return {
            (lq["metadata"].get("namespace") or "default", lq["metadata"]["name"]): (lq.get("spec") or {}).get(
                "clusterQueue", ""
            )
            for lq in self.of("LocalQueue")
        }

    def feed(
        self, engine: Scheduler, apply: Callable[[Callable[[dict[str, Any]], None], dict[str, Any]], None] | None = None
    ) -> None:
        """Upsert every object into ``engine`` (namespaces of LocalQueues are made up when missing)."""

        def call(fn: Callable[[dict[str, Any]], None], obj: dict[str, Any]) -> None:
            if apply is None:
                fn(obj)
            else:
                apply(fn, obj)

        namespaces = {ns["metadata"]["name"] for ns in self.of("Namespace")}
        for ns in self.of("Namespace"):
            call(engine.upsert_namespace, ns)
        for ns_name, _ in self.local_queues():
            if ns_name not in namespaces:
                namespaces.add(ns_name)
                call(engine.upsert_namespace, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns_name}})
        try:
            for rf in self.of("ResourceFlavor"):
                call(engine.upsert_resource_flavor, rf)
            for co in self.of("Cohort"):
                call(engine.upsert_cohort, co)
            for cq in self.of("ClusterQueue"):
                call(engine.upsert_cluster_queue, cq)
            for lq in self.of("LocalQueue"):
                call(engine.upsert_local_queue, lq)
        except InvalidObject as exc:
            raise SimulateError(f"{self.name}: {exc}") from exc

    def check(self) -> None:
        """Fail with one line when the configuration cannot run at all."""
        if not self.of("ClusterQueue"):
            raise SimulateError(f"{self.name}: no ClusterQueue in the objects")
        if not self.of("LocalQueue"):
            raise SimulateError(f"{self.name}: no LocalQueue in the objects")
        self.feed(Scheduler())


def _add(conf: Configuration, obj: Any, where: str) -> None:
    if obj is None:
        return
    if not isinstance(obj, dict):
        raise SimulateError(f"{where}: not a Kubernetes object (a mapping with apiVersion, kind, metadata)")
    kind = obj.get("kind")
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in obj):
        for i, item in enumerate(obj.get("items") or []):
            _add(conf, item, f"{where} item {i}")
        return
    if kind == "Configuration" and str(obj.get("apiVersion", "")).startswith("config.kueue.x-k8s.io/"):
        try:
            conf.scheduler = parse_config(obj).scheduler_config()
        except ConfigError as exc:
            raise SimulateError(f"{where}: Configuration: {' '.join(str(exc).split())}") from exc
        return
    if kind not in KINDS:
        return
    name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
    if not isinstance(name, str) or not name:
        raise SimulateError(f"{where}: {kind} without metadata.name")
    version = obj.get("apiVersion")
    if kind != "Namespace" and version != API:
        raise SimulateError(f"{where}: {kind} {name}: apiVersion {version!r} is not supported, use {API}")
    if kind == "WorkloadPriorityClass" and not isinstance(obj.get("value", 0), int):
        raise SimulateError(f"{where}: WorkloadPriorityClass {name}: value must be an integer")
    conf.objects[kind].append(obj)


def load_objects(paths: list[Path]) -> Configuration:
    """Read one configuration from one or more YAML files (``kubectl apply -f`` style)."""
    conf = Configuration(paths[0].stem if len(paths) == 1 else "+".join(p.stem for p in paths))
    for path in paths:
        try:
            text = path.read_text()
        except OSError as exc:
            raise SimulateError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f" line {mark.line + 1}" if mark is not None else ""
            raise SimulateError(f"{path}:{line} not valid YAML") from exc
        for i, doc in enumerate(docs):
            _add(conf, doc, f"{path} document {i + 1}")
    conf.check()
    return conf


async def read_cluster(
    client: HttpClient, *, with_workloads: bool = False
) -> tuple[Configuration, list[dict[str, Any]]]:
    """The configuration a running cluster has, and (optionally) its Workloads."""
    conf = Configuration("cluster")
    for kind, res in RESOURCES.items():
        items, _ = await client.list(res)
        for item in sorted(items, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"])):
            item.setdefault("kind", kind)
            conf.objects[kind].append(item)
    workloads: list[dict[str, Any]] = []
    if with_workloads:
        workloads, _ = await client.list(GroupVersionResource("kueue.x-k8s.io", "v1beta2", "workloads"))
    return conf, workloads
