"""A small admission/conversion webhook server for the end-to-end tests: aiohttp over TLS, its own CA.

It runs in a thread of the test process on a free loopback port. Each path is one behaviour (a
function from the AdmissionReview request to the response fields); every review received is kept in
``received[path]`` so tests can check what the API server sent.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import ipaddress
import ssl
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

JSONDict = dict[str, Any]
Behaviour = Callable[[JSONDict], JSONDict]
"""AdmissionReview ``request`` -> the ``response`` fields besides ``uid`` (``allowed``, ``patch``, ...)."""


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_certificates(directory: Path, dns_names: list[str]) -> tuple[bytes, Path, Path]:
    """(CA PEM, serving cert file, key file): a CA and a leaf for 127.0.0.1 and ``dns_names``."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("test-webhook-ca"))
        .issuer_name(_name("test-webhook-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
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
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    names += [x509.DNSName(n) for n in dns_names]
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name("test-webhook"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    cert_file, key_file = directory / "tls.crt", directory / "tls.key"
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ca.public_bytes(serialization.Encoding.PEM), cert_file, key_file


def json_patch(operations: list[JSONDict]) -> JSONDict:
    """The response fields of a mutation."""
    return {"allowed": True, "patchType": "JSONPatch", "patch": base64.b64encode(orjson.dumps(operations)).decode()}


class WebhookServer:
    """``start()`` / ``stop()``; ``url(path)``, ``ca_bundle``, ``received``; ``routes[path] = behaviour``;
    ``delays[path]`` seconds before answering."""

    def __init__(self, dns_names: list[str] | None = None) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="webhook-"))
        ca, self._cert, self._key = make_certificates(self._dir, dns_names or [])
        self.ca_bundle = base64.b64encode(ca).decode()
        self.routes: dict[str, Behaviour] = {}
        self.delays: dict[str, float] = {}
        self.gates: dict[str, threading.Event] = {}
        """A path with a gate answers only once the test sets it."""
        self.received: dict[str, list[JSONDict]] = {}
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    async def _handle(self, request: web.Request) -> web.Response:
        review = await request.json()
        path = request.path
        self.received.setdefault(path, []).append(review)
        delay = self.delays.get(path)
        if delay:
            await asyncio.sleep(delay)
        gate = self.gates.get(path)
        if gate is not None:
            await asyncio.to_thread(gate.wait, 60)
        behaviour = self.routes.get(path)
        if behaviour is None:
            return web.Response(status=404, text="no such webhook")
        if review.get("kind") == "ConversionReview":
            return web.json_response(
                {
                    "apiVersion": review.get("apiVersion"),
                    "kind": "ConversionReview",
                    "response": {"uid": review["request"]["uid"], **behaviour(review["request"])},
                }
            )
        answer = {"uid": review["request"]["uid"], **behaviour(review["request"])}
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": answer})

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self._runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self._cert, self._key)
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    def start(self) -> WebhookServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
