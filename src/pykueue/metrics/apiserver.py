"""kube-apiserver's request metrics for the embedded API server.

Owns ``apiserver_request_total`` (counter) and ``apiserver_request_duration_seconds`` (histogram,
kube-apiserver's buckets) with kube-apiserver's labels, and :func:`request_labels`, which reads
them off a request the way kube-apiserver's request info does: the verb as the metrics show it
(GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION; the HTTP method for
non-resource paths), group, version, resource, subresource and scope (resource, namespace, cluster,
or empty for non-resource paths), component ``apiserver``, ``dry_run`` and the response code.

Who calls it: the API server's instrumentation middleware, once per request, with what the request
and its response already carry: a path split and a labelled counter increment, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["REQUEST_DURATION_BUCKETS", "ApiServerMetrics", "RequestLabels", "request_labels"]

REQUEST_DURATION_BUCKETS = (
    0.005,
    0.025,
    0.05,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2.0,
    3.0,
    4.0,
    5.0,
    6.0,
    8.0,
    10.0,
    15.0,
    20.0,
    30.0,
    45.0,
    60.0,
)
"""kube-apiserver's buckets for ``apiserver_request_duration_seconds``."""

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
_COMPONENT = "apiserver"

RequestLabels = tuple[str, str, str, str, str, str]
"""(verb, group, version, resource, subresource, scope)."""


def request_labels(method: str, path: str, query: Mapping[str, str], content_type: str) -> RequestLabels:
    """The metric labels of one request, as kube-apiserver's request info would give them."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return method, "", "", "", "", ""
    if not rest:
        return method, "", "", "", "", ""  # discovery of a group version: a non-resource request
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if resource == "namespaces" and namespace == name:
        namespace = ""  # the Namespace object itself is cluster-scoped
    watch = query.get("watch", "").lower() in ("true", "1")
    if method == "GET":
        verb = "WATCH" if watch else "GET" if name else "LIST"
    elif method == "DELETE":
        verb = "DELETE" if name else "DELETECOLLECTION"
    elif method == "PATCH" and content_type.startswith("application/apply-patch"):
        verb = "APPLY"
    else:
        verb = method
    if name or method == "POST":
        scope = "resource"
    elif namespace:
        scope = "namespace"
    else:
        scope = "cluster"
    return verb, group, version, resource, subresource, scope


class ApiServerMetrics:
    """``apiserver_request_total`` and ``apiserver_request_duration_seconds`` on ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        labels = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
        self.total = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, "
            "dry run value, group, version, resource, scope, component, and HTTP response code.",
            (*labels, "code"),
            registry=registry,
        )
        self.duration = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in "
            "seconds for each verb, dry run value, group, version, resource, subresource, "
            "scope and component.",
            labels,
            registry=registry,
            buckets=REQUEST_DURATION_BUCKETS,
        )
        self._children: dict[tuple[RequestLabels, bool, int], tuple[Counter, Histogram]] = {}

    def observe(self, labels: RequestLabels, dry_run: bool, code: int, seconds: float) -> None:
        key = (labels, dry_run, code)
        children = self._children.get(key)
        if children is None:  # first request of its kind: look the series up once, then reuse them
            verb, group, version, resource, subresource, scope = labels
            dry = "All" if dry_run else ""
            children = (
                self.total.labels(verb, dry, group, version, resource, subresource, scope, _COMPONENT, str(code)),
                self.duration.labels(verb, dry, group, version, resource, subresource, scope, _COMPONENT),
            )
            self._children[key] = children
        children[0].inc()
        children[1].observe(seconds)
