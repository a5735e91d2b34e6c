"""The controller's workload objects: Namespace, ServiceAccount, its Configuration, Deployment, Services.

Owned by ``install/``. The Deployment runs ``pykueue controller`` (2 replicas; one leads on the Lease,
both serve the webhooks) as a non-root user on a read-only root filesystem with every capability
dropped; ``/tmp`` is a writable ``emptyDir`` (the internal certificate files are written there). The
probes are the controller's ``/healthz`` and ``/readyz`` on the health port; the Configuration is a
ConfigMap mounted read-only and passed with ``--config``. With cert-manager, the Certificates' Secrets
are mounted where the controller reads its webhook certificate (``--cert-dir``) and its metrics
certificate (``--metrics-cert-dir``), both from a self-signed Issuer; without, the metrics port serves
a self-signed certificate the controller makes at start, as Kueue's.
"""

from __future__ import annotations

from typing import Any

import yaml

from pykueue.install.options import (
    APP_LABELS,
    CERT_DIR,
    CERTIFICATE,
    CONFIG_KEY,
    CONFIG_MAP,
    DEPLOYMENT,
    HEALTH_PORT,
    ISSUER,
    METRICS_CERT_DIR,
    METRICS_CERTIFICATE,
    METRICS_PORT,
    METRICS_SECRET,
    METRICS_SERVICE,
    SECRET,
    SERVICE_ACCOUNT,
    WEBHOOK_PORT,
    WEBHOOK_SERVICE,
    InstallOptions,
)

__all__ = ["cert_manager_objects", "controller_objects", "namespace_object"]

JSONDict = dict[str, Any]
_CONFIG_DIR = "/etc/pykueue"


def _meta(name: str, options: InstallOptions, labels: dict[str, str] | None = None) -> JSONDict:
    return {"name": name, "namespace": options.namespace, "labels": dict(labels or APP_LABELS)}


def namespace_object(options: InstallOptions) -> JSONDict:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": options.namespace, "labels": {"app.kubernetes.io/name": "pykueue"}},
    }


def config_text(options: InstallOptions) -> str:
    """The ConfigMap's Configuration, as YAML (block style, keys in the order written)."""
    return yaml.safe_dump(options.controller_config(), sort_keys=False, default_flow_style=False)


def _probe(path: str, initial: int, period: int) -> JSONDict:
    return {"httpGet": {"path": path, "port": HEALTH_PORT}, "initialDelaySeconds": initial, "periodSeconds": period}


def _container(options: InstallOptions) -> JSONDict:
    mounts: list[JSONDict] = [
        {"name": "config", "mountPath": _CONFIG_DIR, "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    args = [
        "controller",
        f"--config={_CONFIG_DIR}/{CONFIG_KEY}",
        f"--namespace={options.namespace}",
        f"--cert-dir={CERT_DIR}",
        f"--webhook-port={WEBHOOK_PORT}",
        f"--health-port={HEALTH_PORT}",
        f"--metrics-port={METRICS_PORT}",
    ]
    if options.cert_manager:
        mounts.append({"name": "cert", "mountPath": CERT_DIR, "readOnly": True})
        mounts.append({"name": "metrics-cert", "mountPath": METRICS_CERT_DIR, "readOnly": True})
        args.append(f"--metrics-cert-dir={METRICS_CERT_DIR}")
    return {
        "name": "manager",
        "image": options.image,
        "imagePullPolicy": "IfNotPresent",
        "args": args,
        "ports": [
            {"name": "webhook-server", "containerPort": WEBHOOK_PORT, "protocol": "TCP"},
            {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
            {"name": "health", "containerPort": HEALTH_PORT, "protocol": "TCP"},
        ],
        "livenessProbe": _probe("/healthz", 15, 20),
        "readinessProbe": _probe("/readyz", 5, 10),
        "resources": options.resources,
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": mounts,
    }


def _deployment(options: InstallOptions) -> JSONDict:
    volumes: list[JSONDict] = [{"name": "config", "configMap": {"name": CONFIG_MAP}}, {"name": "tmp", "emptyDir": {}}]
    if options.cert_manager:
        volumes.append({"name": "cert", "secret": {"secretName": SECRET, "defaultMode": 420}})
        volumes.append({"name": "metrics-cert", "secret": {"secretName": METRICS_SECRET, "defaultMode": 420}})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(DEPLOYMENT, options),
        "spec": {
            "replicas": options.replicas,
            "selector": {"matchLabels": dict(APP_LABELS)},
            "template": {
                "metadata": {"labels": dict(APP_LABELS)},
                "spec": {
                    "serviceAccountName": SERVICE_ACCOUNT,
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "terminationGracePeriodSeconds": 10,
                    "containers": [_container(options)],
                    "volumes": volumes,
                },
            },
        },
    }


def _service(name: str, port: int, target: int, port_name: str, options: InstallOptions) -> JSONDict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, options),
        "spec": {
            "selector": dict(APP_LABELS),
            "ports": [{"name": port_name, "port": port, "targetPort": target, "protocol": "TCP"}],
        },
    }


def controller_objects(options: InstallOptions) -> list[JSONDict]:
    """ServiceAccount, ConfigMap, Deployment and the two Services, in the order they are applied."""
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(SERVICE_ACCOUNT, options)},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta(CONFIG_MAP, options),
            "data": {CONFIG_KEY: config_text(options)},
        },
        _service(WEBHOOK_SERVICE, 443, WEBHOOK_PORT, "webhook", options),
        _service(METRICS_SERVICE, METRICS_PORT, METRICS_PORT, "https", options),
        _deployment(options),
    ]


def _certificate(name: str, service: str, secret: str, options: InstallOptions) -> JSONDict:
    """A cert-manager Certificate from the self-signed Issuer for ``service`` in the install namespace,
    stored in ``secret``."""
    host = f"{service}.{options.namespace}.svc"
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": _meta(name, options),
        "spec": {
            "dnsNames": [host, f"{host}.cluster.local"],
            "issuerRef": {"kind": "Issuer", "name": ISSUER},
            "secretName": secret,
        },
    }


def cert_manager_objects(options: InstallOptions) -> list[JSONDict]:
    """A self-signed Issuer, the webhook Service's and the metrics Service's Certificates, stored in the
    Secrets the Deployment mounts."""
    if not options.cert_manager:
        return []
    return [
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": _meta(ISSUER, options),
            "spec": {"selfSigned": {}},
        },
        _certificate(CERTIFICATE, WEBHOOK_SERVICE, SECRET, options),
        _certificate(METRICS_CERTIFICATE, METRICS_SERVICE, METRICS_SECRET, options),
    ]
