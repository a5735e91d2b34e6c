"""The generated TLS material passes strict X.509 verification and is re-checked on every start."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
from pathlib import Path

import pytest
from cryptography import x509

from pykueue.api.meta.clock import SystemClock
from pykueue.apiserver.certs import RENEW_BEFORE, SERVING_LIFETIME, TlsFiles, ensure_certificates
from pykueue.registry import Registry
from pykueue.store import Store


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _strict_context(ca: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    return context


async def test_strict_x509_verification_accepts_the_served_certificate(tmp_path: Path) -> None:
    from pykueue.apiserver import serve

    files = ensure_certificates(tmp_path, "127.0.0.1")
    server = await serve(
        Registry(Store(None), clock=SystemClock()),
        "127.0.0.1",
        0,
        token="t" * 43,
        tls_cert=str(files.cert),
        tls_key=str(files.key),
    )
    try:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", server.port, ssl=_strict_context(files.ca_cert), server_hostname="127.0.0.1"
        )
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert (await reader.read()).startswith(b"HTTP/1.1 200")
        writer.close()
        await writer.wait_closed()
    finally:
        await server.close()


def test_both_certificates_carry_key_identifiers(tmp_path: Path) -> None:
    files = ensure_certificates(tmp_path, "127.0.0.1")
    ca, serving = _cert(files.ca_cert), _cert(files.cert)
    ca_ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    aki = serving.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == ca_ski.digest
    assert serving.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    assert not serving.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_good_certificates_are_reused(tmp_path: Path) -> None:
    first = ensure_certificates(tmp_path, "127.0.0.1")
    before = (first.ca_cert.read_bytes(), first.cert.read_bytes(), first.key.read_bytes())
    again = ensure_certificates(tmp_path, "127.0.0.1")
    assert (again.ca_cert.read_bytes(), again.cert.read_bytes(), again.key.read_bytes()) == before


def test_a_serving_certificate_near_expiry_is_reissued_by_the_same_ca(tmp_path: Path) -> None:
    files = ensure_certificates(tmp_path, "127.0.0.1")
    ca_before = files.ca_cert.read_bytes()
    later = dt.datetime.now(dt.UTC) + SERVING_LIFETIME - RENEW_BEFORE + dt.timedelta(days=1)
    ensure_certificates(tmp_path, "127.0.0.1", now=later)
    assert files.ca_cert.read_bytes() == ca_before  # kubeconfigs holding the CA keep working
    assert _cert(files.cert).not_valid_after_utc > later + RENEW_BEFORE


def test_an_address_the_certificate_does_not_cover_gets_a_new_one(tmp_path: Path) -> None:
    files = ensure_certificates(tmp_path, "127.0.0.1")
    ensure_certificates(tmp_path, "127.0.0.2")
    san = _cert(files.cert).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.2" in {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}


@pytest.mark.parametrize("damage", ["key of another pair", "garbage certificate", "missing key"])
def test_a_damaged_pair_is_replaced(tmp_path: Path, damage: str) -> None:
    files = ensure_certificates(tmp_path, "127.0.0.1")
    (tmp_path / "other").mkdir()
    other = ensure_certificates(tmp_path / "other", "127.0.0.1")
    if damage == "key of another pair":
        files.key.write_bytes(other.key.read_bytes())
    elif damage == "garbage certificate":
        files.cert.write_bytes(b"-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    else:
        files.key.unlink()
    ensure_certificates(tmp_path, "127.0.0.1")
    _assert_pair_works(files)


def test_a_serving_certificate_of_another_ca_is_replaced(tmp_path: Path) -> None:
    files = ensure_certificates(tmp_path, "127.0.0.1")
    (tmp_path / "other").mkdir()
    other = ensure_certificates(tmp_path / "other", "127.0.0.1")
    files.cert.write_bytes(other.cert.read_bytes())
    files.key.write_bytes(other.key.read_bytes())
    ensure_certificates(tmp_path, "127.0.0.1")
    _assert_pair_works(files)


def test_private_keys_are_owner_only(tmp_path: Path) -> None:
    files = ensure_certificates(tmp_path, "127.0.0.1")
    assert files.key.stat().st_mode & 0o777 == 0o600
    assert files.ca_key.stat().st_mode & 0o777 == 0o600
    assert not list(tmp_path.glob("*.tmp"))


def _assert_pair_works(files: TlsFiles) -> None:
    """The files form a chain a strict client accepts: the cert verifies and matches its key."""
    _cert(files.cert).verify_directly_issued_by(_cert(files.ca_cert))
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(str(files.cert), str(files.key))  # raises when key and cert differ
