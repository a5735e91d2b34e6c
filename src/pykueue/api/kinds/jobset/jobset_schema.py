"""The structural schema of ``jobset.x-k8s.io/v1alpha2`` JobSet, written by hand.

Owns the JobSet fields the Kueue integration and users touch (replicatedJobs with their Job
templates, network, success/failure/startup policies, suspend, coordinator, managedBy, status).
The Job templates reuse the Kubernetes client's ``JobTemplateSpec`` schema, so unknown fields
inside pod templates are detected the same way as for a batch Job.
"""

from __future__ import annotations

from functools import cache

from pykueue.api.kinds.core import core_schemas
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy

__all__ = ["schema"]

_NAME = {"type": "string", "maxLength": 63, "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}


def _obj(description: str, properties: JSONDict, required: list[str] | None = None, **extra: object) -> JSONDict:
    out: JSONDict = {"type": "object", "description": description, "properties": properties}
    if required:
        out["required"] = required
    out.update(extra)
    return out


def _str(description: str, **extra: object) -> JSONDict:
    return {"type": "string", "description": description, **extra}


def _int(description: str, **extra: object) -> JSONDict:
    return {"type": "integer", "format": "int32", "description": description, **extra}


def _bool(description: str) -> JSONDict:
    return {"type": "boolean", "description": description}


@cache
def _schema() -> JSONDict:
    job_template = core_schemas.model_schema("V1JobTemplateSpec")
    job_template["description"] = "template defines the template of the Job that will be created."
    replicated_job = _obj(
        "ReplicatedJob is a Job template and the number of replicas to create.",
        {
            "name": {
                **_NAME,
                "description": "name is the name of the entry and will be used as a suffix for the Job name.",
            },
            "groupName": _str(
                "groupName defines the name of the group this ReplicatedJob belongs to.",
                maxLength=63,
                default="default",
            ),
            "template": job_template,
            "replicas": _int(
                "replicas is the number of jobs that will be created from this ReplicatedJob's "
                "template. Jobs names will be in the format: <jobSet.name>-<spec.replicatedJob.name>-"
                "<job-index>",
                minimum=0,
                default=1,
            ),
            "dependsOn": {
                "type": "array",
                "maxItems": 1,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "description": "dependsOn is an optional list that specifies the preceding "
                "ReplicatedJobs upon which the current ReplicatedJob depends.",
                "items": _obj(
                    "DependsOn defines the dependency on the previous ReplicatedJob status.",
                    {
                        "name": _str("name of the previous ReplicatedJob."),
                        "status": _str(
                            "status defines the condition for the ReplicatedJob.", enum=["Ready", "Complete"]
                        ),
                    },
                    ["name", "status"],
                ),
            },
        },
        ["name", "template"],
    )
    spec = _obj(
        "JobSetSpec defines the desired state of JobSet",
        {
            "replicatedJobs": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "description": "replicatedJobs is the group of jobs that will form the set.",
                "items": replicated_job,
            },
            "network": _obj(
                "network defines the networking options for the jobset.",
                {
                    "enableDNSHostnames": _bool("enableDNSHostnames allows pods to be reached via their hostnames."),
                    "subdomain": _str("subdomain is an explicit choice for a network subdomain name."),
                    "publishNotReadyAddresses": _bool(
                        "publishNotReadyAddresses indicates if DNS records of pods "
                        "should be published before the pods are ready."
                    ),
                },
            ),
            "successPolicy": _obj(
                "successPolicy configures when to declare the JobSet as succeeded.",
                {
                    "operator": _str(
                        "operator determines either All or Any of the selected jobs should succeed.",
                        enum=["All", "Any"],
                    ),
                    "targetReplicatedJobs": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "targetReplicatedJobs are the names of the replicated "
                        "jobs the operator will apply to.",
                    },
                },
                ["operator"],
            ),
            "failurePolicy": _obj(
                "failurePolicy configures when to declare the JobSet as failed.",
                {
                    "maxRestarts": _int("maxRestarts defines the limit on the number of JobSet restarts."),
                    "restartStrategy": _str(
                        "restartStrategy defines the strategy to use when restarting the JobSet.",
                        enum=["Recreate", "BlockingRecreate"],
                    ),
                    "rules": {
                        "type": "array",
                        "description": "rules is a list of failure policy rules for this JobSet.",
                        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                },
            ),
            "startupPolicy": _obj(
                "startupPolicy configures in what order jobs must be started",
                {
                    "startupPolicyOrder": _str(
                        "startupPolicyOrder determines the startup order of the ReplicatedJobs.",
                        enum=["AnyOrder", "InOrder"],
                    ),
                },
                ["startupPolicyOrder"],
            ),
            "suspend": _bool("suspend suspends all running child Jobs when set to true."),
            "coordinator": _obj(
                "coordinator can be used to assign a specific pod as the coordinator for the JobSet.",
                {
                    "replicatedJob": _str(
                        "replicatedJob is the name of the ReplicatedJob which contains the coordinator pod."
                    ),
                    "jobIndex": _int("jobIndex is the index of Job which contains the coordinator pod."),
                    "podIndex": _int("podIndex is the Job completion index of the coordinator pod."),
                },
                ["replicatedJob"],
            ),
            "managedBy": _str(
                "managedBy is used to indicate the controller or entity that manages a JobSet.", maxLength=63
            ),
            "ttlSecondsAfterFinished": _int(
                "ttlSecondsAfterFinished limits the lifetime of a JobSet that has finished execution.", minimum=0
            ),
        },
    )
    condition = core_schemas.model_schema("V1Condition")
    status = _obj(
        "JobSetStatus defines the observed state of JobSet",
        {
            "conditions": {
                "type": "array",
                "items": condition,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type"],
                "description": "conditions track the status of the JobSet.",
            },
            "restarts": _int("restarts tracks the number of times the JobSet has restarted."),
            "restartsCountTowardsMax": _int(
                "restartsCountTowardsMax tracks the number of restarts that count "
                "towards the maximum allowed number of restarts."
            ),
            "terminalState": _str(
                "terminalState the state of the JobSet when it finishes execution. It can "
                "be either Completed or Failed."
            ),
            "replicatedJobsStatus": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "description": "replicatedJobsStatus track the number of JobsReady for each replicatedJob.",
                "items": _obj(
                    "ReplicatedJobStatus defines the observed ReplicatedJobs Readiness.",
                    {
                        "name": _str("name of the ReplicatedJob."),
                        "ready": _int("ready jobs."),
                        "succeeded": _int("succeeded jobs."),
                        "failed": _int("failed jobs."),
                        "active": _int("active jobs."),
                        "suspended": _int("suspended jobs."),
                    },
                    ["name", "ready", "succeeded", "failed", "active", "suspended"],
                ),
            },
        },
    )
    return _obj(
        "JobSet is the Schema for the jobsets API",
        {
            "apiVersion": _str("APIVersion defines the versioned schema of this representation of an object."),
            "kind": _str("Kind is a string value representing the REST resource this object represents."),
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
    )


def schema() -> JSONDict:
    copied: JSONDict = json_copy(_schema())
    return copied
