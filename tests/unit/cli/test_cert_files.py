"""Mounted certificate files are re-read when they change, and a broken pair never replaces a good one.

A real TLS server on a loopback port serves the context :func:`reload_when_changed` reloads; each
check reads the certificate a new handshake presents.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from tests.waiting import eventually

from pykueue.cli.cert_files import files_stamp, reload_when_changed
from pykueue.metrics.secure_endpoint import serve_secure_metrics
from pykueue.webhooks.certs import CertBundle, new_bundle
from pykueue.webhooks.server import server_ssl_context


def _write(directory: Path, bundle: CertBundle) -> None:
    (directory / "tls.crt").write_bytes(bundle.tls_crt)
    (directory / "tls.key").write_bytes(bundle.tls_key)


def _same(pem: str, bundle: CertBundle) -> bool:
    return ssl.PEM_cert_to_DER_cert(pem) == ssl.PEM_cert_to_DER_cert(bundle.tls_crt.decode())


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Path, int, CertBundle]]:
    first = new_bundle(("localhost", "127.0.0.1"))
    _write(tmp_path, first)
    loaded = files_stamp(tmp_path / "tls.crt", tmp_path / "tls.key")
    context = server_ssl_context(tmp_path / "tls.crt", tmp_path / "tls.key")
    runner, port = await serve_secure_metrics(CollectorRegistry(), "127.0.0.1", 0, ssl_context=context, auth=None)
    watcher = asyncio.create_task(
        reload_when_changed(tmp_path / "tls.crt", tmp_path / "tls.key", context, what="test", loaded=loaded, every=0.05)
    )
    try:
        yield tmp_path, port, first
    finally:
        watcher.cancel()
        await runner.cleanup()


async def _presented(port: int) -> str:
    return await asyncio.to_thread(ssl.get_server_certificate, ("127.0.0.1", port))


async def test_a_renewed_certificate_is_served_from_the_next_handshake(
    served: tuple[Path, int, CertBundle],
) -> None:
    directory, port, first = served
    assert _same(await _presented(port), first)
    renewed = new_bundle(("localhost", "127.0.0.1"))
    _write(directory, renewed)

    async def serves_renewed() -> bool:
        return _same(await _presented(port), renewed)

    await eventually(serves_renewed, within=10)


async def test_a_broken_pair_is_logged_and_the_served_certificate_stays(
    served: tuple[Path, int, CertBundle], caplog: pytest.LogCaptureFixture
) -> None:
    directory, port, first = served
    other = new_bundle(("localhost",))
    (directory / "tls.crt").write_bytes(first.tls_crt)
    (directory / "tls.key").write_bytes(other.tls_key + b"\n")  # a key that is not the certificate's
    with caplog.at_level(logging.WARNING, logger="pykueue.cli.cert_files"):

        async def warned() -> bool:
            return any("not reloaded" in r.getMessage() for r in caplog.records)

        await eventually(warned, within=10)
    assert _same(await _presented(port), first)


async def test_a_renewal_before_the_watcher_starts_is_still_served(tmp_path: Path) -> None:
    """The controller starts its watchers after it serves (a second or more under load); cert-manager
    may renew in between. The watcher compares with the files as they were loaded, not as it finds them."""
    first, renewed = new_bundle(("localhost", "127.0.0.1")), new_bundle(("localhost", "127.0.0.1"))
    _write(tmp_path, first)
    loaded = files_stamp(tmp_path / "tls.crt", tmp_path / "tls.key")
    context = server_ssl_context(tmp_path / "tls.crt", tmp_path / "tls.key")
    runner, port = await serve_secure_metrics(CollectorRegistry(), "127.0.0.1", 0, ssl_context=context, auth=None)
    try:
        assert _same(await _presented(port), first)
        await asyncio.sleep(0.02)  # a later modification time, whatever the filesystem's resolution
        _write(tmp_path, renewed)
        watcher = asyncio.create_task(
            reload_when_changed(
                tmp_path / "tls.crt", tmp_path / "tls.key", context, what="test", loaded=loaded, every=0.05
            )
        )
        try:

            async def serves_renewed() -> bool:
                return _same(await _presented(port), renewed)

            await eventually(serves_renewed, within=10)
        finally:
            watcher.cancel()
    finally:
        await runner.cleanup()
