"""Internal certificate management: the bundle, its Secret (reused while good) and the CA injected."""

from __future__ import annotations

import base64
import datetime as dt
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from tests.unit.controllers.conftest import Env

from pykueue.controllers.config import KueueConfig
from pykueue.webhooks.certs import CertBundle, bundle_problem, new_bundle, serving_names
from pykueue.webhooks.injection import (
    MUTATING_CONFIGURATION,
    MUTATING_CONFIGURATIONS,
    SECRET_NAME,
    SECRETS,
    VALIDATING_CONFIGURATION,
    ensure_secret,
    inject_ca,
    refresh_certificate,
    with_client_config,
    write_bundle,
)
from pykueue.webhooks.injection import _crd_change as crd_change
from pykueue.webhooks.server import server_ssl_context

NAMES = serving_names("pykueue-webhook-service", "pykueue-system", ("127.0.0.1",))


def test_names_cover_the_service_and_the_url_host() -> None:
    assert NAMES == (
        "pykueue-webhook-service.pykueue-system.svc",
        "pykueue-webhook-service.pykueue-system.svc.cluster.local",
        "127.0.0.1",
    )


def test_a_fresh_bundle_is_good_and_its_problems_are_named() -> None:
    bundle = new_bundle(NAMES)
    assert bundle_problem(bundle, NAMES) is None
    assert "does not cover other.example" in str(bundle_problem(bundle, ("other.example",)))
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=350)  # within 30 days of the leaf's end
    assert "expires" in str(bundle_problem(bundle, NAMES, now=later))
    other = new_bundle(NAMES)
    assert (
        bundle_problem(CertBundle(other.ca_crt, bundle.tls_crt, bundle.tls_key), NAMES)
        == "the certificate is not signed by the CA"
    )
    assert (
        bundle_problem(CertBundle(bundle.ca_crt, bundle.tls_crt, other.tls_key), NAMES)
        == "the key is not the certificate's"
    )
    assert str(bundle_problem(CertBundle(b"junk", bundle.tls_crt, bundle.tls_key), NAMES)).startswith("unreadable")


def test_client_config_gets_the_ca_and_the_url() -> None:
    service = {
        "service": {
            "namespace": "pykueue-system",
            "name": "pykueue-webhook-service",
            "path": "/mutate-batch-v1-job",
            "port": 443,
        }
    }
    assert with_client_config(service, "Q0E=", None) == {**service, "caBundle": "Q0E="}
    assert with_client_config(service, "Q0E=", "https://127.0.0.1:9443") == {
        "caBundle": "Q0E=",
        "url": "https://127.0.0.1:9443/mutate-batch-v1-job",
    }
    crd: dict[str, Any] = {
        "metadata": {"name": "workloads.kueue.x-k8s.io"},
        "spec": {
            "group": "kueue.x-k8s.io",
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {
                        "service": {
                            "namespace": "pykueue-system",
                            "name": "pykueue-webhook-service",
                            "path": "/convert",
                        }
                    },
                },
            },
        },
    }
    changed = crd_change("Q0E=", "https://127.0.0.1:9443")(crd)
    assert changed is not None
    assert changed["spec"]["conversion"]["webhook"]["clientConfig"] == {
        "caBundle": "Q0E=",
        "url": "https://127.0.0.1:9443/convert",
    }
    assert crd_change("Q0E=", "https://127.0.0.1:9443")(changed) is None  # nothing left to change
    jobset = {**crd, "spec": {**crd["spec"], "group": "jobset.x-k8s.io"}}
    assert crd_change("Q0E=", None)(jobset) is None  # not Kueue's


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    e = Env(KueueConfig(), hooks=False)
    await e.namespace("pykueue-system")
    try:
        yield e
    finally:
        await e.stop()


async def test_the_secret_is_made_once_and_reused(env: Env) -> None:
    first = await ensure_secret(env.client, "pykueue-system", NAMES)
    secret = await env.client.get(SECRETS, SECRET_NAME, "pykueue-system")
    assert secret["type"] == "kubernetes.io/tls"
    assert base64.b64decode(secret["data"]["ca.crt"]) == first.ca_crt
    again = await ensure_secret(env.client, "pykueue-system", NAMES)
    assert again == first
    assert (await env.client.get(SECRETS, SECRET_NAME, "pykueue-system"))["metadata"]["resourceVersion"] == secret[
        "metadata"
    ]["resourceVersion"]
    wider = await ensure_secret(env.client, "pykueue-system", (*NAMES, "10.0.0.7"))  # a name it lacks: renewed
    assert wider != first
    assert bundle_problem(wider, (*NAMES, "10.0.0.7")) is None


async def test_the_ca_is_injected_into_both_configurations(env: Env) -> None:
    def hook(name: str, path: str) -> dict[str, object]:
        return {
            "name": name,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {
                "service": {"namespace": "pykueue-system", "name": "pykueue-webhook-service", "path": path, "port": 443}
            },
            "rules": [{"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["jobs"]}],
        }

    await env.client.create(
        MUTATING_CONFIGURATIONS,
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": MUTATING_CONFIGURATION},
            "webhooks": [hook("mjob.kb.io", "/mutate-batch-v1-job")],
        },
    )
    bundle = new_bundle(NAMES)
    missing = await inject_ca(env.client, bundle.ca_crt, "https://127.0.0.1:9443")
    assert missing == [VALIDATING_CONFIGURATION]
    stored = await env.client.get(MUTATING_CONFIGURATIONS, MUTATING_CONFIGURATION)
    (webhook,) = stored["webhooks"]
    assert base64.b64decode(webhook["clientConfig"]["caBundle"]) == bundle.ca_crt
    assert webhook["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate-batch-v1-job"
    assert "service" not in webhook["clientConfig"]
    await inject_ca(env.client, bundle.ca_crt, "https://127.0.0.1:9443")  # idempotent: no write
    assert (await env.client.get(MUTATING_CONFIGURATIONS, MUTATING_CONFIGURATION))["metadata"][
        "resourceVersion"
    ] == stored["metadata"]["resourceVersion"]


async def ok(_: web.Request) -> web.StreamResponse:
    return web.Response(text="ok")


async def test_a_renewed_certificate_is_served_at_once(env: Env, tmp_path: Path) -> None:
    first = await ensure_secret(env.client, "pykueue-system", NAMES)
    write_bundle(first, tmp_path)
    context = server_ssl_context(tmp_path / "tls.crt", tmp_path / "tls.key")
    app = web.Application()
    app.router.add_get("/", ok)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
    url = f"https://127.0.0.1:{runner.addresses[0][1]}/"

    async def trusted_by(bundle: CertBundle) -> bool:
        trust = ssl.create_default_context(cadata=bundle.ca_crt.decode())
        try:
            async with aiohttp.ClientSession() as session, session.get(url, ssl=trust) as resp:
                return resp.status == 200
        except aiohttp.ClientConnectorCertificateError:
            return False

    try:
        assert await trusted_by(first)
        unchanged = await refresh_certificate(env.client, "pykueue-system", NAMES, first, tmp_path, context)
        assert unchanged == first
        # another replica renewed it: the Secret holds a new bundle
        renewed = new_bundle(NAMES)
        secret = await env.client.get(SECRETS, SECRET_NAME, "pykueue-system")
        secret["data"] = {
            k: base64.b64encode(v).decode()
            for k, v in (("ca.crt", renewed.ca_crt), ("tls.crt", renewed.tls_crt), ("tls.key", renewed.tls_key))
        }
        await env.client.update(SECRETS, secret)
        current = await refresh_certificate(env.client, "pykueue-system", NAMES, first, tmp_path, context)
        assert current == renewed
        assert (tmp_path / "tls.crt").read_bytes() == renewed.tls_crt
        assert oct((tmp_path / "tls.key").stat().st_mode & 0o777) == "0o600"
        assert await trusted_by(renewed)  # the running server presents the new certificate
        assert not await trusted_by(first)
    finally:
        await runner.cleanup()
