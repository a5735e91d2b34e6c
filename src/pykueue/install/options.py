"""What ``pykueue install`` (and the Helm chart) is told, and the names every rendered object shares.

Owned by ``install/``. :class:`InstallOptions` holds the user's choices (namespace, image, replicas,
resources, the Kueue ``Configuration``, integrations, certificate management); the constants are the
names of the cluster-mode contract that ``pykueue controller`` looks for (Deployment, ServiceAccount,
webhook Service and configurations, certificate Secret, leader Lease), so the controller finds what
the manifests created.

Invariant: an ``InstallOptions`` is valid once :func:`install_options` built it; bad input raises
``ValueError`` with a one-line message naming the option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from pykueue import __version__
from pykueue.controllers.config import ConfigError, parse_config
from pykueue.controllers.frameworks import DEFAULT_FRAMEWORKS

__all__ = [
    "APP_LABELS",
    "CERTIFICATE",
    "CERT_DIR",
    "CONFIG_KEY",
    "CONFIG_MAP",
    "DEFAULT_IMAGE",
    "DEPLOYMENT",
    "HEALTH_PORT",
    "ISSUER",
    "LEASE",
    "METRICS_CERTIFICATE",
    "METRICS_CERT_DIR",
    "METRICS_PORT",
    "METRICS_SECRET",
    "METRICS_SERVICE",
    "MUTATING_CONFIGURATION",
    "SECRET",
    "SERVICE_ACCOUNT",
    "VALIDATING_CONFIGURATION",
    "WEBHOOK_PORT",
    "WEBHOOK_SERVICE",
    "InstallOptions",
    "install_options",
]

DEPLOYMENT = "pykueue-controller-manager"
SERVICE_ACCOUNT = "pykueue-controller-manager"
LEASE = "pykueue-controller-leader"
WEBHOOK_SERVICE = "pykueue-webhook-service"
METRICS_SERVICE = "pykueue-controller-manager-metrics-service"
SECRET = "pykueue-webhook-server-cert"
MUTATING_CONFIGURATION = "pykueue-mutating-webhook-configuration"
VALIDATING_CONFIGURATION = "pykueue-validating-webhook-configuration"
CONFIG_MAP = "pykueue-manager-config"
CONFIG_KEY = "controller_manager_config.yaml"
CERTIFICATE = "pykueue-serving-cert"
ISSUER = "pykueue-selfsigned-issuer"
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
METRICS_CERTIFICATE = "pykueue-metrics-certs"
METRICS_SECRET = "pykueue-metrics-server-cert"
METRICS_CERT_DIR = "/tmp/k8s-metrics-server/serving-certs"
"""With cert-manager, where the metrics certificate's Secret is mounted (``--metrics-cert-dir``)."""
WEBHOOK_PORT = 9443
HEALTH_PORT = 8081
METRICS_PORT = 8443
APP_LABELS = {"app.kubernetes.io/name": "pykueue", "app.kubernetes.io/component": "controller"}
"""The labels of the controller's pods, and the selector of its Deployment and Services."""

DEFAULT_IMAGE = f"pykueue:{__version__}"
"""The tag ``make image`` (the Dockerfile) builds."""
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _default_resources() -> dict[str, Any]:
    return {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "2Gi"}}


@dataclass(frozen=True, slots=True)
class InstallOptions:
    namespace: str = "pykueue-system"
    image: str = DEFAULT_IMAGE
    replicas: int = 2
    """Two, as Kueue's chart: one leads, both serve the webhooks, so a restart never blocks admission."""
    resources: dict[str, Any] = field(default_factory=_default_resources)
    config: dict[str, Any] = field(default_factory=dict)
    """Kueue's ``Configuration`` as the user wrote it (without the fields the install sets)."""
    integrations: tuple[str, ...] = DEFAULT_FRAMEWORKS
    cert_manager: bool = False
    """False: internal certificate management (the controller makes and injects its CA); True:
    cert-manager's Certificate, Issuer and ``inject-ca-from`` annotations."""

    def controller_config(self) -> dict[str, Any]:
        """The ``Configuration`` the controller reads: the user's, with what this install decides
        written over it: the namespace, the integrations, the certificate management, and the names
        and ports the manifests use (Lease, webhook Service and Secret; health, metrics and webhook
        ports), so a Configuration copied from a Kueue install cannot point the controller elsewhere."""
        doc: dict[str, Any] = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            **self.config,
            "namespace": self.namespace,
        }
        settings: dict[str, dict[str, Any]] = {
            "integrations": {"frameworks": list(self.integrations)},
            "internalCertManagement": {
                "enable": not self.cert_manager,
                "webhookServiceName": WEBHOOK_SERVICE,
                "webhookSecretName": SECRET,
            },
            "leaderElection": {"resourceName": LEASE, "resourceNamespace": self.namespace},
            "health": {"healthProbeBindAddress": f":{HEALTH_PORT}"},
            "metrics": {"bindAddress": f":{METRICS_PORT}"},
            "webhook": {"port": WEBHOOK_PORT},
        }
        for section, values in settings.items():
            mine = doc.get(section)
            doc[section] = {**(mine if isinstance(mine, dict) else {}), **values}
        return doc

    def queued_frameworks(self) -> tuple[str, ...]:
        """The integrations the controller will run (Kueue's names, aliases resolved; the ones pykueue
        does not implement left out): what the webhooks and the RBAC are rendered for."""
        return parse_config(self.controller_config()).integrations.frameworks


def install_options(
    *,
    namespace: str = "pykueue-system",
    image: str = "",
    replicas: int = 2,
    config_text: str | None = None,
    integrations: list[str] | None = None,
    cert_manager: bool = False,
    resources: dict[str, Any] | None = None,
) -> InstallOptions:
    """Check the user's choices and build :class:`InstallOptions`; ``ValueError`` names what is wrong."""
    if not _DNS_LABEL.match(namespace) or len(namespace) > 63:
        raise ValueError(f"--namespace {namespace!r}: must be a DNS label (lower-case letters, digits, '-')")
    if replicas < 1:
        raise ValueError(f"--replicas {replicas}: must be at least 1")
    if image != "" and (image.strip() != image or " " in image):
        raise ValueError(f"--image {image!r}: must not contain spaces")
    config: dict[str, Any] = {}
    if config_text is not None:
        try:
            loaded = yaml.safe_load(config_text)
        except yaml.YAMLError as exc:
            raise ValueError(f"--config: not valid YAML: {' '.join(str(exc).split())}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ValueError("--config: not a Configuration (expected a mapping)")
        config = {k: v for k, v in (loaded or {}).items() if k not in ("apiVersion", "kind", "namespace")}
    frameworks = tuple(integrations) if integrations else _configured_frameworks(config)
    if integrations:
        try:
            parse_config({"integrations": {"frameworks": list(integrations)}})
        except ConfigError as exc:
            raise ValueError("--integrations: " + "; ".join(m for _, m in exc.errors)) from None
    options = InstallOptions(
        namespace=namespace,
        image=image or DEFAULT_IMAGE,
        replicas=replicas,
        config=config,
        integrations=frameworks,
        cert_manager=cert_manager,
        resources=resources if resources is not None else _default_resources(),
    )
    try:
        parse_config(options.controller_config())
    except ConfigError as exc:
        raise ValueError(f"--config: {exc}") from None
    return options


def _configured_frameworks(config: dict[str, Any]) -> tuple[str, ...]:
    integrations = config.get("integrations")
    frameworks = integrations.get("frameworks") if isinstance(integrations, dict) else None
    if isinstance(frameworks, list) and frameworks and all(isinstance(f, str) for f in frameworks):
        return tuple(frameworks)
    return DEFAULT_FRAMEWORKS
