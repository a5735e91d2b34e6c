"""Mounted certificate files, re-read when they change: what controller-runtime's certwatcher does.

Owned by ``cli/``; ``pykueue controller`` runs :func:`reload_when_changed` for each certificate it
serves from files it did not write: the webhook certificate with internal certificate management
off (``--cert-dir``) and the metrics certificate (``--metrics-cert-dir``). cert-manager renews a
certificate by rewriting its Secret, and the kubelet swaps the mounted files; every
:data:`CHECK_EVERY_S` the files' modification times and sizes are compared with the last ones loaded,
and on a change the pair is loaded into the server's ``SSLContext``, so the next handshake presents
it (connections already open keep theirs).

The comparison starts from the files as they were when the server loaded them (:func:`files_stamp`,
taken by the caller just before that load), not as they are when the watcher starts: a renewal that
lands between the two would otherwise be taken as already loaded and never served.

Fails safe: a pair that cannot be loaded (half written, a key that is not the certificate's) is
logged and the certificate served so far stays; the next change is tried again.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from pathlib import Path

__all__ = ["CHECK_EVERY_S", "FilesStamp", "files_stamp", "reload_when_changed"]

log = logging.getLogger(__name__)

CHECK_EVERY_S = 10.0


FilesStamp = tuple[int, int, int, int] | None
"""The pair's modification times and sizes (None: one of them cannot be read)."""


def files_stamp(cert_file: Path, key_file: Path) -> FilesStamp:
    """What the pair looks like now; take it just before loading the pair, for :func:`reload_when_changed`."""
    try:
        cert, key = cert_file.stat(), key_file.stat()
    except OSError:
        return None
    return cert.st_mtime_ns, cert.st_size, key.st_mtime_ns, key.st_size


async def reload_when_changed(
    cert_file: Path,
    key_file: Path,
    context: ssl.SSLContext,
    *,
    what: str,
    loaded: FilesStamp,
    every: float = CHECK_EVERY_S,
) -> None:
    """Load ``cert_file``/``key_file`` into ``context`` whenever they differ from ``loaded`` (the
    :func:`files_stamp` taken before ``context`` was loaded) and from each pair loaded since; runs
    until cancelled."""
    while True:
        await asyncio.sleep(every)
        stamp = files_stamp(cert_file, key_file)
        if stamp is None or stamp == loaded:
            continue
        try:
            context.load_cert_chain(str(cert_file), str(key_file))
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            log.warning("%s certificate in %s not reloaded (the served one stays): %s", what, cert_file.parent, exc)
        else:
            log.info("%s certificate reloaded from %s", what, cert_file.parent)
        loaded = stamp
