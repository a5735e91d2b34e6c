"""Decoding of ``application/vnd.kubernetes.protobuf`` request bodies, for the kinds kubectl sends that way.

Owned by ``apiserver/``; called by ``resources._read_object`` for request bodies with the protobuf
media type. kubectl's typed subcommands (``create namespace|configmap|secret|priorityclass|job``)
send built-in objects as Kubernetes protobuf and do not fall back to JSON on a 415; Pods come that
way from client-go's typed clients (kubectl 1.32's ``run`` sends JSON). Everything else kubectl
sends (apply, create -f, patch, label, edit) is JSON, and responses are always JSON (the clients
accept it). So this module decodes the envelope (``k8s\\x00`` +
``runtime.Unknown``) and the messages of those kinds into the JSON dicts the registry takes.

The message layouts (field numbers from Kubernetes' ``generated.proto``) are a table in a small
notation, parsed once at import. Output follows the Go JSON encoding of the same object: camelCase
names, empty non-pointer scalars omitted (gogo-protobuf writes them, ``omitempty`` drops them),
pointer scalars kept even when zero, quantities as strings, times as RFC 3339.

Invariant: a body is decoded completely or rejected: 400 for malformed bytes or a field number the
table does not know (data is never dropped silently), 415 for a kind or a field we do not decode.
"""

from __future__ import annotations

import base64
from typing import Any, NamedTuple

from pykueue.api.clock import format_time
from pykueue.api.errors import BadRequest, UnsupportedMediaType

__all__ = ["PROTOBUF", "decode_protobuf"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"
_GO_ZERO_TIME = -62135596800  # time.Time{} (0001-01-01T00:00:00Z) in Unix seconds: JSON writes it as null
_USE_JSON = "send YAML or JSON instead (kubectl create -f / kubectl apply -f)"

# Notation: "<number> <jsonName><flags>[:<type>]", comma separated. Flags: "*" repeated, "?" kept
# even when zero (Go pointer, or a field without omitempty). "<number> ^<Message>" embeds a message
# inline (Go's embedded structs). Types: s string (default), i int32/int64, b bool, t Time,
# q Quantity, ios IntOrString, {s} {y} {q} maps to string/bytes/Quantity,
# - known but not decoded (415), or a message name.
_LAYOUT: dict[str, str] = {
    "TypeMeta": "1 apiVersion, 2 kind",
    "ObjectMeta": "1 name, 2 generateName, 3 namespace, 4 selfLink, 5 uid, 6 resourceVersion, 7 generation:i, "
                  "8 creationTimestamp:t, 9 deletionTimestamp:t, 10 deletionGracePeriodSeconds?:i, 11 labels:{s}, "
                  "12 annotations:{s}, 13 ownerReferences*:OwnerReference, 14 finalizers*, 17 managedFields:-",
    "OwnerReference": "1 kind, 3 name, 4 uid, 5 apiVersion, 6 controller?:b, 7 blockOwnerDeletion?:b",
    "LabelSelector": "1 matchLabels:{s}, 2 matchExpressions*:LabelSelectorRequirement",
    "LabelSelectorRequirement": "1 key, 2 operator, 3 values*",
    # core/v1 and scheduling/v1 kinds
    "Namespace": "1 metadata:ObjectMeta, 2 spec:NamespaceSpec, 3 status:NamespaceStatus",
    "NamespaceSpec": "1 finalizers*",
    "NamespaceStatus": "1 phase, 2 conditions:-",
    "ConfigMap": "1 metadata:ObjectMeta, 2 data:{s}, 3 binaryData:{y}, 4 immutable?:b",
    "Secret": "1 metadata:ObjectMeta, 2 data:{y}, 3 type, 4 stringData:{s}, 5 immutable?:b",
    "PriorityClass": "1 metadata:ObjectMeta, 2 value?:i, 3 globalDefault:b, 4 description, 5 preemptionPolicy?",
    # batch/v1
    "Job": "1 metadata:ObjectMeta, 2 spec:JobSpec, 3 status:JobStatus",
    "JobSpec": "1 parallelism?:i, 2 completions?:i, 3 activeDeadlineSeconds?:i, 4 selector:LabelSelector, "
               "5 manualSelector?:b, 6 template:PodTemplateSpec, 7 backoffLimit?:i, 8 ttlSecondsAfterFinished?:i, "
               "9 completionMode?, 10 suspend?:b, 11 podFailurePolicy:-, 12 backoffLimitPerIndex?:i, "
               "13 maxFailedIndexes?:i, 14 podReplacementPolicy?, 15 managedBy?, 16 successPolicy:-",
    "JobStatus": "1 conditions*:JobCondition, 2 startTime:t, 3 completionTime:t, 4 active:i, 5 succeeded:i, "
                 "6 failed:i, 7 completedIndexes, 8 uncountedTerminatedPods:UncountedTerminatedPods, 9 ready?:i, "
                 "10 failedIndexes?, 11 terminating?:i",
    "JobCondition": "1 type, 2 status, 3 lastProbeTime:t, 4 lastTransitionTime:t, 5 reason, 6 message",
    "UncountedTerminatedPods": "1 succeeded*, 2 failed*",
    # core/v1 Pod and what it embeds
    "Pod": "1 metadata:ObjectMeta, 2 spec:PodSpec, 3 status:PodStatus",
    "PodTemplateSpec": "1 metadata:ObjectMeta, 2 spec:PodSpec",
    "PodSpec": "1 volumes*:Volume, 2 containers*:Container, 3 restartPolicy, 4 terminationGracePeriodSeconds?:i, "
               "5 activeDeadlineSeconds?:i, 6 dnsPolicy, 7 nodeSelector:{s}, 8 serviceAccountName, "
               "9 serviceAccount, 10 nodeName, 11 hostNetwork:b, 12 hostPID:b, 13 hostIPC:b, "
               "14 securityContext:PodSecurityContext, 15 imagePullSecrets*:LocalObjectReference, 16 hostname, "
               "17 subdomain, 18 affinity:Affinity, 19 schedulerName, 20 initContainers*:Container, "
               "21 automountServiceAccountToken?:b, 22 tolerations*:Toleration, 23 hostAliases*:HostAlias, "
               "24 priorityClassName, 25 priority?:i, 26 dnsConfig:PodDNSConfig, 27 shareProcessNamespace?:b, "
               "28 readinessGates*:PodReadinessGate, 29 runtimeClassName?, 30 enableServiceLinks?:b, "
               "31 preemptionPolicy?, 32 overhead:{q}, 33 topologySpreadConstraints*:TopologySpreadConstraint, "
               "34 ephemeralContainers:-, 35 setHostnameAsFQDN?:b, 36 os:PodOS, 37 hostUsers?:b, "
               "38 schedulingGates*:PodSchedulingGate, 39 resourceClaims*:PodResourceClaim, "
               "40 resources:ResourceRequirements, 41 hostnameOverride?, 42 workloadRef:-",
    "PodStatus": "1 phase, 2 conditions*:PodCondition, 3 message, 4 reason, 5 hostIP, 6 podIP, 7 startTime:t, "
                 "8 containerStatuses:-, 9 qosClass, 10 initContainerStatuses:-, 11 nominatedNodeName, "
                 "12 podIPs*:PodIP, 13 ephemeralContainerStatuses:-, 14 resize, 15 resourceClaimStatuses:-, "
                 "16 hostIPs*:PodIP, 17 observedGeneration:i, 18 extendedResourceClaimStatus:-, "
                 "19 allocatedResources:{q}, 20 resources:ResourceRequirements",
    "PodCondition": "1 type, 2 status, 3 lastProbeTime:t, 4 lastTransitionTime:t, 5 reason, 6 message, "
                    "7 observedGeneration:i",
    "PodIP": "1 ip",
    "Container": "1 name, 2 image, 3 command*, 4 args*, 5 workingDir, 6 ports*:ContainerPort, 7 env*:EnvVar, "
                 "8 resources:ResourceRequirements, 9 volumeMounts*:VolumeMount, 10 livenessProbe:Probe, "
                 "11 readinessProbe:Probe, 12 lifecycle:Lifecycle, 13 terminationMessagePath, 14 imagePullPolicy, "
                 "15 securityContext:SecurityContext, 16 stdin:b, 17 stdinOnce:b, 18 tty:b, "
                 "19 envFrom*:EnvFromSource, 20 terminationMessagePolicy, 21 volumeDevices*:VolumeDevice, "
                 "22 startupProbe:Probe, 23 resizePolicy*:ContainerResizePolicy, 24 restartPolicy?, "
                 "25 restartPolicyRules:-",
    "ContainerPort": "1 name, 2 hostPort:i, 3 containerPort?:i, 4 protocol, 5 hostIP",
    "EnvVar": "1 name, 2 value, 3 valueFrom:EnvVarSource",
    "EnvVarSource": "1 fieldRef:ObjectFieldSelector, 2 resourceFieldRef:ResourceFieldSelector, "
                    "3 configMapKeyRef:ConfigMapKeySelector, 4 secretKeyRef:ConfigMapKeySelector, 5 fileKeyRef:-",
    "ObjectFieldSelector": "1 apiVersion, 2 fieldPath",
    "ResourceFieldSelector": "1 containerName, 2 resource, 3 divisor:q",
    "ConfigMapKeySelector": "1 ^LocalObjectReference, 2 key, 3 optional?:b",  # SecretKeySelector: same layout
    "LocalObjectReference": "1 name",
    "EnvFromSource": "1 prefix, 2 configMapRef:EnvSource, 3 secretRef:EnvSource",
    "EnvSource": "1 ^LocalObjectReference, 2 optional?:b",  # ConfigMapEnvSource and SecretEnvSource
    "ResourceRequirements": "1 limits:{q}, 2 requests:{q}, 3 claims*:ResourceClaim",
    "ResourceClaim": "1 name, 2 request",
    "VolumeMount": "1 name, 2 readOnly:b, 3 mountPath, 4 subPath, 5 mountPropagation?, 6 subPathExpr, "
                   "7 recursiveReadOnly?",
    "VolumeDevice": "1 name, 2 devicePath",
    "ContainerResizePolicy": "1 resourceName, 2 restartPolicy",
    "Probe": "1 ^ProbeHandler, 2 initialDelaySeconds:i, 3 timeoutSeconds:i, 4 periodSeconds:i, "
             "5 successThreshold:i, 6 failureThreshold:i, 7 terminationGracePeriodSeconds?:i",
    "ProbeHandler": "1 exec:ExecAction, 2 httpGet:HTTPGetAction, 3 tcpSocket:TCPSocketAction, 4 grpc:GRPCAction",
    "Lifecycle": "1 postStart:LifecycleHandler, 2 preStop:LifecycleHandler, 3 stopSignal?",
    "LifecycleHandler": "1 exec:ExecAction, 2 httpGet:HTTPGetAction, 3 tcpSocket:TCPSocketAction, "
                        "4 sleep:SleepAction",
    "ExecAction": "1 command*",
    "HTTPGetAction": "1 path, 2 port?:ios, 3 host, 4 scheme, 5 httpHeaders*:HTTPHeader",
    "HTTPHeader": "1 name, 2 value?",
    "TCPSocketAction": "1 port?:ios, 2 host",
    "GRPCAction": "1 port?:i, 2 service?",
    "SleepAction": "1 seconds?:i",
    "SecurityContext": "1 capabilities:Capabilities, 2 privileged?:b, 3 seLinuxOptions:SELinuxOptions, "
                       "4 runAsUser?:i, 5 runAsNonRoot?:b, 6 readOnlyRootFilesystem?:b, "
                       "7 allowPrivilegeEscalation?:b, 8 runAsGroup?:i, 9 procMount?, 10 windowsOptions:-, "
                       "11 seccompProfile:Profile, 12 appArmorProfile:Profile, 13 ulimits:-",
    "PodSecurityContext": "1 seLinuxOptions:SELinuxOptions, 2 runAsUser?:i, 3 runAsNonRoot?:b, "
                          "4 supplementalGroups*:i, 5 fsGroup?:i, 6 runAsGroup?:i, 7 sysctls*:Sysctl, "
                          "8 windowsOptions:-, 9 fsGroupChangePolicy?, 10 seccompProfile:Profile, "
                          "11 appArmorProfile:Profile, 12 supplementalGroupsPolicy?, 13 seLinuxChangePolicy?",
    "Capabilities": "1 add*, 2 drop*",
    "SELinuxOptions": "1 user, 2 role, 3 type, 4 level",
    "Profile": "1 type, 2 localhostProfile?",  # SeccompProfile and AppArmorProfile
    "Sysctl": "1 name?, 2 value?",
    "Affinity": "1 nodeAffinity:NodeAffinity, 2 podAffinity:PodAffinity, 3 podAntiAffinity:PodAffinity",
    "NodeAffinity": "1 requiredDuringSchedulingIgnoredDuringExecution:NodeSelector, "
                    "2 preferredDuringSchedulingIgnoredDuringExecution*:PreferredSchedulingTerm",
    "NodeSelector": "1 nodeSelectorTerms*:NodeSelectorTerm",
    "NodeSelectorTerm": "1 matchExpressions*:NodeSelectorRequirement, 2 matchFields*:NodeSelectorRequirement",
    "NodeSelectorRequirement": "1 key, 2 operator, 3 values*",
    "PreferredSchedulingTerm": "1 weight?:i, 2 preference:NodeSelectorTerm",
    "PodAffinity": "1 requiredDuringSchedulingIgnoredDuringExecution*:PodAffinityTerm, "
                   "2 preferredDuringSchedulingIgnoredDuringExecution*:WeightedPodAffinityTerm",
    "PodAffinityTerm": "1 labelSelector:LabelSelector, 2 namespaces*, 3 topologyKey, "
                       "4 namespaceSelector:LabelSelector, 5 matchLabelKeys*, 6 mismatchLabelKeys*",
    "WeightedPodAffinityTerm": "1 weight?:i, 2 podAffinityTerm:PodAffinityTerm",
    "Toleration": "1 key, 2 operator, 3 value, 4 effect, 5 tolerationSeconds?:i",
    "HostAlias": "1 ip, 2 hostnames*",
    "PodDNSConfig": "1 nameservers*, 2 searches*, 3 options*:PodDNSConfigOption",
    "PodDNSConfigOption": "1 name, 2 value?",
    "PodReadinessGate": "1 conditionType?",
    "TopologySpreadConstraint": "1 maxSkew?:i, 2 topologyKey?, 3 whenUnsatisfiable?, 4 labelSelector:LabelSelector, "
                                "5 minDomains?:i, 6 nodeAffinityPolicy?, 7 nodeTaintsPolicy?, 8 matchLabelKeys*",
    "PodOS": "1 name?",
    "PodSchedulingGate": "1 name?",
    "PodResourceClaim": "1 name, 3 resourceClaimName?, 4 resourceClaimTemplateName?",
    "Volume": "1 name, 2 ^VolumeSource",
    "VolumeSource": "1 hostPath:HostPathVolumeSource, 2 emptyDir:EmptyDirVolumeSource, 3 gcePersistentDisk:-, "
                    "4 awsElasticBlockStore:-, 5 gitRepo:-, 6 secret:SecretVolumeSource, 7 nfs:NFSVolumeSource, "
                    "8 iscsi:-, 9 glusterfs:-, 10 persistentVolumeClaim:PVCVolumeSource, 11 rbd:-, "
                    "12 flexVolume:-, 13 cinder:-, 14 cephfs:-, 15 flocker:-, 16 downwardAPI:DownwardAPIVolumeSource, "
                    "17 fc:-, 18 azureFile:-, 19 configMap:ConfigMapVolumeSource, 20 vsphereVolume:-, 21 quobyte:-, "
                    "22 azureDisk:-, 23 photonPersistentDisk:-, 24 portworxVolume:-, 25 scaleIO:-, "
                    "26 projected:ProjectedVolumeSource, 27 storageos:-, 28 csi:-, 29 ephemeral:-, "
                    "30 image:ImageVolumeSource",
    "HostPathVolumeSource": "1 path, 2 type?",
    "EmptyDirVolumeSource": "1 medium, 2 sizeLimit:q",
    "SecretVolumeSource": "1 secretName, 2 items*:KeyToPath, 3 defaultMode?:i, 4 optional?:b",
    "ConfigMapVolumeSource": "1 ^LocalObjectReference, 2 items*:KeyToPath, 3 defaultMode?:i, 4 optional?:b",
    "KeyToPath": "1 key, 2 path, 3 mode?:i",
    "NFSVolumeSource": "1 server, 2 path, 3 readOnly:b",
    "PVCVolumeSource": "1 claimName, 2 readOnly:b",
    "DownwardAPIVolumeSource": "1 items*:DownwardAPIVolumeFile, 2 defaultMode?:i",
    "DownwardAPIVolumeFile": "1 path, 2 fieldRef:ObjectFieldSelector, 3 resourceFieldRef:ResourceFieldSelector, "
                             "4 mode?:i",
    "ProjectedVolumeSource": "1 sources*:VolumeProjection, 2 defaultMode?:i",
    "VolumeProjection": "1 secret:KeyProjection, 2 downwardAPI:DownwardAPIProjection, 3 configMap:KeyProjection, "
                        "4 serviceAccountToken:ServiceAccountTokenProjection, 5 clusterTrustBundle:-, "
                        "6 podCertificate:-",
    "KeyProjection": "1 ^LocalObjectReference, 2 items*:KeyToPath, 4 optional?:b",  # Secret/ConfigMapProjection
    "DownwardAPIProjection": "1 items*:DownwardAPIVolumeFile",
    "ServiceAccountTokenProjection": "1 audience, 2 expirationSeconds?:i, 3 path",
    "ImageVolumeSource": "1 reference, 2 pullPolicy",
}
_KINDS = {("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Pod"), ("batch/v1", "Job"),
          ("scheduling.k8s.io/v1", "PriorityClass")}
_SCALARS = frozenset({"s", "i", "b", "t", "q", "ios", "{s}", "{y}", "{q}", "-"})


class _Field(NamedTuple):
    name: str
    kind: str
    repeated: bool
    keep_zero: bool
    inline: bool


def _parse_layout(layout: dict[str, str]) -> dict[str, dict[int, _Field]]:
    table: dict[str, dict[int, _Field]] = {}
    for message, text in layout.items():
        fields: dict[int, _Field] = {}
        for item in text.split(","):
            number, spec = item.split()
            if spec.startswith("^"):
                fields[int(number)] = _Field("", spec[1:], False, False, True)
                continue
            name, _, kind = spec.partition(":")
            fields[int(number)] = _Field(name.rstrip("*?"), kind or "s", "*" in name, "?" in name, False)
        table[message] = fields
    missing = {f.kind for fields in table.values() for f in fields.values()} - _SCALARS - set(table)
    if missing:
        raise RuntimeError(f"protobuf layout refers to undefined messages: {sorted(missing)}")
    return table


_TABLE = _parse_layout(_LAYOUT)


class _Malformed(ValueError):
    """The bytes are not a valid encoding of the expected message (becomes a 400)."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise _Malformed("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & 0xFFFF_FFFF_FFFF_FFFF, pos
        shift += 7
        if shift > 63:
            raise _Malformed("varint longer than 10 bytes")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) in order: an int for varints, bytes otherwise."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _Malformed("field number 0")
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire in (1, 2, 5):
            if wire == 2:
                length, pos = _varint(data, pos)
            else:
                length = 8 if wire == 1 else 4
            if pos + length > len(data):
                raise _Malformed(f"field {number} runs past the end of its message")
            value, pos = data[pos:pos + length], pos + length
        else:
            raise _Malformed(f"unsupported wire type {wire} for field {number}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(raw: bytes) -> str:
    return raw.decode("utf-8")


def _time(raw: bytes) -> str | None:
    """A Time ({seconds, nanos}) as Kubernetes writes it in JSON (whole seconds); None for the zero time."""
    seconds = 0
    for number, wire, value in _fields(raw):
        if number not in (1, 2) or wire != 0:
            raise _Malformed(f"a Time has unexpected field {number}")
        if number == 1:
            seconds = _signed(value)
    return format_time(float(seconds)) if seconds not in (0, _GO_ZERO_TIME) else None


def _quantity(raw: bytes) -> str:
    text = ""
    for number, wire, value in _fields(raw):
        if number != 1 or wire != 2:
            raise _Malformed(f"a Quantity has field {number}, expected only 1 (string)")
        text = _text(value)
    return text


def _int_or_string(raw: bytes) -> int | str:
    values: dict[int, Any] = {}
    for number, wire, value in _fields(raw):
        if number not in (1, 2, 3) or wire != (2 if number == 3 else 0):
            raise _Malformed(f"an IntOrString has unexpected field {number}")
        values[number] = value
    return _text(values.get(3, b"")) if values.get(1) == 1 else _signed(values.get(2, 0))


def _map_entry(raw: bytes, kind: str) -> tuple[str, Any]:
    key, value = "", b""
    for number, wire, data in _fields(raw):
        if number not in (1, 2) or wire != 2:
            raise _Malformed(f"a map entry has unexpected field {number}")
        if number == 1:
            key = _text(data)
        else:
            value = data
    if kind == "{y}":
        return key, base64.b64encode(value).decode()
    return key, _quantity(value) if kind == "{q}" else _text(value)


def _is_zero(value: Any) -> bool:
    """Go's omitempty zero for what a non-repeated field decodes to (False == 0; a message is never zero)."""
    return value is None or (not isinstance(value, dict) and value in ("", 0))


def _value(field: _Field, wire: int, raw: Any, where: str) -> list[Any]:
    """The JSON value(s) of one occurrence of a field: several for a packed repeated int."""
    if field.kind in ("i", "b"):
        if wire == 0:
            numbers = [raw]
        elif wire == 2 and field.repeated:  # packed encoding of a repeated scalar
            numbers, pos = [], 0
            while pos < len(raw):
                number, pos = _varint(raw, pos)
                numbers.append(number)
        else:
            raise _Malformed(f"{where} has wire type {wire}, expected a varint")
        return [_signed(n) if field.kind == "i" else n != 0 for n in numbers]
    if wire != 2:
        raise _Malformed(f"{where} has wire type {wire}, expected length-delimited")
    data = bytes(raw)
    if field.kind == "s":
        return [_text(data)]
    if field.kind == "t":
        return [_time(data)]
    if field.kind == "q":
        return [_quantity(data)]
    if field.kind == "ios":
        return [_int_or_string(data)]
    return [_decode(field.kind, data, where)]


def _decode(message: str, data: bytes, path: str) -> dict[str, Any]:
    """One message as its JSON dict; ``path`` (JSON path of the message) only names errors."""
    table = _TABLE[message]
    out: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        field = table.get(number)
        if field is None:
            raise _Malformed(f"{message} has no field number {number} (at {path or 'the top level'})")
        where = f"{path}.{field.name}" if path else field.name
        if field.kind == "-":
            raise UnsupportedMediaType(f"{where} ({message} field {number}) is not decoded from protobuf bodies: "
                                       f"{_USE_JSON}")
        if field.inline:
            if wire != 2:
                raise _Malformed(f"{path or message} has wire type {wire} for field {number}")
            out.update(_decode(field.kind, bytes(raw), path))
        elif field.kind.startswith("{"):
            if wire != 2:
                raise _Malformed(f"{where} has wire type {wire}, expected a map entry")
            key, value = _map_entry(bytes(raw), field.kind)
            out.setdefault(field.name, {})[key] = value
        elif field.repeated:
            where = f"{where}[{len(out.get(field.name, []))}]"
            out.setdefault(field.name, []).extend(_value(field, wire, raw, where))
        else:
            (value,) = _value(field, wire, raw, where)
            if _is_zero(value) and not field.keep_zero:
                out.pop(field.name, None)  # Go's omitempty; the last occurrence of a field wins
            else:
                out[field.name] = value
    return out


def decode_protobuf(data: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object, or 400 (malformed) / 415 (kind or field not decodable)."""
    if not data.startswith(_MAGIC):
        raise BadRequest("protobuf body without the k8s envelope")
    try:
        type_meta: dict[str, Any] = {}
        raw = b""
        for number, wire, value in _fields(data[len(_MAGIC):]):
            if number not in (1, 2, 3, 4) or wire != 2:
                raise _Malformed(f"the runtime.Unknown envelope has unexpected field {number}")
            if number == 1:
                type_meta = _decode("TypeMeta", bytes(value), "")
            elif number == 2:
                raw = bytes(value)
            elif number == 3 and value:
                raise UnsupportedMediaType(f"protobuf bodies with contentEncoding {_text(value)!r} are not "
                                           f"understood: {_USE_JSON}")
        key = (type_meta.get("apiVersion", ""), type_meta.get("kind", ""))
        if key not in _KINDS:
            raise UnsupportedMediaType(
                f"protobuf bodies are only understood for Namespace, ConfigMap, Secret, PriorityClass, Job and Pod, "
                f"not {key[1] or 'this kind'}: {_USE_JSON}")
        obj = _decode(key[1], raw, "")
    except (ValueError, UnicodeDecodeError) as err:
        raise BadRequest(f"malformed protobuf body: {err}") from None
    obj["apiVersion"], obj["kind"] = key
    return obj
