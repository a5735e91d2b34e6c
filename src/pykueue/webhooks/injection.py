"""Internal certificate management: the webhook certificate kept in a Secret, its CA injected.

Owned by ``webhooks/``; run by ``pykueue controller`` on every replica (they agree: they read the
same Secret). :func:`ensure_secret` reuses the Secret ``pykueue-webhook-server-cert`` (``tls.crt``,
``tls.key``, ``ca.crt``) while it is good for the webhook Service's names, and otherwise makes a new
bundle and stores it with optimistic concurrency (a replica that loses the race reads the winner's).
:func:`inject_ca` writes the CA into ``clientConfig.caBundle`` of every webhook of the two webhook
configurations and of the conversion webhook of Kueue's CRDs; given a ``webhook_url`` (a controller
outside the cluster) it also replaces ``clientConfig.service`` by ``url: <webhook_url><path>``.

Invariant: objects are only written when something changes (an idempotent pass writes nothing), and
always with the resourceVersion they were read at (a conflict re-reads and retries).
"""

from __future__ import annotations

import base64
import logging
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pykueue.api.meta.errors import AlreadyExists, Conflict, NotFound
from pykueue.client import Client, GroupVersionResource
from pykueue.webhooks.certs import CertBundle, bundle_problem, new_bundle

__all__ = [
    "CRDS",
    "MUTATING_CONFIGURATION",
    "MUTATING_CONFIGURATIONS",
    "SECRETS",
    "SECRET_NAME",
    "SERVICE_NAME",
    "VALIDATING_CONFIGURATION",
    "VALIDATING_CONFIGURATIONS",
    "ensure_secret",
    "inject_ca",
    "refresh_certificate",
    "with_client_config",
    "write_bundle",
]

log = logging.getLogger(__name__)
JSONDict = dict[str, Any]

SECRET_NAME = "pykueue-webhook-server-cert"
SERVICE_NAME = "pykueue-webhook-service"
MUTATING_CONFIGURATION = "pykueue-mutating-webhook-configuration"
VALIDATING_CONFIGURATION = "pykueue-validating-webhook-configuration"
SECRETS = GroupVersionResource("", "v1", "secrets")
MUTATING_CONFIGURATIONS = GroupVersionResource("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations")
VALIDATING_CONFIGURATIONS = GroupVersionResource(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"
)
CRDS = GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
_KUEUE = "kueue.x-k8s.io"
_ATTEMPTS = 5


def _bundle_of(secret: JSONDict) -> CertBundle | None:
    data = secret.get("data") or {}
    try:
        return CertBundle(*(base64.b64decode(str(data[k])) for k in ("ca.crt", "tls.crt", "tls.key")))
    except (KeyError, ValueError):
        return None


def _secret(namespace: str, bundle: CertBundle, existing: JSONDict | None) -> JSONDict:
    meta: JSONDict = {"name": SECRET_NAME, "namespace": namespace}
    if existing is not None:
        meta = {**(existing.get("metadata") or {}), **meta}
    data = {"ca.crt": bundle.ca_crt, "tls.crt": bundle.tls_crt, "tls.key": bundle.tls_key}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta,
        "type": "kubernetes.io/tls",
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }


async def ensure_secret(client: Client, namespace: str, names: tuple[str, ...]) -> CertBundle:
    """A good bundle for ``names``: the Secret's when it still is, else a new one stored there."""
    for _ in range(_ATTEMPTS):
        try:
            secret: JSONDict | None = await client.get(SECRETS, SECRET_NAME, namespace)
        except NotFound:
            secret = None
        if secret is not None:
            kept = _bundle_of(secret)
            problem = "it lacks ca.crt, tls.crt or tls.key" if kept is None else bundle_problem(kept, names)
            if kept is not None and problem is None:
                return kept
            log.info("webhook certificate in Secret %s/%s is renewed: %s", namespace, SECRET_NAME, problem)
        bundle = new_bundle(names)
        try:
            if secret is None:
                await client.create(SECRETS, _secret(namespace, bundle, None), namespace)
            else:
                await client.update(SECRETS, _secret(namespace, bundle, secret))
        except (AlreadyExists, Conflict):
            continue  # another replica stored one meanwhile: read it
        log.info("webhook certificate stored in Secret %s/%s", namespace, SECRET_NAME)
        return bundle
    raise RuntimeError(
        f"could not store the webhook certificate in Secret {namespace}/{SECRET_NAME}: "
        f"it changed under every one of {_ATTEMPTS} attempts"
    )


def with_client_config(client_config: JSONDict, ca_bundle: str, webhook_url: str | None) -> JSONDict:
    """``client_config`` with the CA (base64 PEM) and, given ``webhook_url``, ``url`` for ``service``."""
    out = {**client_config, "caBundle": ca_bundle}
    if webhook_url:
        service = out.pop("service", None)
        path = str((service or {}).get("path") or urlsplit(str(out.get("url") or "")).path or "")
        out["url"] = webhook_url.rstrip("/") + path
    return out


async def _rewrite(
    client: Client, res: GroupVersionResource, name: str, change: Callable[[JSONDict], JSONDict | None]
) -> bool:
    """Read ``name``, apply ``change`` (None: nothing to do) and write it back; False if it does not exist."""
    for _ in range(_ATTEMPTS):
        try:
            obj = await client.get(res, name)
        except NotFound:
            return False
        new = change(obj)
        if new is None:
            return True
        try:
            await client.update(res, new)
            log.info("webhook CA injected into %s %s", res.plural, name)
            return True
        except Conflict:
            continue
    raise RuntimeError(f"could not inject the webhook CA into {res.plural} {name}: it kept changing")


def _configuration_change(ca_bundle: str, webhook_url: str | None) -> Callable[[JSONDict], JSONDict | None]:
    def change(obj: JSONDict) -> JSONDict | None:
        webhooks = [w for w in obj.get("webhooks") or [] if isinstance(w, dict)]
        new = [
            {**w, "clientConfig": with_client_config(dict(w.get("clientConfig") or {}), ca_bundle, webhook_url)}
            for w in webhooks
        ]
        return None if new == webhooks else {**obj, "webhooks": new}

    return change


def _crd_change(ca_bundle: str, webhook_url: str | None) -> Callable[[JSONDict], JSONDict | None]:
    def change(crd: JSONDict) -> JSONDict | None:
        spec = crd.get("spec") or {}
        conversion = spec.get("conversion") or {}
        if spec.get("group") != _KUEUE or conversion.get("strategy") != "Webhook":
            return None
        webhook = dict(conversion.get("webhook") or {})
        old = dict(webhook.get("clientConfig") or {})
        new = with_client_config(old, ca_bundle, webhook_url)
        if new == old:
            return None
        webhook["clientConfig"] = new
        return {**crd, "spec": {**spec, "conversion": {**conversion, "webhook": webhook}}}

    return change


async def inject_ca(client: Client, ca_crt: bytes, webhook_url: str | None = None) -> list[str]:
    """Inject the CA everywhere it belongs; returns the names of the objects that do not exist (yet)."""
    ca_bundle = base64.b64encode(ca_crt).decode()
    missing: list[str] = []
    configurations = _configuration_change(ca_bundle, webhook_url)
    for res, name in (
        (MUTATING_CONFIGURATIONS, MUTATING_CONFIGURATION),
        (VALIDATING_CONFIGURATIONS, VALIDATING_CONFIGURATION),
    ):
        if not await _rewrite(client, res, name, configurations):
            missing.append(name)
    crds, _ = await client.list(CRDS)
    crd_change = _crd_change(ca_bundle, webhook_url)
    for crd in crds:
        if crd_change(crd) is not None:
            await _rewrite(client, CRDS, str(crd["metadata"]["name"]), crd_change)
    return missing


def write_bundle(bundle: CertBundle, directory: Path) -> None:
    """``ca.crt``, ``tls.crt`` and ``tls.key`` (owner-only) in ``directory``, each written whole."""
    for name, data, mode in (
        ("ca.crt", bundle.ca_crt, 0o644),
        ("tls.crt", bundle.tls_crt, 0o644),
        ("tls.key", bundle.tls_key, 0o600),
    ):
        partial = directory / f".{name}.tmp"
        partial.touch(mode=mode)
        partial.write_bytes(data)
        partial.replace(directory / name)


async def refresh_certificate(
    client: Client,
    namespace: str,
    names: tuple[str, ...],
    current: CertBundle,
    directory: Path,
    context: ssl.SSLContext,
) -> CertBundle:
    """The Secret's bundle, renewed when due (:func:`ensure_secret`); when it is not ``current`` (this
    replica or another renewed it), it is written to ``directory`` and loaded into the server's
    ``context``, so the next handshake presents it (Kueue's rotator reloads its certificate the same way)."""
    fresh = await ensure_secret(client, namespace, names)
    if fresh != current:
        write_bundle(fresh, directory)
        context.load_cert_chain(str(directory / "tls.crt"), str(directory / "tls.key"))
        log.info("webhook serving certificate reloaded from Secret %s/%s", namespace, SECRET_NAME)
    return fresh
