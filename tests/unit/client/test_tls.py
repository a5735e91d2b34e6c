"""HttpClient over TLS: the CA from the kubeconfig is trusted, an unknown CA is refused, skip-verify works."""

from __future__ import annotations

import secrets
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pykueue.client import GroupVersionResource, HttpClient

from .conftest import make_registry

NAMESPACES = GroupVersionResource("", "v1", "namespaces")


@pytest.fixture
async def tls_server(tmp_path: Path) -> AsyncIterator[tuple[str, str, bytes]]:
    from pykueue.apiserver import serve
    from pykueue.apiserver.certs import ensure_certificates

    files = ensure_certificates(tmp_path, "127.0.0.1")
    token = secrets.token_urlsafe(16)
    server: Any = await serve(
        make_registry(), "127.0.0.1", 0, token=token, tls_cert=str(files.cert), tls_key=str(files.key)
    )
    try:
        yield f"https://127.0.0.1:{server.port}", token, files.ca_cert.read_bytes()
    finally:
        await server.close()


async def test_the_servers_ca_is_trusted(tls_server: tuple[str, str, bytes]) -> None:
    url, token, ca = tls_server
    async with HttpClient(url, token=token, ca=ca) as client:
        items, _ = await client.list(NAMESPACES)
    assert "default" in {i["metadata"]["name"] for i in items}


async def test_an_unknown_ca_is_refused(tls_server: tuple[str, str, bytes], tmp_path: Path) -> None:
    from pykueue.apiserver.certs import ensure_certificates

    url, token, _ = tls_server
    (tmp_path / "other").mkdir()
    other_ca = ensure_certificates(tmp_path / "other", "127.0.0.1").ca_cert.read_bytes()
    async with HttpClient(url, token=token, ca=other_ca) as client:
        with pytest.raises(aiohttp.ClientConnectorCertificateError) as info:
            await client.list(NAMESPACES)
    assert isinstance(info.value.certificate_error, ssl.SSLCertVerificationError)


async def test_insecure_skip_verify(tls_server: tuple[str, str, bytes]) -> None:
    url, token, _ = tls_server
    async with HttpClient(url, token=token, insecure=True) as client:
        items, _ = await client.list(NAMESPACES)
    assert items
