"""ObjectMeta semantics, exactly as kube-apiserver applies them to every write.

Owned by ``registry/``; called by :mod:`pykueue.registry.resource_registry` between decoding and the store.
Owns: name and generateName rules, which metadata a client may not change (uid, creationTimestamp,
deletion fields), generation bumps, the status-subresource split, and the "no new finalizers while
deleting" rule. Pure functions over dicts: no store, no clock reads (``now`` is passed in).

Invariant: ``generation`` starts at 1 and only grows, and only when something outside
``metadata`` and ``status`` changes; a status write changes nothing but ``status``.
"""

from __future__ import annotations

import os
import re
import secrets
import string

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.errors import BadRequest
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo

__all__ = [
    "IMMUTABLE_META",
    "carry_server_metadata",
    "finalizer_errors",
    "generate_name",
    "meta",
    "metadata_errors",
    "name_errors",
    "new_uid",
    "pod_qos_class",
    "spec_changed",
    "split_status",
]


_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_RE = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_LABEL_RE = re.compile(rf"^{_DNS_LABEL}$")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_GENERATED_SUFFIX = 5
_ALPHABET = string.ascii_lowercase + string.digits

IMMUTABLE_META = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "name",
    "namespace",
)
"""Metadata the server owns: a client's value on update is replaced by the stored one."""


def meta(obj: JSONDict) -> JSONDict:
    """``obj["metadata"]``, created if missing (a non-dict metadata is a 400)."""
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = obj["metadata"] = {}
    if not isinstance(metadata, dict):
        raise BadRequest("metadata must be an object")
    return metadata


def new_uid() -> str:
    """A random (version 4, RFC 4122 variant) UUID, formatted without building a ``uuid.UUID``
    (half the cost of ``str(uuid.uuid4())``, paid by every create)."""
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


_VARIANT = "89ab"


def generate_name(prefix: str) -> str:
    """``prefix`` + 5 random lowercase alphanumerics, as the name generator of kube-apiserver."""
    base = prefix[: 63 - _GENERATED_SUFFIX] if len(prefix) > 63 - _GENERATED_SUFFIX else prefix
    return base + "".join(secrets.choice(_ALPHABET) for _ in range(_GENERATED_SUFFIX))


def name_errors(kind: KindInfo, name: str, *, generate: bool = False) -> list[FieldError]:
    """Validate ``metadata.name``: DNS-1123 label for namespaces, subdomain for everything else."""
    if not name:
        return [fe.required("metadata.name", "name or generateName is required")]
    errors: list[FieldError] = []
    if kind.resource_key == "namespaces":
        if len(name) > 63:
            errors.append(fe.invalid("metadata.name", name, "must be no more than 63 characters"))
        if not _LABEL_RE.match(name):
            errors.append(fe.invalid("metadata.name", name, _LABEL_MSG))
        return errors
    if len(name) > 253:
        errors.append(fe.invalid("metadata.name", name, "must be no more than 253 characters"))
    if not _SUBDOMAIN_RE.match(name):
        errors.append(fe.invalid("metadata.name", name, _SUBDOMAIN_MSG))
    if errors and generate:
        return [FieldError("metadata.generateName", e.message, e.type) for e in errors]
    return errors


_QUALIFIED_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_QUALIFIED_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_ANNOTATIONS_LIMIT = 256 * 1024


def _qualified_name_errors(path: str, key: str) -> list[FieldError]:
    prefix, _, name = key.rpartition("/")
    errors: list[FieldError] = []
    if "/" in key and (not prefix or len(prefix) > 253 or not _SUBDOMAIN_RE.match(prefix)):
        errors.append(fe.invalid(path, key, "prefix part " + _SUBDOMAIN_MSG))
    if not name or len(name) > 63 or not _QUALIFIED_RE.match(name):
        detail = "name part must be no more than 63 characters" if len(name) > 63 else _QUALIFIED_MSG
        errors.append(fe.invalid(path, key, detail))
    return errors


def metadata_errors(obj: JSONDict) -> list[FieldError]:
    """Labels, annotations, finalizers and ownerReferences, validated as kube-apiserver does."""
    metadata = obj.get("metadata") or {}
    errors: list[FieldError] = []
    labels = metadata.get("labels") or {}
    if not isinstance(labels, dict):
        return [fe.invalid("metadata.labels", labels, "must be a map of strings")]
    for key, value in labels.items():
        errors.extend(_qualified_name_errors("metadata.labels", str(key)))
        if not isinstance(value, str):
            errors.append(fe.invalid(f"metadata.labels[{key}]", value, "must be a string"))
        elif value and (len(value) > 63 or not _QUALIFIED_RE.match(value)):
            errors.append(
                fe.invalid(
                    "metadata.labels",
                    value,
                    "must be no more than 63 characters" if len(value) > 63 else _LABEL_VALUE_MSG,
                )
            )
    annotations = metadata.get("annotations") or {}
    if not isinstance(annotations, dict):
        return [*errors, fe.invalid("metadata.annotations", annotations, "must be a map of strings")]
    size = 0
    for key, value in annotations.items():
        errors.extend(_qualified_name_errors("metadata.annotations", str(key).lower()))
        size += len(str(key)) + len(str(value))
    if size > _ANNOTATIONS_LIMIT:
        errors.append(fe.too_long("metadata.annotations", _ANNOTATIONS_LIMIT))
    for index, name in enumerate(metadata.get("finalizers") or []):
        errors.extend(_qualified_name_errors(f"metadata.finalizers[{index}]", str(name)))
    controllers = 0
    for index, ref in enumerate(metadata.get("ownerReferences") or []):
        path = f"metadata.ownerReferences[{index}]"
        if not isinstance(ref, dict):
            errors.append(fe.invalid(path, ref, "must be an object"))
            continue
        for required in ("apiVersion", "kind", "name", "uid"):
            if not ref.get(required):
                errors.append(fe.required(f"{path}.{required}", f"{required} must not be empty"))
        controllers += bool(ref.get("controller"))
    if controllers > 1:
        errors.append(
            fe.invalid(
                "metadata.ownerReferences",
                metadata.get("ownerReferences"),
                "Only one reference can have Controller set to true",
            )
        )
    return errors


def finalizer_errors(old: JSONDict, new: JSONDict) -> list[FieldError]:
    """While an object is being deleted, finalizers may only be removed, never added."""
    old_meta = old.get("metadata") or {}
    if not old_meta.get("deletionTimestamp"):
        return []
    before = set(old_meta.get("finalizers") or [])
    added = [f for f in (new.get("metadata") or {}).get("finalizers") or [] if f not in before]
    if not added:
        return []
    rendered = "[]string{" + ", ".join(f'"{f}"' for f in added) + "}"
    return [
        fe.forbidden(
            "metadata.finalizers",
            f"no new finalizers can be added if the object is being deleted, found new finalizers {rendered}",
        )
    ]


def split_status(
    kind: KindInfo, current: JSONDict, new: JSONDict, subresource: str, *, keep_managed_fields: bool = False
) -> JSONDict:
    """Apply the status-subresource split and return the object to admit.

    A ``status`` write keeps everything of ``current`` except ``status`` (kube-apiserver also keeps
    metadata: labels written through /status are ignored), and except ``managedFields`` when
    ``keep_managed_fields`` says the server computed them for this write (server-side apply). A
    main-resource write of a kind that has a status subresource keeps the stored status.
    """
    if subresource == "status":
        merged = dict(current)
        merged["metadata"] = dict(current.get("metadata") or {})
        if keep_managed_fields:
            computed = (new.get("metadata") or {}).get("managedFields")
            if computed:
                merged["metadata"]["managedFields"] = computed
            else:
                merged["metadata"].pop("managedFields", None)
        if "status" in new:
            merged["status"] = new["status"]
        else:
            merged.pop("status", None)
        return merged
    if "status" in kind.subresources:
        if "status" in current:
            new["status"] = current["status"]
        else:
            new.pop("status", None)
    return new


def carry_server_metadata(current: JSONDict, new: JSONDict) -> None:
    """Overwrite server-owned metadata in ``new`` with the stored values (in place)."""
    old_meta = current.get("metadata") or {}
    new_meta = meta(new)
    for key in IMMUTABLE_META:
        if key in old_meta:
            new_meta[key] = old_meta[key]
        else:
            new_meta.pop(key, None)
    new_meta["resourceVersion"] = old_meta.get("resourceVersion")
    if "managedFields" not in new_meta and "managedFields" in old_meta:
        new_meta["managedFields"] = old_meta["managedFields"]


def pod_qos_class(pod: JSONDict) -> str:
    """kube's QOS class: BestEffort (no requests/limits), Guaranteed (limits == requests for cpu and
    memory in every container), else Burstable."""
    spec = pod.get("spec") or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    any_set = False
    guaranteed = True
    for container in containers:
        resources = (container or {}).get("resources") or {}
        requests = resources.get("requests") or {}
        limits = resources.get("limits") or {}
        if requests or limits:
            any_set = True
        for name in ("cpu", "memory"):
            limit = limits.get(name)
            if limit is None or str(requests.get(name, limit)) != str(limit):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def spec_changed(old: JSONDict, new: JSONDict) -> bool:
    """True when anything except ``metadata`` and ``status`` differs (the generation rule)."""
    keys = (set(old) | set(new)) - {"metadata", "status", "apiVersion", "kind"}
    return any(old.get(k) != new.get(k) for k in keys)
