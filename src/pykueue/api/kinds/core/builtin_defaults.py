"""Defaults of the built-in workload and Service kinds, as kube-apiserver fills them in on write.

Owned by ``api/kinds/core``; the kinds' records (:mod:`pykueue.api.kinds.core.core_kinds`) hand these
to the schema defaulter for Deployments, StatefulSets and Services (each run on a private copy:
they edit in place). The embedded cluster runs no controller
for these kinds, so only the fields kube-apiserver itself defaults are set (a Service gets no
cluster IP: nothing would route to it).
"""

from __future__ import annotations

from collections.abc import Callable

from pykueue.api.kinds.core.core_defaults import default_pod_spec
from pykueue.api.meta.json_types import JSONDict

__all__ = ["DEFAULTERS"]


def _spec(obj: JSONDict) -> JSONDict | None:
    spec = obj.setdefault("spec", {})
    return spec if isinstance(spec, dict) else None


def _template(spec: JSONDict) -> None:
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])


def default_deployment(obj: JSONDict) -> None:
    spec = _spec(obj)
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
    _template(spec)


def default_stateful_set(obj: JSONDict) -> None:
    spec = _spec(obj)
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("partition", 0)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(retention, dict):
        retention.setdefault("whenDeleted", "Retain")
        retention.setdefault("whenScaled", "Retain")
    _template(spec)


def default_service(obj: JSONDict) -> None:
    spec = _spec(obj)
    if spec is None:
        return
    spec.setdefault("type", "ClusterIP")
    if spec["type"] == "ExternalName":
        return
    spec.setdefault("sessionAffinity", "None")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    ports = spec.get("ports")
    for port in ports if isinstance(ports, list) else []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "targetPort" not in port and port.get("port") is not None:
                port["targetPort"] = port["port"]


DEFAULTERS: dict[tuple[str, str], Callable[[JSONDict], None]] = {
    ("apps", "Deployment"): default_deployment,
    ("apps", "StatefulSet"): default_stateful_set,
    ("", "Service"): default_service,
}
