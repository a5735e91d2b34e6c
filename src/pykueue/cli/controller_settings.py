"""What ``pykueue controller`` reads from Kueue's ``Configuration`` beyond queueing: the cluster-mode sections.

Owned by ``cli/``. The queueing part of the file (namespace, integrations, manageJobsWithoutQueueName,
waitForPodsReady, fairSharing, ...) goes through the same loader as ``pykueue up --config``
(:func:`pykueue.controllers.config.parse_config`); this module reads the sections that loader accepts
without interpreting: ``clientConnection`` (qps, burst), ``leaderElection`` (leaderElect,
leaseDuration, renewDeadline, retryPeriod, resourceName, resourceNamespace), ``internalCertManagement``
(enable, webhookServiceName, webhookSecretName), ``health.healthProbeBindAddress``,
``metrics.bindAddress`` (its host too: ``127.0.0.1:8443`` serves on loopback only) and ``webhook.port``.
Command-line flags win over the file.

Fails closed: a wrong type or an unparsable duration is a ``ValueError`` naming the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ClusterSettings", "parse_duration", "read_settings"]

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str, field: str) -> float:
    """Seconds in a Go duration ("15s", "1m30s", "500ms"); ValueError naming ``field`` otherwise."""
    if not isinstance(text, str) or not text or _DURATION.sub("", text) != "":
        raise ValueError(f"{field}: {text!r} is not a duration (like 15s, 1m30s)")
    return sum(float(n) * _UNITS[u] for n, u in _DURATION.findall(text))


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    qps: float = 50.0
    burst: int = 100
    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    lease_name: str = "pykueue-controller-leader"
    lease_namespace: str = ""
    """"" = the controller's namespace."""
    internal_certs: bool = True
    service_name: str = "pykueue-webhook-service"
    health_port: int = 8081
    metrics_port: int = 8443
    metrics_host: str = ""
    """The host part of ``metrics.bindAddress`` ("" = every address, or loopback with ``--webhook-url``)."""
    webhook_port: int = 9443


def _section(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{key}: must be a mapping")
    return value


def _port(address: Any, field: str, default: int) -> int:
    if address is None:
        return default
    text = str(address)
    _, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{field}: {text!r} is not an address with a port (like :8081)")
    return int(port)


def _host(address: Any) -> str:
    """The host of ``HOST:PORT`` without IPv6 brackets ("" for ``:PORT`` or no address)."""
    if address is None:
        return ""
    return str(address).rpartition(":")[0].strip("[]")


def _number(section: dict[str, Any], key: str, field: str, default: float) -> float:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{field}: must be a positive number")
    return float(value)


def read_settings(doc: dict[str, Any]) -> ClusterSettings:
    """The cluster-mode settings of a decoded ``Configuration`` (defaults for absent fields)."""
    base = ClusterSettings()
    connection = _section(doc, "clientConnection")
    election = _section(doc, "leaderElection")
    certs = _section(doc, "internalCertManagement")
    durations = {}
    for key, default in (
        ("leaseDuration", base.lease_duration),
        ("renewDeadline", base.renew_deadline),
        ("retryPeriod", base.retry_period),
    ):
        value = election.get(key)
        durations[key] = parse_duration(value, f"leaderElection.{key}") if value is not None else default
    leader_elect = election.get("leaderElect", True)
    enable = certs.get("enable", True)
    if not isinstance(leader_elect, bool) or not isinstance(enable, bool):
        raise ValueError("leaderElection.leaderElect and internalCertManagement.enable must be true or false")
    return ClusterSettings(
        qps=_number(connection, "qps", "clientConnection.qps", base.qps),
        burst=int(_number(connection, "burst", "clientConnection.burst", base.burst)),
        leader_elect=leader_elect,
        lease_duration=durations["leaseDuration"],
        renew_deadline=durations["renewDeadline"],
        retry_period=durations["retryPeriod"],
        lease_name=str(election.get("resourceName") or base.lease_name),
        lease_namespace=str(election.get("resourceNamespace") or ""),
        internal_certs=enable,
        service_name=str(certs.get("webhookServiceName") or base.service_name),
        health_port=_port(
            _section(doc, "health").get("healthProbeBindAddress"), "health.healthProbeBindAddress", base.health_port
        ),
        metrics_port=_port(_section(doc, "metrics").get("bindAddress"), "metrics.bindAddress", base.metrics_port),
        metrics_host=_host(_section(doc, "metrics").get("bindAddress")),
        webhook_port=int(_number(_section(doc, "webhook"), "port", "webhook.port", base.webhook_port)),
    )
