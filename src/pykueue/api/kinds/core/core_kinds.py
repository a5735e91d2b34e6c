"""The records of Kubernetes' own kinds that the embedded cluster runs on, with their hooks.

Owned by ``api/kinds/core``. Namespace, Pod, Node, core/v1 Event, ConfigMap, Secret, batch/v1
Job, PriorityClass and Lease, and :func:`core_kind`, the one way a built-in kind's record is made
(also for the install-manifest kinds of :mod:`pykueue.api.kinds.core.builtin_kinds`): its schema
read from the official client's models, its strategic-merge keys, kube-apiserver's hand-written
defaults (``SetDefaults_*``) and rules for the kinds that have them. Built-in kinds get no
defaults from their schema, as in kube-apiserver.
"""

from __future__ import annotations

from collections.abc import Callable

from pykueue.api.kinds.core import builtin_defaults, builtin_validation, core_defaults, core_schemas, core_validation
from pykueue.api.kinds.core.merge_keys import merge_keys_for
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo, PrinterColumn, version_setter
from pykueue.api.schema.lazy_schemas import LazySchemas
from pykueue.api.schema.object_validation import KindRule, with_checks

__all__ = ["core_kind", "core_kind_schemas", "kinds"]

_DEFAULTERS: dict[tuple[str, str], Callable[[JSONDict], None]] = {
    ("batch", "Job"): core_defaults.default_job,
    ("", "Pod"): core_defaults.default_pod,
    ("scheduling.k8s.io", "PriorityClass"): core_defaults.default_priority_class,
    ("", "Secret"): core_defaults.default_secret,
    **builtin_defaults.DEFAULTERS,
}
"""Kinds whose defaulting is hand-written (it edits anywhere): they get a full private copy."""

_RULES: dict[tuple[str, str], KindRule] = {
    ("batch", "Job"): core_validation.validate_job,
    ("", "Pod"): core_validation.validate_pod,
    ("scheduling.k8s.io", "PriorityClass"): core_validation.validate_priority_class,
    **builtin_validation.RULES,
}

_LABEL_NAMED = {("", "Namespace")}
"""Kinds whose names must be DNS labels rather than subdomains."""


def core_kind_schemas(group: str, kind: str, versions: tuple[str, ...]) -> LazySchemas:
    """A built-in kind's schemas, read from the official client's models on first use."""
    return LazySchemas(group, kind, versions, lambda version: core_schemas.schema(group, version, kind))


def core_kind(
    group: str,
    version: str,
    kind: str,
    plural: str,
    *,
    namespaced: bool,
    short_names: tuple[str, ...] = (),
    subresources: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    columns: tuple[PrinterColumn, ...] = (),
) -> KindInfo:
    """The record of one built-in kind, served in one version, with its hooks."""
    info = KindInfo(
        group=group,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        versions=(version,),
        namespaced=namespaced,
        short_names=short_names,
        categories=categories,
        subresources=subresources,
        schema=core_kind_schemas(group, kind, (version,)),
        printer_columns={version: columns} if columns else {},
        strategic_merge_keys=merge_keys_for(group, kind),
        convert=version_setter(group),
    )
    return with_checks(
        info,
        rule=_RULES.get((group, kind)),
        hand_written=_DEFAULTERS.get((group, kind)),
        name_format="label" if (group, kind) in _LABEL_NAMED else "subdomain",
    )


def kinds() -> list[KindInfo]:
    """The records, in the order discovery lists them."""
    return [
        core_kind("", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",), subresources=("status",)),
        core_kind(
            "",
            "v1",
            "Pod",
            "pods",
            namespaced=True,
            short_names=("po",),
            subresources=("status", "log"),
            categories=("all",),
        ),
        core_kind("", "v1", "Node", "nodes", namespaced=False, short_names=("no",), subresources=("status",)),
        core_kind("", "v1", "Event", "events", namespaced=True, short_names=("ev",)),
        core_kind("", "v1", "ConfigMap", "configmaps", namespaced=True, short_names=("cm",)),
        core_kind("", "v1", "Secret", "secrets", namespaced=True),
        core_kind("batch", "v1", "Job", "jobs", namespaced=True, subresources=("status",), categories=("all",)),
        core_kind("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", namespaced=False, short_names=("pc",)),
        core_kind("coordination.k8s.io", "v1", "Lease", "leases", namespaced=True),
    ]
