"""Built-in kinds: defaults like kube-apiserver's, validation messages, unknown-field detection."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pykueue.api.catalogue import unknown_fields
from pykueue.api.schema.structural import strict_decoding_error
from pykueue.testing.builders.raw_specs import check, info, job, pod_template

JOB = info("Job", "batch")
POD = info("Pod", "")
PC = info("PriorityClass", "scheduling.k8s.io")


def _pod(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox:1.36"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": body}


# ------------------------------------------------------------------ defaults


def test_job_defaults_match_kube_apiserver() -> None:
    out = JOB.default(job())
    spec = out["spec"]
    assert (spec["parallelism"], spec["completions"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed"
    assert spec["suspend"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    pod_spec = spec["template"]["spec"]
    assert pod_spec["dnsPolicy"] == "ClusterFirst"
    assert pod_spec["schedulerName"] == "default-scheduler"
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    container = pod_spec["containers"][0]
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["imagePullPolicy"] == "Always"  # untagged image


def test_job_parallelism_alone_leaves_completions_unset() -> None:
    spec = JOB.default(job(parallelism=3))["spec"]
    assert spec["parallelism"] == 3
    assert "completions" not in spec


def test_job_backoff_limit_per_index_raises_default_backoff_limit() -> None:
    spec = JOB.default(job(completionMode="Indexed", completions=2, backoffLimitPerIndex=1))["spec"]
    assert spec["backoffLimit"] == 2**31 - 1


def test_job_selector_generated_at_create_only() -> None:
    from pykueue.api.kinds.core.core_defaults import generate_job_selector

    obj = JOB.default(job())
    assert "selector" not in obj["spec"]
    generate_job_selector(obj, "u-1")
    assert obj["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}
    labels = obj["spec"]["template"]["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "job"
    assert check(JOB, obj) == []
    # a later update (uid now set) neither regenerates nor trips the selector's immutability
    obj["metadata"]["uid"] = "u-1"
    updated = JOB.default(obj)
    updated["spec"]["suspend"] = True
    assert check(JOB, updated, obj) == []


def test_first_update_of_a_stored_job_is_valid() -> None:
    stored = JOB.default(job())
    stored["metadata"]["uid"] = "u-2"
    update = JOB.default(stored)
    update["spec"]["parallelism"] = 2
    assert check(JOB, update, stored) == []


def test_pod_defaults() -> None:
    out = POD.default(
        _pod(
            containers=[
                {
                    "name": "c",
                    "image": "busybox:1.36",
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": {"cpu": "1"}},
                }
            ]
        )
    )
    spec = out["spec"]
    assert spec["restartPolicy"] == "Always"
    container = spec["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["ports"][0]["protocol"] == "TCP"
    assert container["resources"]["requests"] == {"cpu": "1"}


def test_defaulting_is_pure_and_idempotent() -> None:
    original = job()
    snapshot = copy.deepcopy(original)
    once = JOB.default(original)
    assert original == snapshot
    assert JOB.default(once) == once


def test_priority_class_default_preemption_policy() -> None:
    out = PC.default(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 10}
    )
    assert out["preemptionPolicy"] == "PreemptLowerPriority"


# ------------------------------------------------------------------ validation

CASES = [
    (
        "job restartPolicy Always",
        JOB,
        job(template={"spec": {"containers": [{"name": "c", "image": "i"}]}}),
        None,
        "spec.template.spec.restartPolicy",
        'Unsupported value: "Always": supported values: "OnFailure", "Never"',
    ),
    (
        "job without containers",
        JOB,
        job(template={"spec": {"restartPolicy": "Never"}}),
        None,
        "spec.template.spec.containers",
        "Required value",
    ),
    ("job negative parallelism", JOB, job(parallelism=-1), None, "spec.parallelism", "greater than or equal to 0"),
    ("job negative backoffLimit", JOB, job(backoffLimit=-1), None, "spec.backoffLimit", "greater than or equal"),
    (
        "job indexed without completions",
        JOB,
        job(completionMode="Indexed", parallelism=2),
        None,
        "spec.completions",
        "when completion mode is Indexed",
    ),
    ("job bad completionMode", JOB, job(completionMode="Sometimes"), None, "spec.completionMode", "Unsupported"),
    (
        "job selector mismatch",
        JOB,
        job(selector={"matchLabels": {"a": "b"}}, manualSelector=True),
        None,
        "spec.template.metadata.labels",
        "does not match",
    ),
    (
        "job container without image",
        JOB,
        job(template={"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}}),
        None,
        "spec.template.spec.containers[0].image",
        "Required value",
    ),
    (
        "job duplicate container names",
        JOB,
        job(
            template={
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "i"}, {"name": "c", "image": "i"}],
                }
            }
        ),
        None,
        "spec.template.spec.containers[1].name",
        "Duplicate value",
    ),
    (
        "job bad quantity",
        JOB,
        job(template=pod_template(cpu="1 core")),
        None,
        "spec.template.spec.containers[0].resources.requests[cpu]",
        "quantities must match the regular expression",
    ),
    (
        "job request above limit",
        JOB,
        job(template=pod_template(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})),
        None,
        "spec.template.spec.containers[0].resources.requests",
        "must be less than or equal to cpu limit",
    ),
    (
        "job name",
        JOB,
        {**job(), "metadata": {"name": "Job_1", "namespace": "default"}},
        None,
        "metadata.name",
        "RFC 1123",
    ),
    (
        "job bad label",
        JOB,
        {**job(), "metadata": {"name": "j", "labels": {"a": "no spaces"}}},
        None,
        "metadata.labels",
        "a valid label must be",
    ),
    (
        "job completions immutable",
        JOB,
        job(completions=3),
        job(completions=2),
        "spec.completions",
        "field is immutable",
    ),
    (
        "job template immutable while running",
        JOB,
        job(template={**pod_template(), "spec": {**pod_template()["spec"], "nodeSelector": {"a": "b"}}}),
        job(suspend=False),
        "spec.template",
        "field is immutable",
    ),
    ("job type error", JOB, job(parallelism="two"), None, "spec.parallelism", "must be of type integer"),
    (
        "job backoffLimitPerIndex needs Indexed",
        JOB,
        job(backoffLimitPerIndex=1),
        None,
        "spec.backoffLimitPerIndex",
        "requires indexed completion mode",
    ),
    (
        "job maxFailedIndexes needs backoffLimitPerIndex",
        JOB,
        job(completionMode="Indexed", completions=2, maxFailedIndexes=1),
        None,
        "spec.maxFailedIndexes",
        "cannot be set when backoffLimitPerIndex is nil",
    ),
    (
        "job successPolicy needs Indexed",
        JOB,
        job(successPolicy={"rules": [{"succeededCount": 1}]}),
        None,
        "spec.successPolicy",
        "requires indexed completion mode",
    ),
    (
        "job podFailurePolicy needs Never",
        JOB,
        job(template=pod_template(), podFailurePolicy={"rules": []}, podReplacementPolicy="TerminatingOrFailed"),
        None,
        "spec.podReplacementPolicy",
        "Unsupported value",
    ),
    (
        "job managedBy immutable",
        JOB,
        job(managedBy="example.com/a"),
        job(managedBy="example.com/b"),
        "spec.managedBy",
        "field is immutable",
    ),
    (
        "pod volumeMount without volume",
        POD,
        _pod(containers=[{"name": "c", "image": "i", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]),
        None,
        "spec.containers[0].volumeMounts[0].name",
        "Not found",
    ),
    (
        "pod duplicate volume",
        POD,
        _pod(volumes=[{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]),
        None,
        "spec.volumes[1].name",
        "Duplicate value",
    ),
    (
        "pod bad container port",
        POD,
        _pod(containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 0}]}]),
        None,
        "spec.containers[0].ports[0].containerPort",
        "between 1 and 65535",
    ),
    (
        "pod env without name",
        POD,
        _pod(containers=[{"name": "c", "image": "i", "env": [{"value": "x"}]}]),
        None,
        "spec.containers[0].env[0].name",
        "Required value",
    ),
    ("pod without containers", POD, _pod(containers=[]), None, "spec.containers", "Required value"),
    ("pod bad restartPolicy", POD, _pod(restartPolicy="Sometimes"), None, "spec.restartPolicy", "Unsupported"),
    (
        "pod spec update forbidden",
        POD,
        _pod(restartPolicy="Never"),
        _pod(restartPolicy="Always"),
        "spec",
        "pod updates may not change fields",
    ),
    (
        "pod scheduling gate added",
        POD,
        _pod(schedulingGates=[{"name": "g"}]),
        _pod(),
        "spec.schedulingGates",
        "only deletion is allowed",
    ),
    (
        "gated pod nodeSelector changed",
        POD,
        _pod(schedulingGates=[{"name": "g"}], nodeSelector={"pool": "b"}),
        _pod(schedulingGates=[{"name": "g"}], nodeSelector={"pool": "a"}),
        "spec.nodeSelector",
        "only additions",
    ),
    (
        "ungated pod nodeSelector added",
        POD,
        _pod(nodeSelector={"pool": "a"}),
        _pod(),
        "spec",
        "pod updates may not change fields",
    ),
    (
        "priority class too high",
        PC,
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "hi"},
            "value": 2_000_000_000,
        },
        None,
        "value",
        "must be less than or equal to 1000000000",
    ),
    (
        "priority class value immutable",
        PC,
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 2},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 1},
        "value",
        "may not be changed",
    ),
    (
        "namespace name is a DNS label",
        info("Namespace", ""),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}},
        None,
        "metadata.name",
        "RFC 1123 label",
    ),
]


@pytest.mark.parametrize(
    ("name", "kind_info", "obj", "old", "want_field", "want_message"), CASES, ids=[c[0] for c in CASES]
)
def test_core_rule(
    name: str, kind_info: Any, obj: dict[str, Any], old: dict[str, Any] | None, want_field: str, want_message: str
) -> None:
    errors = check(kind_info, obj, old)
    matching = [e for e in errors if e.field == want_field]
    assert matching, f"{name}: no error at {want_field}; got {errors}"
    assert any(want_message in e.message for e in matching), matching


def test_suspended_job_may_change_scheduling_directives() -> None:
    """Kueue injects flavor node labels into a suspended, never-started Job before unsuspending it."""
    old = job(suspend=True)
    new = job(
        suspend=True, template={**pod_template(), "spec": {**pod_template()["spec"], "nodeSelector": {"pool": "spot"}}}
    )
    assert check(JOB, new, old) == []
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "other"
    assert any(e.field == "spec.template" for e in check(JOB, new, old))


def test_gated_pod_may_gain_node_selector_entries() -> None:
    """Kueue injects a flavor's node labels into a gated pod, then removes its gate (KEP-3838)."""
    old = _pod(schedulingGates=[{"name": "kueue.x-k8s.io/admission"}], nodeSelector={"zone": "z1"})
    new = _pod(schedulingGates=[{"name": "kueue.x-k8s.io/admission"}], nodeSelector={"zone": "z1", "pool": "a"})
    assert check(POD, new, old) == []


def test_pod_image_may_change_and_node_name_may_be_bound() -> None:
    old = _pod()
    new = _pod(nodeName="node-1")
    new["spec"]["containers"][0]["image"] = "busybox:1.37"
    assert check(POD, new, old) == []


# ------------------------------------------------------------------ unknown fields


def test_job_unknown_fields_are_detected_with_paths() -> None:
    obj = job()
    obj["spec"]["paralelism"] = 2
    obj["spec"]["template"]["spec"]["containers"][0]["comand"] = ["x"]
    obj["metadata"]["lables"] = {}
    paths = unknown_fields(JOB, "v1", obj)
    assert sorted(paths) == ["metadata.lables", "spec.paralelism", "spec.template.spec.containers[0].comand"]
    assert strict_decoding_error(["spec.paralelism"]) == 'strict decoding error: unknown field "spec.paralelism"'


def test_known_fields_and_maps_are_not_reported() -> None:
    obj = job()
    obj["metadata"]["labels"] = {"anything.example.com/x": "y"}
    obj["spec"]["template"]["spec"]["nodeSelector"] = {"whatever": "x"}
    assert unknown_fields(JOB, "v1", JOB.default(obj)) == []


def test_kueue_unknown_fields() -> None:
    from pykueue.testing.builders.raw_specs import cluster_queue

    cq = cluster_queue()
    cq["spec"]["cohort"] = "v1beta1-name"
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["max"] = 1
    cq_info = info("ClusterQueue")
    assert sorted(unknown_fields(cq_info, "v1beta2", cq)) == [
        "spec.cohort",
        "spec.resourceGroups[0].flavors[0].resources[0].max",
    ]
    v1beta1 = {**cluster_queue(), "apiVersion": "kueue.x-k8s.io/v1beta1"}
    v1beta1["spec"]["cohort"] = "team"
    assert unknown_fields(cq_info, "v1beta1", v1beta1) == []


# ------------------------------------------------------------------ JobSet and metadata

JOBSET = info("JobSet", "jobset.x-k8s.io")


def _jobset(name: str = "js", **pod_spec: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    spec.update(pod_spec)
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicatedJobs": [{"name": "workers", "template": {"spec": {"template": {"spec": spec}}}}]},
    }


def test_jobset_defaults() -> None:
    out = JOBSET.default(_jobset())
    spec = out["spec"]
    assert spec["successPolicy"]["operator"] == "All"
    assert spec["startupPolicy"]["startupPolicyOrder"] == "AnyOrder"
    assert spec["network"]["enableDNSHostnames"] is True
    replicated = spec["replicatedJobs"][0]
    assert replicated["replicas"] == 1
    job_spec = replicated["template"]["spec"]
    assert job_spec["completionMode"] == "Indexed"
    assert job_spec["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert check(JOBSET, _jobset()) == []


def test_jobset_rules() -> None:
    errors = check(JOBSET, _jobset(restartPolicy="Always"))
    assert any(e.field == "spec.replicatedJobs[0].template.spec.template.spec.restartPolicy" for e in errors)
    long_name = check(JOBSET, _jobset(name="x" * 60))
    assert any(e.field == "spec.replicatedJobs[0].name" and "too long" in e.message for e in long_name)
    unknown = _jobset()
    unknown["spec"]["replicatedJobs"][0]["replica"] = 2
    assert unknown_fields(JOBSET, "v1alpha2", unknown) == ["spec.replicatedJobs[0].replica"]


def test_name_or_generate_name_required() -> None:
    obj = job()
    del obj["metadata"]["name"]
    errors = check(JOB, obj)
    assert [e.message for e in errors if e.field == "metadata.name"] == [
        "Required value: name or generateName is required"
    ]
    obj["metadata"]["generateName"] = "sample-"
    assert check(JOB, obj) == []
    obj["metadata"].update(generateName="Sample-", name="Sample-abcde")
    assert any(e.field == "metadata.generateName" for e in check(JOB, obj))


def test_core_event_is_valid() -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "job.17a1", "namespace": "default"},
        "involvedObject": {"kind": "Job", "name": "job", "namespace": "default"},
        "reason": "Created",
        "message": "Created pod",
        "type": "Normal",
    }
    ev = info("Event", "")
    assert check(ev, event) == []
    del event["involvedObject"]
    assert [e.field for e in check(ev, event)] == ["involvedObject"]


def test_managed_fields_and_int_or_string_ports() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "n",
            "managedFields": [
                {
                    "manager": "m",
                    "operation": "Apply",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}},
                }
            ],
        },
    }
    assert check(info("Node", ""), node) == []
    assert unknown_fields(info("Node", ""), "v1", node) == []  # fieldsV1 is free-form JSON
    probe = {"httpGet": {"port": "http"}}
    pod = _pod(containers=[{"name": "c", "image": "i", "livenessProbe": probe}])
    assert check(POD, pod) == []
    pod["spec"]["containers"][0]["livenessProbe"] = {"httpGet": {"port": [80]}}
    assert any(e.field == "spec.containers[0].livenessProbe.httpGet.port" for e in check(POD, pod))
