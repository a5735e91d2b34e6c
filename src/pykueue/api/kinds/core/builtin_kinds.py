"""The built-in kinds an ordinary install manifest carries, stored and validated but not acted on.

Owned by ``api/``. Workloads (apps/v1 Deployment, StatefulSet), networking and identity (v1
Service, ServiceAccount, discovery.k8s.io/v1 EndpointSlice), policy (v1 LimitRange,
node.k8s.io/v1 RuntimeClass), RBAC and admission webhook configurations, and events.k8s.io/v1
Event, served as a second view of the stored core/v1 Events. The catalogue includes the records
:func:`kinds` returns, built with :func:`pykueue.api.kinds.core.core_kinds.core_kind`: their
schemas come from the official client's models (:mod:`pykueue.api.kinds.core.core_schemas`), their
rules from :mod:`pykueue.api.kinds.core.builtin_validation`.

No controller acts on these objects: a Deployment starts no Pods, a Service gets no endpoints (the
docs say so). The registry acts on one: it calls the webhooks of the stored webhook configurations.
"""

from __future__ import annotations

from pykueue.api.kinds.core import event_views
from pykueue.api.kinds.core.core_kinds import core_kind, core_kind_schemas
from pykueue.api.kinds.core.merge_keys import merge_keys_for
from pykueue.api.meta import names
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo, PrinterColumn

__all__ = ["kinds"]

_AGE = PrinterColumn("Age", "date", ".metadata.creationTimestamp")


def _kind(
    group: str,
    kind: str,
    plural: str,
    *,
    namespaced: bool,
    short_names: tuple[str, ...] = (),
    status: bool = False,
    categories: tuple[str, ...] = (),
    columns: tuple[PrinterColumn, ...] = (),
) -> KindInfo:
    return core_kind(
        group,
        "v1",
        kind,
        plural,
        namespaced=namespaced,
        short_names=short_names,
        subresources=("status",) if status else (),
        categories=categories,
        columns=columns,
    )


def _validate_event(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    return names.validate_metadata(obj.get("metadata")) + event_views.validate_events_v1(obj, old)


def _events_view() -> KindInfo:
    return KindInfo(
        group=event_views.EVENTS_GROUP,
        kind="Event",
        plural="events",
        singular="event",
        versions=("v1",),
        namespaced=True,
        short_names=("ev",),
        schema=core_kind_schemas(event_views.EVENTS_GROUP, "Event", ("v1",)),
        strategic_merge_keys=merge_keys_for(event_views.EVENTS_GROUP, "Event"),
        validate=_validate_event,
        convert=event_views.convert,
        stored_as="events",
    )


def kinds() -> list[KindInfo]:
    """The records, in the order discovery lists them."""
    return [
        _kind(
            "apps",
            "Deployment",
            "deployments",
            namespaced=True,
            short_names=("deploy",),
            status=True,
            categories=("all",),
            columns=(
                PrinterColumn("Ready", "integer", ".status.readyReplicas", description="Number of ready pods."),
                PrinterColumn(
                    "Up-to-date",
                    "integer",
                    ".status.updatedReplicas",
                    description="Total number of non-terminated pods targeted by this deployment "
                    "that have the desired template spec.",
                ),
                PrinterColumn(
                    "Available",
                    "integer",
                    ".status.availableReplicas",
                    description="Total number of available pods targeted by this deployment.",
                ),
                _AGE,
            ),
        ),
        _kind(
            "apps",
            "StatefulSet",
            "statefulsets",
            namespaced=True,
            short_names=("sts",),
            status=True,
            categories=("all",),
            columns=(
                PrinterColumn("Ready", "integer", ".status.readyReplicas", description="Number of ready pods."),
                _AGE,
            ),
        ),
        _kind(
            "",
            "Service",
            "services",
            namespaced=True,
            short_names=("svc",),
            status=True,
            categories=("all",),
            columns=(
                PrinterColumn("Type", "string", ".spec.type", description="The type of the service."),
                PrinterColumn("Cluster-IP", "string", ".spec.clusterIP", description="The IP address of the service."),
                _AGE,
            ),
        ),
        _kind("", "ServiceAccount", "serviceaccounts", namespaced=True, short_names=("sa",)),
        _kind("", "LimitRange", "limitranges", namespaced=True, short_names=("limits",)),
        _kind(
            "node.k8s.io",
            "RuntimeClass",
            "runtimeclasses",
            namespaced=False,
            columns=(
                PrinterColumn("Handler", "string", ".handler", description="The container runtime handler."),
                _AGE,
            ),
        ),
        _kind("rbac.authorization.k8s.io", "Role", "roles", namespaced=True),
        _kind(
            "rbac.authorization.k8s.io",
            "RoleBinding",
            "rolebindings",
            namespaced=True,
            columns=(PrinterColumn("Role", "string", ".roleRef.name", description="The role bound."), _AGE),
        ),
        _kind("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", namespaced=False),
        _kind(
            "rbac.authorization.k8s.io",
            "ClusterRoleBinding",
            "clusterrolebindings",
            namespaced=False,
            columns=(PrinterColumn("Role", "string", ".roleRef.name", description="The role bound."), _AGE),
        ),
        _kind(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            namespaced=False,
        ),
        _kind(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            namespaced=False,
        ),
        _kind(
            "discovery.k8s.io",
            "EndpointSlice",
            "endpointslices",
            namespaced=True,
            columns=(
                PrinterColumn("AddressType", "string", ".addressType", description="The IP family of the slice."),
                _AGE,
            ),
        ),
        _events_view(),
    ]
