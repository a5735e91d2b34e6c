"""The catalogue: every served kind registered once, with Kueue's names, scopes and columns."""

from __future__ import annotations

import pytest

from pykueue.api.catalogue import build_catalogue, known_crd_kinds

KUEUE = "kueue.x-k8s.io"


def test_every_kind_is_served() -> None:
    keys = {k.served_key for k in list(build_catalogue())}
    assert keys == {
        "resourceflavors.kueue.x-k8s.io",
        "clusterqueues.kueue.x-k8s.io",
        "cohorts.kueue.x-k8s.io",
        "localqueues.kueue.x-k8s.io",
        "workloads.kueue.x-k8s.io",
        "workloadpriorityclasses.kueue.x-k8s.io",
        "admissionchecks.kueue.x-k8s.io",
        "topologies.kueue.x-k8s.io",
        "namespaces",
        "pods",
        "nodes",
        "events",
        "configmaps",
        "secrets",
        "jobs.batch",
        "priorityclasses.scheduling.k8s.io",
        "leases.coordination.k8s.io",
        "jobsets.jobset.x-k8s.io",
        "deployments.apps",
        "statefulsets.apps",
        "services",
        "serviceaccounts",
        "limitranges",
        "runtimeclasses.node.k8s.io",
        "roles.rbac.authorization.k8s.io",
        "rolebindings.rbac.authorization.k8s.io",
        "clusterroles.rbac.authorization.k8s.io",
        "clusterrolebindings.rbac.authorization.k8s.io",
        "mutatingwebhookconfigurations.admissionregistration.k8s.io",
        "validatingwebhookconfigurations.admissionregistration.k8s.io",
        "endpointslices.discovery.k8s.io",
        "events.events.k8s.io",
    }


def test_events_v1_is_stored_with_core_events() -> None:
    view = build_catalogue().find("events.k8s.io", "events")
    assert view is not None
    assert view.resource_key == "events"
    assert view.stored_as == "events"


@pytest.mark.parametrize(
    ("group", "name", "kind", "namespaced", "status"),
    [
        (KUEUE, "rf", "ResourceFlavor", False, False),
        (KUEUE, "flavors", "ResourceFlavor", False, False),
        (KUEUE, "cq", "ClusterQueue", False, True),
        (KUEUE, "co", "Cohort", False, True),
        (KUEUE, "queues", "LocalQueue", True, True),
        (KUEUE, "lq", "LocalQueue", True, True),
        (KUEUE, "kwl", "Workload", True, True),
        (KUEUE, "kueueworkloads", "Workload", True, True),
        (KUEUE, "wpc", "WorkloadPriorityClass", False, False),
        (KUEUE, "ac", "AdmissionCheck", False, True),
        (KUEUE, "topo", "Topology", False, False),
        ("", "po", "Pod", True, True),
        ("", "no", "Node", False, True),
        ("", "ns", "Namespace", False, True),
        ("", "cm", "ConfigMap", True, False),
        ("", "ev", "Event", True, False),
        ("batch", "Job", "Job", True, True),
        ("scheduling.k8s.io", "pc", "PriorityClass", False, False),
        ("coordination.k8s.io", "leases", "Lease", True, False),
        ("jobset.x-k8s.io", "jobset", "JobSet", True, True),
        ("apps", "deploy", "Deployment", True, True),
        ("apps", "sts", "StatefulSet", True, True),
        ("", "svc", "Service", True, True),
        ("", "sa", "ServiceAccount", True, False),
        ("", "limits", "LimitRange", True, False),
        ("node.k8s.io", "runtimeclass", "RuntimeClass", False, False),
        ("rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", False, False),
        (
            "admissionregistration.k8s.io",
            "validatingwebhookconfiguration",
            "ValidatingWebhookConfiguration",
            False,
            False,
        ),
        ("discovery.k8s.io", "endpointslices", "EndpointSlice", True, False),
        ("events.k8s.io", "ev", "Event", True, False),
    ],
)
def test_names_scope_and_status(group: str, name: str, kind: str, namespaced: bool, status: bool) -> None:
    info = build_catalogue().find(group, name)
    assert info is not None
    assert info.kind == kind
    assert info.namespaced is namespaced
    assert ("status" in info.subresources) is status


def test_kueue_versions_and_deprecation() -> None:
    for info in list(build_catalogue()):
        if info.group == KUEUE:
            assert info.versions == ("v1beta2", "v1beta1")
            assert info.storage_version == "v1beta2"
            assert info.deprecated_versions == {"v1beta1": "This version is deprecated. Use v1beta2 instead."}
            assert info.is_crd


def test_printer_columns() -> None:
    def columns(name: str, version: str = "v1beta2") -> list[tuple[str, str, int]]:
        info = build_catalogue().find(KUEUE, name)
        assert info is not None
        return [(c.name, c.json_path, c.priority) for c in info.printer_columns.get(version, ())]

    assert columns("cq") == [
        ("Cohort", ".spec.cohortName", 0),
        ("Strategy", ".spec.queueingStrategy", 1),
        ("Pending Workloads", ".status.pendingWorkloads", 0),
        ("Admitted Workloads", ".status.admittedWorkloads", 1),
    ]
    assert columns("cq", "v1beta1")[0] == ("Cohort", ".spec.cohort", 0)
    assert [c[0] for c in columns("lq")] == ["ClusterQueue", "Pending Workloads", "Admitted Workloads"]
    assert columns("workload") == [
        ("Queue", ".spec.queueName", 0),
        ("Reserved in", ".status.admission.clusterQueue", 0),
        ("Admitted", ".status.conditions[?(@.type=='Admitted')].status", 0),
        ("Finished", ".status.conditions[?(@.type=='Finished')].status", 0),
        ("Age", ".metadata.creationTimestamp", 0),
    ]
    assert columns("wpc") == [("Value", ".value", 0)]
    assert columns("rf") == []


def test_workload_selectable_field_and_merge_keys() -> None:
    workload = build_catalogue().find(KUEUE, "workloads")
    assert workload is not None
    assert workload.selectable_fields == (".status.admission.clusterQueue",)
    job = build_catalogue().find("batch", "jobs")
    assert job is not None
    assert job.strategic_merge_keys["spec.template.spec.containers"] == "name"
    assert job.strategic_merge_keys["spec.template.spec.containers[].env"] == "name"
    assert job.strategic_merge_keys["spec.template.spec.containers[].volumeMounts"] == "mountPath"
    pod = build_catalogue().find("", "pods")
    assert pod is not None
    assert pod.strategic_merge_keys["status.conditions"] == "type"
    assert pod.strategic_merge_keys["metadata.ownerReferences"] == "uid"


def test_each_catalogue_is_its_own_object_and_a_bare_one_has_no_crd_served_kinds() -> None:
    """No global registry: a catalogue is built on request, and changing one leaves another alone."""
    first, second = build_catalogue(), build_catalogue()
    assert first is not second
    assert [k.served_key for k in first] == [k.served_key for k in second]
    removed = first.remove(KUEUE, "workloads")
    assert removed is not None
    assert first.find(KUEUE, "workloads") is None
    assert second.find(KUEUE, "workloads") is not None
    bare = build_catalogue(kueue=False)
    assert {k.group for k in bare} & {KUEUE, "jobset.x-k8s.io"} == set()
    assert not [k for k in bare if k.is_crd]
    known = known_crd_kinds()
    assert set(known) == {(k.group, k.kind) for k in second if k.is_crd}
