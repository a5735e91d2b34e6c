"""The webhook server's certificate, made the way Kueue's internal certificate management makes it.

Owned by ``webhooks/``. :func:`new_bundle` makes a CA and a serving certificate it signed, for the
webhook Service's DNS names (``<service>.<ns>.svc`` and ``<service>.<ns>.svc.cluster.local``) and,
for a controller outside the cluster (``--webhook-url``), the URL's host. :func:`bundle_problem`
says why a kept bundle (the Secret's ``tls.crt``, ``tls.key``, ``ca.crt``) cannot be reused: a
missing or unparsable part, a key that is not the certificate's, a certificate the CA did not sign,
a name it does not cover, or less than :data:`RENEW_BEFORE` of validity left.

Both certificates carry Subject and Authority Key Identifiers, so strict X.509 verification
(Python 3.13's default, Go's crypto/x509) accepts them.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["CA_LIFETIME", "RENEW_BEFORE", "CertBundle", "bundle_problem", "new_bundle", "serving_names"]

CA_LIFETIME = dt.timedelta(days=3650)
SERVING_LIFETIME = dt.timedelta(days=365)
RENEW_BEFORE = dt.timedelta(days=30)
_CA_NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pykueue-webhook-ca")])


@dataclass(frozen=True, slots=True)
class CertBundle:
    """PEM bytes: the CA certificate, the serving certificate and its private key."""

    ca_crt: bytes
    tls_crt: bytes
    tls_key: bytes


def serving_names(service: str, namespace: str, hosts: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The names the serving certificate must cover: the Service's DNS names, then ``hosts``."""
    return (f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local", *hosts)


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=ca,
        crl_sign=ca,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )


def new_bundle(names: tuple[str, ...], *, now: dt.datetime | None = None) -> CertBundle:
    """A new CA and a serving certificate for ``names`` (DNS names or IP addresses) signed by it."""
    now = now or dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_CA_NAME)
        .issuer_name(_CA_NAME)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + CA_LIFETIME)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(ca=True), critical=True)
        .add_extension(ca_ski, critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    leaf = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(_CA_NAME)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + SERVING_LIFETIME)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(ca=False), critical=True)
        .add_extension(x509.SubjectAlternativeName([_general_name(n) for n in names]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return CertBundle(
        ca_crt=ca.public_bytes(pem),
        tls_crt=leaf.public_bytes(pem),
        tls_key=key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


def _covers(cert: x509.Certificate, name: str) -> bool:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    try:
        return ipaddress.ip_address(name) in san.get_values_for_type(x509.IPAddress)
    except ValueError:
        return name in san.get_values_for_type(x509.DNSName)


def bundle_problem(bundle: CertBundle, names: tuple[str, ...], *, now: dt.datetime | None = None) -> str | None:
    """Why ``bundle`` cannot serve ``names`` any more (None: it can be reused)."""
    now = now or dt.datetime.now(dt.UTC)
    try:
        ca = x509.load_pem_x509_certificate(bundle.ca_crt)
        leaf = x509.load_pem_x509_certificate(bundle.tls_crt)
        key = serialization.load_pem_private_key(bundle.tls_key, password=None)
    except (ValueError, TypeError) as exc:
        return f"unreadable: {exc}"
    if key.public_key() != leaf.public_key():
        return "the key is not the certificate's"
    try:
        leaf.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return "the certificate is not signed by the CA"
    for cert in (ca, leaf):
        if not cert.not_valid_before_utc <= now or cert.not_valid_after_utc - now < RENEW_BEFORE:
            return f"{cert.subject.rfc4514_string()} expires at {cert.not_valid_after_utc:%Y-%m-%dT%H:%M:%SZ}"
    try:
        missing = [n for n in names if not _covers(leaf, n)]
    except x509.ExtensionNotFound:
        return "the certificate names no subject alternative names"
    return f"the certificate does not cover {', '.join(missing)}" if missing else None
