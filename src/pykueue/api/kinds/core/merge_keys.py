"""Strategic-merge-patch keys of the built-in kinds (Kubernetes' ``patchMergeKey`` tags).

Owns the table the registry's strategic merge patch uses: list path (dotted, from the object root)
-> the field that identifies an element. Lists not listed here are replaced wholesale, as
Kubernetes does for atomic lists. Paths are given for every place a PodSpec is embedded.
"""

from __future__ import annotations

__all__ = ["KEY_DEFAULTS", "merge_keys_for"]

_META = {
    "metadata.ownerReferences": "uid",
}

_POD_SPEC = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "containers[].env": "name",
    "initContainers[].env": "name",
    "ephemeralContainers[].env": "name",
    "containers[].ports": "containerPort",
    "initContainers[].ports": "containerPort",
    "containers[].volumeMounts": "mountPath",
    "initContainers[].volumeMounts": "mountPath",
    "ephemeralContainers[].volumeMounts": "mountPath",
    "containers[].volumeDevices": "devicePath",
    "initContainers[].volumeDevices": "devicePath",
    "volumes": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "schedulingGates": "name",
}

_POD_STATUS = {
    "status.conditions": "type",
    "status.podIPs": "ip",
    "status.hostIPs": "ip",
    "status.resourceClaimStatuses": "name",
}


def _pod_spec_at(prefix: str) -> dict[str, str]:
    return {f"{prefix}.{path}": key for path, key in _POD_SPEC.items()}


_BY_KIND: dict[tuple[str, str], dict[str, str]] = {
    ("", "Pod"): {**_META, **_pod_spec_at("spec"), **_POD_STATUS},
    ("batch", "Job"): {**_META, **_pod_spec_at("spec.template.spec"), "status.conditions": "type"},
    ("", "Node"): {
        **_META,
        "status.conditions": "type",
        "status.addresses": "type",
    },
    ("", "Namespace"): {**_META, "status.conditions": "type"},
    ("", "Event"): dict(_META),
    ("", "ConfigMap"): dict(_META),
    ("", "Secret"): dict(_META),
    ("scheduling.k8s.io", "PriorityClass"): dict(_META),
    ("coordination.k8s.io", "Lease"): dict(_META),
    ("apps", "Deployment"): {**_META, **_pod_spec_at("spec.template.spec"), "status.conditions": "type"},
    ("apps", "StatefulSet"): {**_META, **_pod_spec_at("spec.template.spec"), "status.conditions": "type"},
    ("", "Service"): {**_META, "spec.ports": "port,protocol", "status.conditions": "type"},
    ("", "ServiceAccount"): {**_META, "secrets": "name", "imagePullSecrets": "name"},
    ("", "LimitRange"): dict(_META),
    ("node.k8s.io", "RuntimeClass"): dict(_META),
    ("rbac.authorization.k8s.io", "Role"): dict(_META),
    ("rbac.authorization.k8s.io", "RoleBinding"): dict(_META),
    ("rbac.authorization.k8s.io", "ClusterRole"): dict(_META),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): dict(_META),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): {**_META, "webhooks": "name"},
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): {**_META, "webhooks": "name"},
    ("discovery.k8s.io", "EndpointSlice"): dict(_META),
    ("events.k8s.io", "Event"): dict(_META),
}


def merge_keys_for(group: str, kind: str) -> dict[str, str]:
    """Merge keys for a built-in kind; empty for custom resources (they use JSON merge semantics)."""
    return dict(_BY_KIND.get((group, kind), {}))


KEY_DEFAULTS: dict[tuple[str, str], dict[str, dict[str, str]]] = {
    ("", "Service"): {"spec.ports": {"protocol": "TCP"}},
}
"""List-map key fields that have a default (kind -> list path -> field -> value). Server-side apply
fills them into an applied configuration before merging, as kube-apiserver does, so a port applied
without ``protocol`` is the same item as the stored port that was defaulted to TCP."""
