"""Self-signed TLS material for the embedded API server (``pykueue up`` always serves TLS).

Owns the CA and serving certificate in the data dir. Reused across restarts, so kubeconfigs keep
working, but only while they are still good: on every start the serving certificate is checked to
cover the address, to be signed by the CA next to it, to match its key and to stay valid for at
least :data:`RENEW_BEFORE`; the CA likewise. A serving certificate that fails is re-issued by the
same CA when the CA is still good (the CA data in existing kubeconfigs stays valid), otherwise both
are made anew.

Both certificates carry Subject and Authority Key Identifiers, so strict X.509 verification
(``ssl.VERIFY_X509_STRICT``, the default of Python 3.13's ``create_default_context``) accepts them.
Files are written atomically; private keys 0600.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .private_files import write_atomically

__all__ = ["CA_LIFETIME", "RENEW_BEFORE", "SERVING_LIFETIME", "TlsFiles", "ensure_certificates"]

CA_LIFETIME = dt.timedelta(days=3650)
SERVING_LIFETIME = dt.timedelta(days=825)
"""At most 825 days: what browsers and strict TLS clients accept for a server certificate."""
RENEW_BEFORE = dt.timedelta(days=30)
"""A certificate with less than this left is replaced at start, before a client ever sees it expire."""

_CA_NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pykueue-ca")])
_SERVER_NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pykueue-apiserver")])


@dataclass(frozen=True, slots=True)
class TlsFiles:
    ca_cert: Path
    cert: Path
    key: Path

    @property
    def ca_key(self) -> Path:
        return self.ca_cert.with_name("ca.key")


@dataclass(frozen=True, slots=True)
class _Pair:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def _san_for(address: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        names.append(x509.IPAddress(ipaddress.ip_address(address)))
    except ValueError:
        names.append(x509.DNSName(address))
    return names


def _covers(cert: x509.Certificate, address: str) -> bool:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    try:
        return ipaddress.ip_address(address) in san.get_values_for_type(x509.IPAddress)
    except ValueError:
        return address in san.get_values_for_type(x509.DNSName)


def _fresh(cert: x509.Certificate, now: dt.datetime) -> bool:
    return cert.not_valid_before_utc <= now and cert.not_valid_after_utc - now >= RENEW_BEFORE


def _load_pair(cert_path: Path, key_path: Path) -> _Pair | None:
    """The certificate and its key, or None when either is missing, unparsable or they do not match."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.public_key() != cert.public_key():
        return None
    try:
        cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
    except x509.ExtensionNotFound:  # made by an older pykueue: strict clients refuse it
        return None
    return _Pair(cert, key)


def _signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _new_ca(now: dt.datetime) -> _Pair:
    key = ec.generate_private_key(ec.SECP256R1())
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_CA_NAME)
        .issuer_name(_CA_NAME)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + CA_LIFETIME)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _Pair(cert, key)


def _new_serving(ca: _Pair, address: str, now: dt.datetime) -> _Pair:
    key = ec.generate_private_key(ec.SECP256R1())
    ca_ski = ca.cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (
        x509.CertificateBuilder()
        .subject_name(_SERVER_NAME)
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(min(now + SERVING_LIFETIME, ca.cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=False,
                crl_sign=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectAlternativeName(_san_for(address)), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca.key, hashes.SHA256())
    )
    return _Pair(cert, key)


def _write(pair: _Pair, cert_path: Path, key_path: Path) -> None:
    write_atomically(
        key_path,
        pair.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )
    write_atomically(cert_path, pair.cert.public_bytes(serialization.Encoding.PEM), mode=0o644)


def ensure_certificates(directory: Path, address: str, *, now: dt.datetime | None = None) -> TlsFiles:
    """Good CA and serving certificates for ``address`` in ``directory``: kept when good, else made."""
    files = TlsFiles(directory / "ca.crt", directory / "server.crt", directory / "server.key")
    now = now or dt.datetime.now(dt.UTC)
    ca = _load_pair(files.ca_cert, files.ca_key)
    if ca is None or not _fresh(ca.cert, now):
        ca = _new_ca(now)
        _write(ca, files.ca_cert, files.ca_key)
    serving = _load_pair(files.cert, files.key)
    if (
        serving is None
        or not _fresh(serving.cert, now)
        or not _covers(serving.cert, address)
        or not _signed_by(serving.cert, ca.cert)
    ):
        _write(_new_serving(ca, address, now), files.cert, files.key)
    return files
