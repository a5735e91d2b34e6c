"""Kueue's controller configuration (``config.kueue.x-k8s.io/v1beta2`` ``Configuration``), typed.

Owns: the settings that change what the controllers do (Kueue's Configuration), as small frozen dataclasses
whose attribute docstrings justify each default, and :func:`load_config` which reads the YAML a
user hands to ``pykueue up --config`` / ``pykueue controller --config``.

Who calls it: ``cli/`` builds a :class:`KueueConfig` and passes it to ``ControllerManager``; the
manager derives the scheduler's ``SchedulerConfig`` from it (:meth:`KueueConfig.scheduler_config`).

Invariant: a ``KueueConfig`` is always valid. Bad input never produces a half-read config: it
raises :class:`ConfigError` listing every problem with its field path
(``waitForPodsReady.timeout: must be a duration like "5m"``).

Decision (documented in DESIGN/README too): ``waitForPodsReady`` is **on by default** with a 30 min
timeout, as Kueue's v1beta2 configuration defaults it. Turn it off with
``waitForPodsReady: {enable: false}`` (our stand-in for Kueue's alpha gate ``DisableWaitForPodsReady``).
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass, field
from typing import Any

import yaml

from pykueue.apiserver.tls_options import CIPHER_SUITES, TLS_VERSIONS, TLSOptions
from pykueue.controllers.frameworks import DEFAULT_FRAMEWORKS, IMPLEMENTED, KUEUE_FRAMEWORKS
from pykueue.scheduler.types import (
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    AdmissionFairSharingConfig,
    FairSharingConfig,
    SchedulerConfig,
)

__all__ = [
    "KNOWN_FRAMEWORKS",
    "ConfigError",
    "IntegrationsConfig",
    "KueueConfig",
    "NamespaceSelector",
    "RequeuingStrategy",
    "WaitForPodsReady",
    "embedded_default",
    "embedded_default_document",
    "load_config",
    "parse_config",
]

API_VERSION = "config.kueue.x-k8s.io/v1beta2"
KIND = "Configuration"

KNOWN_FRAMEWORKS = IMPLEMENTED
"""Integrations pykueue implements (Kueue's framework names)."""
_FRAMEWORK_ALIASES = {"jobset": "jobset.x-k8s.io/jobset", "job": "batch/job"}
_ALLOWED_STRATEGIES = (
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
    (LESS_THAN_INITIAL_SHARE,),
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE),
)


class ConfigError(ValueError):
    """The configuration file is invalid. ``errors`` lists ``(field path, message)``; fix each and retry."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__("invalid Configuration: " + "; ".join(f"{path}: {msg}" for path, msg in errors))


@dataclass(frozen=True, slots=True)
class RequeuingStrategy:
    timestamp: str = "Eviction"
    """Queue-order timestamp of a workload evicted by PodsReadyTimeout: ``Eviction`` (Kueue's default:
    it goes behind work that waited meanwhile) or ``Creation`` (keeps its original place)."""
    backoff_base_seconds: int = 60
    """Kueue's default: the first requeue waits a minute, long enough for a transient node
    problem to clear, short enough not to starve the job."""
    backoff_max_seconds: int = 3600
    """Kueue's default cap: never wait more than an hour between attempts."""
    backoff_limit_count: int | None = None
    """None (Kueue's default) = requeue forever; N = deactivate after N requeues
    (``RequeuingLimitExceeded``)."""


@dataclass(frozen=True, slots=True)
class WaitForPodsReady:
    enable: bool = True
    """On by default, as Kueue v1beta2 defaults the struct to present: an admitted job whose pods
    never become ready must give its quota back rather than hold it forever."""
    timeout_seconds: float = 1800.0
    """Kueue's default 30 minutes: generous enough for image pulls and slow nodes."""
    block_admission: bool = False
    """Kueue's default: do not serialise admissions behind unready workloads (it would slow every
    queue down to the slowest pod start)."""
    recovery_timeout_seconds: float | None = None
    """None = same as ``timeout_seconds`` (Kueue's default)."""
    requeuing_strategy: RequeuingStrategy = field(default_factory=RequeuingStrategy)

    @property
    def recovery_timeout(self) -> float:
        return self.timeout_seconds if self.recovery_timeout_seconds is None else self.recovery_timeout_seconds


@dataclass(frozen=True, slots=True)
class NamespaceSelector:
    """A ``metav1.LabelSelector`` (matchLabels + matchExpressions) evaluated against namespace labels."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[tuple[str, str, tuple[str, ...]], ...] = (
        ("kubernetes.io/metadata.name", "NotIn", ("kube-system", "kueue-system")),
    )
    """Kueue's default: every namespace except ``kube-system`` and Kueue's own namespace."""

    def matches(self, labels: dict[str, str]) -> bool:
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        for key, op, values in self.match_expressions:
            present = key in labels
            if op == "In" and (not present or labels[key] not in values):
                return False
            if op == "NotIn" and present and labels[key] in values:
                return False
            if op == "Exists" and not present:
                return False
            if op == "DoesNotExist" and present:
                return False
        return True


@dataclass(frozen=True, slots=True)
class IntegrationsConfig:
    frameworks: tuple[str, ...] = ("batch/job",)
    """Kueue's default: only batch/v1 Jobs are managed unless more integrations are listed."""
    label_keys_to_copy: tuple[str, ...] = ()
    """Job labels copied onto the Workload (Kueue's ``labelKeysToCopy``); none by default."""
    not_implemented: tuple[str, ...] = ()
    """Frameworks the configuration lists that Kueue knows but pykueue does not implement: accepted
    (a user's Kueue configuration must load), said once at start, and their labelled objects get
    a Warning event that they run without queueing."""


@dataclass(frozen=True, slots=True)
class KueueConfig:
    manage_jobs_without_queue_name: bool = False
    """Kueue's default: a job without a queue-name label is left alone, so installing pykueue never
    changes the behaviour of jobs nobody asked it to manage."""
    managed_jobs_namespace_selector: NamespaceSelector = field(default_factory=NamespaceSelector)
    wait_for_pods_ready: WaitForPodsReady = field(default_factory=WaitForPodsReady)
    fair_sharing: FairSharingConfig | None = None
    """None (Kueue's default) = classic preemption; present = fair sharing on."""
    admission_fair_sharing: AdmissionFairSharingConfig | None = None
    """None (Kueue's default) = Admission Fair Sharing off."""
    integrations: IntegrationsConfig = field(default_factory=IntegrationsConfig)
    namespace: str = "kueue-system"
    """The namespace pykueue itself runs in (excluded from management by the default selector)."""
    retain_finished_workloads_seconds: float | None = None
    """``objectRetentionPolicies.workloads.afterFinished``: None (Kueue's default) keeps finished
    Workloads forever, so ``kubectl get workloads`` still explains what ran."""
    tls: TLSOptions = field(default_factory=TLSOptions)
    """``tls.minVersion`` / ``tls.cipherSuites``, applied to the servers pykueue runs; empty (Kueue's
    default) leaves the TLS library's defaults."""

    def scheduler_config(self) -> SchedulerConfig:
        """The engine settings this configuration implies."""
        return SchedulerConfig(
            fair_sharing=self.fair_sharing,
            admission_fair_sharing=self.admission_fair_sharing,
            pods_ready_requeue_by_eviction=self.wait_for_pods_ready.requeuing_strategy.timestamp == "Eviction",
        )


def embedded_default() -> KueueConfig:
    """``pykueue up`` without ``--config``: Kueue's defaults, except that the integrations are the
    ones Kueue's Helm chart enables that pykueue implements (Job, JobSet, pod groups), so a labelled
    JobSet or pod group is queued, never silently run outside every quota."""
    return KueueConfig(integrations=IntegrationsConfig(frameworks=DEFAULT_FRAMEWORKS))


def embedded_default_document() -> dict[str, Any]:
    """:func:`embedded_default` as the ``Configuration`` document that loads as it (a test checks),
    which ``pykueue up`` stores in the cluster so that tools can read what it runs with."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "namespace": KueueConfig().namespace,
        "integrations": {"frameworks": list(DEFAULT_FRAMEWORKS)},
    }


# --------------------------------------------------------------------------- parsing

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)(h|ms|m|s|us|ns))+$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def _duration(value: Any, path: str, errors: list[tuple[str, str]]) -> float | None:
    """Go-style durations ("30m", "1h30m", "90s") as Kueue's config accepts them; numbers are seconds."""
    if isinstance(value, bool):
        errors.append((path, 'must be a duration like "5m"'))
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and _DURATION.match(value.strip()):
        seconds = sum(float(n) * _UNIT[u] for n, u in _DURATION_PART.findall(value))
    else:
        errors.append((path, 'must be a duration like "5m"'))
        return None
    if seconds < 0:
        errors.append((path, "must not be negative"))
        return None
    return seconds


class _Reader:
    """Walks one mapping, recording type errors with their paths and unknown fields."""

    def __init__(self, data: Any, path: str, errors: list[tuple[str, str]]) -> None:
        self.path = path
        self.errors = errors
        if data is None:
            data = {}
        if not isinstance(data, dict):
            errors.append((path or "<root>", "must be a mapping"))
            data = {}
        self.data: dict[str, Any] = data
        self.seen: set[str] = set()

    def sub(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def get(self, key: str) -> Any:
        self.seen.add(key)
        return self.data.get(key)

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def boolean(self, key: str, default: bool) -> bool:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.errors.append((self.sub(key), "must be true or false"))
            return default
        return value

    def integer(self, key: str, default: int | None, minimum: int = 0) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.errors.append((self.sub(key), "must be an integer"))
            return default
        if value < minimum:
            self.errors.append((self.sub(key), f"must be >= {minimum}"))
            return default
        return value

    def strings(self, key: str) -> tuple[str, ...] | None:
        value = self.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.errors.append((self.sub(key), "must be a list of strings"))
            return None
        return tuple(value)

    def done(self, ignored: tuple[str, ...] = ()) -> None:
        for key in self.data:
            if key not in self.seen and key not in ignored:
                self.errors.append((self.sub(key), "unknown field"))


# Fields of Kueue's Configuration that do not change pykueue's behaviour; accepted, not interpreted.
_IGNORED_TOP = (
    "health",
    "metrics",
    "webhook",
    "controller",
    "clientConnection",
    "leaderElection",
    "internalCertManagement",
    "multiKueue",
    "resources",
    "pprofBindAddress",
    "featureGates",
    "queueVisibility",
    "waitForPodsReadyLegacy",
)


def parse_config(data: Any) -> KueueConfig:
    """Build a :class:`KueueConfig` from a decoded ``Configuration`` document; raise ConfigError."""
    errors: list[tuple[str, str]] = []
    root = _Reader(data, "", errors)
    api_version = root.get("apiVersion")
    if api_version not in (None, API_VERSION, "config.kueue.x-k8s.io/v1beta1"):
        errors.append(("apiVersion", f"must be {API_VERSION}"))
    kind = root.get("kind")
    if kind not in (None, KIND):
        errors.append(("kind", f"must be {KIND}"))
    namespace = root.get("namespace") or "kueue-system"
    if not isinstance(namespace, str):
        errors.append(("namespace", "must be a string"))
        namespace = "kueue-system"
    manage = root.boolean("manageJobsWithoutQueueName", False)
    selector = _namespace_selector(root, namespace, errors)
    v1beta1 = api_version == "config.kueue.x-k8s.io/v1beta1"
    wfpr = _wait_for_pods_ready(root, errors, v1beta1=v1beta1)
    fair = _fair_sharing(root, errors, v1beta1=v1beta1)
    afs = _admission_fair_sharing(root, errors)
    integrations = _integrations(root, errors)
    retain = _retention(root, errors)
    tls = _tls(root, errors)
    root.done(ignored=_IGNORED_TOP)
    if errors:
        raise ConfigError(errors)
    return KueueConfig(
        manage_jobs_without_queue_name=manage,
        managed_jobs_namespace_selector=selector,
        wait_for_pods_ready=wfpr,
        fair_sharing=fair,
        admission_fair_sharing=afs,
        integrations=integrations,
        namespace=namespace,
        retain_finished_workloads_seconds=retain,
        tls=tls,
    )


def load_config(text: str) -> KueueConfig:
    """Parse YAML text (a ``Configuration`` document); raise :class:`ConfigError` on any problem."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError([("<root>", f"not valid YAML: {exc}")]) from None
    return parse_config(data)


def _namespace_selector(root: _Reader, namespace: str, errors: list[tuple[str, str]]) -> NamespaceSelector:
    default = NamespaceSelector(
        match_expressions=(("kubernetes.io/metadata.name", "NotIn", ("kube-system", namespace)),)
    )
    if not root.has("managedJobsNamespaceSelector"):
        root.get("managedJobsNamespaceSelector")
        return default
    sel = _Reader(root.get("managedJobsNamespaceSelector"), "managedJobsNamespaceSelector", errors)
    labels_raw = sel.get("matchLabels") or {}
    labels: list[tuple[str, str]] = []
    if not isinstance(labels_raw, dict) or not all(isinstance(v, str) for v in labels_raw.values()):
        errors.append((sel.sub("matchLabels"), "must map label keys to string values"))
    else:
        labels = sorted(labels_raw.items())
    exprs: list[tuple[str, str, tuple[str, ...]]] = []
    raw_exprs = sel.get("matchExpressions") or []
    if not isinstance(raw_exprs, list):
        errors.append((sel.sub("matchExpressions"), "must be a list"))
        raw_exprs = []
    for i, raw in enumerate(raw_exprs):
        expr = _Reader(raw, f"{sel.sub('matchExpressions')}[{i}]", errors)
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if not isinstance(key, str) or not key:
            errors.append((expr.sub("key"), "required"))
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            errors.append((expr.sub("operator"), 'must be one of "In", "NotIn", "Exists", "DoesNotExist"'))
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            errors.append((expr.sub("values"), "must be a list of strings"))
            values = []
        if op in ("In", "NotIn") and not values:
            errors.append((expr.sub("values"), f"must be non-empty for operator {op}"))
        expr.done()
        exprs.append((str(key), str(op), tuple(values)))
    sel.done()
    return NamespaceSelector(match_labels=tuple(labels), match_expressions=tuple(exprs))


def _wait_for_pods_ready(root: _Reader, errors: list[tuple[str, str]], *, v1beta1: bool) -> WaitForPodsReady:
    """v1beta2: present unless disabled; v1beta1: off unless ``enable: true`` (Kueue's v1beta1 conversion)."""
    if not root.has("waitForPodsReady"):
        root.get("waitForPodsReady")
        return WaitForPodsReady(enable=not v1beta1)
    w = _Reader(root.get("waitForPodsReady"), "waitForPodsReady", errors)
    enable = w.boolean("enable", not v1beta1)
    timeout = _duration(w.get("timeout"), w.sub("timeout"), errors) if w.has("timeout") else 1800.0
    recovery = (
        _duration(w.get("recoveryTimeout"), w.sub("recoveryTimeout"), errors) if w.has("recoveryTimeout") else None
    )
    block = w.boolean("blockAdmission", False)
    strategy = RequeuingStrategy()
    if w.has("requeuingStrategy"):
        r = _Reader(w.get("requeuingStrategy"), w.sub("requeuingStrategy"), errors)
        timestamp = r.get("timestamp") or "Eviction"
        if timestamp not in ("Eviction", "Creation"):
            errors.append((r.sub("timestamp"), 'must be "Eviction" or "Creation"'))
            timestamp = "Eviction"
        base = r.integer("backoffBaseSeconds", 60) or 60
        maximum = r.integer("backoffMaxSeconds", 3600) or 3600
        limit = r.integer("backoffLimitCount", None)
        r.done()
        strategy = RequeuingStrategy(
            timestamp=timestamp, backoff_base_seconds=base, backoff_max_seconds=maximum, backoff_limit_count=limit
        )
    else:
        w.get("requeuingStrategy")
    w.done()
    if timeout is not None and timeout <= 0 and enable:
        errors.append((w.sub("timeout"), "must be positive"))
    return WaitForPodsReady(
        enable=enable,
        timeout_seconds=timeout or 1800.0,
        block_admission=block,
        recovery_timeout_seconds=recovery,
        requeuing_strategy=strategy,
    )


def _fair_sharing(root: _Reader, errors: list[tuple[str, str]], *, v1beta1: bool) -> FairSharingConfig | None:
    if not root.has("fairSharing"):
        root.get("fairSharing")
        return None
    f = _Reader(root.get("fairSharing"), "fairSharing", errors)
    enable = f.boolean("enable", not v1beta1)  # v1beta1 needs enable: true; v1beta2: presence means on
    strategies = f.strings("preemptionStrategies")
    f.done()
    if strategies and strategies not in _ALLOWED_STRATEGIES:
        errors.append(
            (
                f.sub("preemptionStrategies"),
                "must be one of [LessThanOrEqualToFinalShare], [LessThanInitialShare], "
                "[LessThanOrEqualToFinalShare, LessThanInitialShare]",
            )
        )
        strategies = None
    if not enable:
        return None
    return FairSharingConfig(preemption_strategies=strategies) if strategies else FairSharingConfig()


def _admission_fair_sharing(root: _Reader, errors: list[tuple[str, str]]) -> AdmissionFairSharingConfig | None:
    if not root.has("admissionFairSharing"):
        root.get("admissionFairSharing")
        return None
    a = _Reader(root.get("admissionFairSharing"), "admissionFairSharing", errors)
    half = (
        _duration(a.get("usageHalfLifeTime"), a.sub("usageHalfLifeTime"), errors) if a.has("usageHalfLifeTime") else 0.0
    )
    sampling = (
        _duration(a.get("usageSamplingInterval"), a.sub("usageSamplingInterval"), errors)
        if a.has("usageSamplingInterval")
        else 300.0
    )
    weights_raw = a.get("resourceWeights") or {}
    weights: dict[str, float] = {}
    if not isinstance(weights_raw, dict):
        errors.append((a.sub("resourceWeights"), "must map resource names to numbers"))
    else:
        for name, value in weights_raw.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                errors.append((f"{a.sub('resourceWeights')}.{name}", "must be a non-negative number"))
            else:
                weights[str(name)] = float(value)
    a.done()
    return AdmissionFairSharingConfig(
        usage_half_life_seconds=half or 0.0, usage_sampling_interval_seconds=sampling or 300.0, resource_weights=weights
    )


def _integrations(root: _Reader, errors: list[tuple[str, str]]) -> IntegrationsConfig:
    if not root.has("integrations"):
        root.get("integrations")
        return IntegrationsConfig()
    i = _Reader(root.get("integrations"), "integrations", errors)
    frameworks = i.strings("frameworks")
    labels = i.strings("labelKeysToCopy") or ()
    i.done(ignored=("externalFrameworks", "podOptions"))
    if frameworks is None:
        return IntegrationsConfig(label_keys_to_copy=labels)
    resolved: list[str] = []
    missing: list[str] = []
    for n, name in enumerate(frameworks):
        canonical = _FRAMEWORK_ALIASES.get(name, name)
        if canonical not in KUEUE_FRAMEWORKS:
            errors.append(
                (
                    f"{i.sub('frameworks')}[{n}]",
                    f'unsupported framework "{name}"; Kueue\'s frameworks: {", ".join(KUEUE_FRAMEWORKS)}',
                )
            )
        elif canonical not in KNOWN_FRAMEWORKS:
            if canonical not in missing:
                missing.append(canonical)
        elif canonical not in resolved:
            resolved.append(canonical)
    return IntegrationsConfig(frameworks=tuple(resolved), label_keys_to_copy=labels, not_implemented=tuple(missing))


def _retention(root: _Reader, errors: list[tuple[str, str]]) -> float | None:
    if not root.has("objectRetentionPolicies"):
        root.get("objectRetentionPolicies")
        return None
    policies = _Reader(root.get("objectRetentionPolicies"), "objectRetentionPolicies", errors)
    workloads = _Reader(policies.get("workloads"), policies.sub("workloads"), errors)
    after = workloads.get("afterFinished")
    retain = _duration(after, workloads.sub("afterFinished"), errors) if after is not None else None
    workloads.get("afterDeactivatedByKueue")  # accepted; deactivated workloads are kept (not implemented)
    workloads.done()
    policies.done()
    return retain


def _tls(root: _Reader, errors: list[tuple[str, str]]) -> TLSOptions:
    """``tls: {minVersion, cipherSuites}`` with Go's names, as Kueue's configuration takes them."""
    if not root.has("tls"):
        root.get("tls")
        return TLSOptions()
    t = _Reader(root.get("tls"), "tls", errors)
    version = t.get("minVersion")
    if version is None or version == "":
        version = ""
    elif version not in TLS_VERSIONS:
        errors.append(
            (t.sub("minVersion"), f'unsupported TLS version "{version}"; supported: ' + ", ".join(TLS_VERSIONS))
        )
        version = ""
    suites = t.strings("cipherSuites") or ()
    for n, suite in enumerate(suites):
        if suite not in CIPHER_SUITES:
            errors.append((f"{t.sub('cipherSuites')}[{n}]", f'unsupported cipher suite "{suite}"'))
    t.done()
    options = TLSOptions(min_version=str(version), cipher_suites=tuple(s for s in suites if s in CIPHER_SUITES))
    try:  # fail here, with the field's path, rather than when the server starts
        options.apply(ssl.create_default_context(ssl.Purpose.CLIENT_AUTH))
    except ssl.SSLError:
        errors.append((t.sub("cipherSuites"), "none of these cipher suites is available in this Python's OpenSSL"))
    return options
