"""Kubeconfig loading and HttpClient construction from it (against the real API server)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from pykueue.api.meta.errors import Unauthorized
from pykueue.client import GroupVersionResource, HttpClient, load_kubeconfig

from .conftest import make_registry, start_server


def write(
    path: Path,
    *,
    server: str = "https://127.0.0.1:6443",
    user: dict[str, object] | None = None,
    cluster_extra: dict[str, object] | None = None,
    namespace: str | None = None,
) -> Path:
    context: dict[str, object] = {"cluster": "c", "user": "u"}
    if namespace:
        context["namespace"] = namespace
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "ctx",
        "clusters": [
            {"name": "c", "cluster": {"server": server, **(cluster_extra or {})}},
            {"name": "other", "cluster": {"server": "https://other:6443"}},
        ],
        "users": [{"name": "u", "user": user if user is not None else {"token": "t0k"}}],
        "contexts": [
            {"name": "ctx", "context": context},
            {"name": "second", "context": {"cluster": "other", "user": "u"}},
        ],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def test_current_context_token_and_ca_data(tmp_path: Path) -> None:
    ca = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    cfg = load_kubeconfig(
        write(
            tmp_path / "kc",
            cluster_extra={"certificate-authority-data": base64.b64encode(ca).decode()},
            namespace="team-a",
        )
    )
    assert cfg.server == "https://127.0.0.1:6443"
    assert cfg.token == "t0k"
    assert cfg.ca_data == ca
    assert cfg.namespace == "team-a"
    assert not cfg.insecure


def test_named_context_and_default_namespace(tmp_path: Path) -> None:
    cfg = load_kubeconfig(write(tmp_path / "kc"), context="second")
    assert cfg.server == "https://other:6443"
    assert cfg.namespace == "default"


def test_token_file_and_insecure_skip_verify(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-file\n")
    cfg = load_kubeconfig(
        write(tmp_path / "kc", user={"tokenFile": "token"}, cluster_extra={"insecure-skip-tls-verify": True})
    )
    assert cfg.token == "from-file"
    assert cfg.insecure
    ctx = cfg.ssl_context()
    assert not isinstance(ctx, bool)
    assert not ctx.check_hostname


def test_a_failing_exec_plugin_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"kubeconfig .*kc: ") as failed:  # plugins run (see test_connection)
        load_kubeconfig(
            write(
                tmp_path / "kc",
                user={
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": str(tmp_path / "no-such-plugin"),
                    }
                },
            )
        )
    assert "\n" not in str(failed.value)


def test_unknown_context_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="missing"):
        load_kubeconfig(write(tmp_path / "kc"), context="missing")


async def test_http_client_from_kubeconfig_talks_to_the_server_and_rejects_bad_tokens(tmp_path: Path) -> None:
    server, url, token = await start_server(make_registry())
    try:
        async with HttpClient.from_kubeconfig(write(tmp_path / "kc", server=url, user={"token": token})) as good:
            items, _ = await good.list(GroupVersionResource("", "v1", "namespaces"))
            assert "default" in {i["metadata"]["name"] for i in items}
        async with HttpClient(url, token="wrong") as bad:
            with pytest.raises(Unauthorized):
                await bad.list(GroupVersionResource("", "v1", "namespaces"))
    finally:
        await server.close()


def test_client_certificate_data_is_loaded_into_the_tls_context(tmp_path: Path) -> None:
    from pykueue.apiserver.certs import ensure_certificates

    files = ensure_certificates(tmp_path, "127.0.0.1")
    cfg = load_kubeconfig(
        write(
            tmp_path / "kc",
            user={
                "client-certificate-data": base64.b64encode(files.cert.read_bytes()).decode(),
                "client-key": str(files.key),
            },
            cluster_extra={"certificate-authority": str(files.ca_cert)},
        )
    )
    assert cfg.client_cert == files.cert.read_bytes()
    assert cfg.client_key == files.key.read_bytes()
    assert cfg.ca_data == files.ca_cert.read_bytes()
    ctx = cfg.ssl_context()
    assert not isinstance(ctx, bool)
    assert ctx.verify_mode.name == "CERT_REQUIRED"
    assert [c["subject"] for c in ctx.get_ca_certs()] == [((("commonName", "pykueue-ca"),),)]
