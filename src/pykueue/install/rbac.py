"""The least-privilege RBAC of ``pykueue controller``: what each of its parts reads and writes, no more.

Owned by ``install/``. Every rule below names the code that needs it. The ClusterRole covers the
controllers (informers list+watch; the writes of the workload, queue, scheduling and job controllers;
events in any namespace) and, with internal certificate management, the CA injection into the two
webhook configurations and Kueue's CRDs (by name). The Role in the install namespace covers the
leader-election Lease and the webhook certificate Secret (by name; ``create`` cannot be limited to a
name, as a create has none in its URL, so it is granted on its own). The metrics port's reviews
(TokenReview, SubjectAccessReview creates) are in the ClusterRole; who may scrape is the unbound
ClusterRole ``pykueue-metrics-reader`` (``get`` on the non-resource URL ``/metrics``), as Kueue ships.

The rules depend on the enabled integrations (a JobSet-less install grants nothing on JobSets) and on
the certificate management (with cert-manager the controller touches no Secret, webhook configuration
or CRD). :mod:`pykueue.install.rbac_check` proves them against the requests the controller made.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.catalogue import build_catalogue
from pykueue.install.options import (
    DEPLOYMENT,
    LEASE,
    MUTATING_CONFIGURATION,
    SECRET,
    SERVICE_ACCOUNT,
    VALIDATING_CONFIGURATION,
    InstallOptions,
)

__all__ = [
    "CLUSTER_ROLE",
    "EXPECTED_UNUSED",
    "INTEGRATION_RULES",
    "METRICS_READER_ROLE",
    "ROLE",
    "controller_rules",
    "namespace_rules",
    "rbac_objects",
]

JSONDict = dict[str, Any]
CLUSTER_ROLE = "pykueue-manager-role"
METRICS_READER_ROLE = "pykueue-metrics-reader"
"""Bound to nobody by the install: a platform team binds its Prometheus' ServiceAccount to it (Kueue's
``kueue-metrics-reader``)."""
ROLE = "pykueue-leader-election-role"
_KUEUE = "kueue.x-k8s.io"
_WATCH = ["list", "watch"]


def _rule(group: str, resources: list[str], verbs: list[str], names: tuple[str, ...] = ()) -> JSONDict:
    rule: JSONDict = {"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}
    if names:
        rule["resourceNames"] = list(names)
    return rule


_CONTROLLERS: list[JSONDict] = [
    # ControllerManager's informers of the configuration kinds (namespace selectors of ClusterQueues)
    _rule("", ["namespaces"], _WATCH),
    # EventRecorder: a new event is created, a repeated one has its count patched
    _rule("", ["events"], ["create", "patch"]),
    # the priority of a job comes from its PriorityClass (informer)
    _rule("scheduling.k8s.io", ["priorityclasses"], _WATCH),
    # informers; the queue controller adds and removes the resource-in-use finalizer (patch)
    _rule(_KUEUE, ["clusterqueues", "resourceflavors"], [*_WATCH, "patch"]),
    _rule(_KUEUE, ["cohorts", "localqueues", "workloadpriorityclasses"], _WATCH),
    # job reconcilers create, patch (spec, finalizers) and delete Workloads; the workload controller
    # deactivates and garbage-collects them; get re-reads after a conflict on status
    _rule(_KUEUE, ["workloads"], ["create", "delete", "get", "list", "patch", "watch"]),
    _rule(_KUEUE, ["clusterqueues", "cohorts", "localqueues"], ["get"]),
    # the scheduler loop (admission, eviction), the workload and job controllers and the queue
    # status writer patch status through the status subresource
    _rule(_KUEUE, ["clusterqueues/status", "cohorts/status", "localqueues/status", "workloads/status"], ["patch"]),
    # the metrics port asks the API server who a scraper's bearer token belongs to (TokenReview) and
    # whether that user may get /metrics (SubjectAccessReview), as controller-runtime's secure serving
    _rule("authentication.k8s.io", ["tokenreviews"], ["create"]),
    _rule("authorization.k8s.io", ["subjectaccessreviews"], ["create"]),
]

INTEGRATION_RULES: dict[str, list[JSONDict]] = {
    # the Job adapter suspends/resumes with an update, resets status.startTime on stop
    "batch/job": [_rule("batch", ["jobs"], [*_WATCH, "update"]), _rule("batch", ["jobs/status"], ["patch"])],
    # the JobSet adapter suspends/resumes with an update
    "jobset.x-k8s.io/jobset": [_rule("jobset.x-k8s.io", ["jobsets"], [*_WATCH, "update"])],
    # pod groups: scheduling gates and finalizers are patched, excess pods deleted
    "pod": [_rule("", ["pods"], [*_WATCH, "delete", "patch"])],
}
"""What each job integration's reconciler needs on its kind, by Kueue's framework name."""


EXPECTED_UNUSED: tuple[tuple[str, str, str], ...] = (
    # a pod group's surplus pods are deleted only when more pods than its size were created
    ("delete", "", "pods"),
    # a Workload is deleted when its job is gone or its retention expires, not in every run
    ("delete", _KUEUE, "workloads"),
    # objects are read back only after a status write lost a race (409)
    ("get", _KUEUE, "workloads"),
    ("get", _KUEUE, "clusterqueues"),
    ("get", _KUEUE, "cohorts"),
    ("get", _KUEUE, "localqueues"),
    # a Cohort's status (its weighted share) is written only with fair sharing on
    ("patch", _KUEUE, "cohorts/status"),
    # a repeated event has its count patched; an event seen once is only created
    ("patch", "", "events"),
    # a Job's status.startTime is reset only when a job that had started is stopped (preempted, evicted)
    ("patch", "batch", "jobs/status"),
    # the Lease and the certificate Secret are created once per cluster: a later run finds them;
    # the certificate is replaced only when it nears expiry or stops matching the Service's names
    ("create", "coordination.k8s.io", "leases"),
    ("create", "", "secrets"),
    ("update", "", "secrets"),
    # reviews are made only when something scrapes the metrics port
    ("create", "authentication.k8s.io", "tokenreviews"),
    ("create", "authorization.k8s.io", "subjectaccessreviews"),
)
"""(verb, apiGroup, resource) grants a correct run may leave unused, each with its reason: the
allow-list of the least-privilege check (:func:`pykueue.install.rbac_check.check_audit`)."""


def _kueue_crd_names() -> tuple[str, ...]:
    return tuple(f"{k.plural}.{k.group}" for k in build_catalogue() if k.is_crd and k.group == _KUEUE)


def controller_rules(options: InstallOptions) -> list[JSONDict]:
    """The ClusterRole's rules for this install."""
    rules = [*_CONTROLLERS]
    for framework in options.queued_frameworks():
        rules.extend(INTEGRATION_RULES.get(framework, []))
    if not options.cert_manager:
        rules.extend(
            [
                # internal certificates: the CA goes into both webhook configurations (read, then updated)
                _rule(
                    "admissionregistration.k8s.io",
                    ["mutatingwebhookconfigurations"],
                    ["get", "update"],
                    (MUTATING_CONFIGURATION,),
                ),
                _rule(
                    "admissionregistration.k8s.io",
                    ["validatingwebhookconfigurations"],
                    ["get", "update"],
                    (VALIDATING_CONFIGURATION,),
                ),
                # ... and into the conversion webhook of Kueue's CRDs (found by listing, written by name)
                _rule("apiextensions.k8s.io", ["customresourcedefinitions"], ["list"]),
                _rule("apiextensions.k8s.io", ["customresourcedefinitions"], ["get", "update"], _kueue_crd_names()),
            ]
        )
    return rules


def namespace_rules(options: InstallOptions) -> list[JSONDict]:
    """The Role's rules in the install namespace."""
    rules = [
        # leader election: the Lease is created once, then read and renewed by name
        _rule("coordination.k8s.io", ["leases"], ["create"]),
        _rule("coordination.k8s.io", ["leases"], ["get", "update"], (LEASE,)),
    ]
    if not options.cert_manager:
        # internal certificates: the serving certificate is kept in one Secret
        rules.extend([_rule("", ["secrets"], ["create"]), _rule("", ["secrets"], ["get", "update"], (SECRET,))])
    return rules


def rbac_objects(options: InstallOptions) -> list[JSONDict]:
    """ClusterRole + ClusterRoleBinding, Role + RoleBinding, all bound to the controller's ServiceAccount;
    and the metrics reader ClusterRole, unbound."""
    ns = options.namespace
    subject = [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": ns}]
    labels = {"app.kubernetes.io/name": "pykueue"}
    group = "rbac.authorization.k8s.io"
    return [
        {
            "apiVersion": f"{group}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": CLUSTER_ROLE, "labels": labels},
            "rules": controller_rules(options),
        },
        {
            "apiVersion": f"{group}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{DEPLOYMENT}-rolebinding", "labels": labels},
            "roleRef": {"apiGroup": group, "kind": "ClusterRole", "name": CLUSTER_ROLE},
            "subjects": subject,
        },
        {
            "apiVersion": f"{group}/v1",
            "kind": "Role",
            "metadata": {"name": ROLE, "namespace": ns, "labels": labels},
            "rules": namespace_rules(options),
        },
        {
            "apiVersion": f"{group}/v1",
            "kind": "RoleBinding",
            "metadata": {"name": f"{ROLE}binding", "namespace": ns, "labels": labels},
            "roleRef": {"apiGroup": group, "kind": "Role", "name": ROLE},
            "subjects": subject,
        },
        {
            "apiVersion": f"{group}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": METRICS_READER_ROLE, "labels": labels},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        },
    ]
