"""TLS settings of the servers pykueue runs, named as Kueue's ``Configuration.tls`` names them.

Owns: turning Go's TLS names (``minVersion: VersionTLS12``, IANA cipher-suite names such as
``TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256``, the names Kueue's flags and configuration take) into
settings of an :class:`ssl.SSLContext`, and saying which names are unknown (the configuration
loader reports them with their field path before anything starts).

As Go's ``crypto/tls`` does, ``cipherSuites`` restricts TLS 1.0–1.2 only: TLS 1.3 suites are not
configurable, so the TLS 1.3 names are accepted and change nothing.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

__all__ = ["CIPHER_SUITES", "TLS_VERSIONS", "TLSOptions"]

TLS_VERSIONS: dict[str, ssl.TLSVersion] = {
    "VersionTLS10": ssl.TLSVersion.TLSv1,
    "VersionTLS11": ssl.TLSVersion.TLSv1_1,
    "VersionTLS12": ssl.TLSVersion.TLSv1_2,
    "VersionTLS13": ssl.TLSVersion.TLSv1_3,
}
"""Go's names for the protocol versions (what ``tls.minVersion`` takes)."""

CIPHER_SUITES: dict[str, str | None] = {
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_AES_128_GCM_SHA256": None,
    "TLS_AES_256_GCM_SHA384": None,
    "TLS_CHACHA20_POLY1305_SHA256": None,
}
"""IANA name (as Go spells it) -> OpenSSL name; None for TLS 1.3 suites, which are not configurable."""


@dataclass(frozen=True, slots=True)
class TLSOptions:
    """``min_version`` a key of :data:`TLS_VERSIONS` ("" = the library's default); ``cipher_suites``
    keys of :data:`CIPHER_SUITES` (empty = the library's default list)."""

    min_version: str = ""
    cipher_suites: tuple[str, ...] = ()

    def apply(self, context: ssl.SSLContext) -> None:
        """Restrict ``context`` accordingly (names were checked when the configuration was read)."""
        if self.min_version:
            context.minimum_version = TLS_VERSIONS[self.min_version]
        openssl = [name for suite in self.cipher_suites if (name := CIPHER_SUITES[suite])]
        if openssl:
            context.set_ciphers(":".join(openssl))
