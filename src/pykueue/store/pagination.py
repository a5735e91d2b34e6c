"""Continue tokens for paginated lists, encoded the way kube-apiserver encodes them.

Owned by ``store/``; :meth:`pykueue.store.Store.list` is the only caller. A token is
``base64url(JSON {"v": "meta.k8s.io/v1", "rv": <snapshot rv>, "start": "<namespace>/<name>\\0"})``:
the snapshot rv keeps every page consistent with the first; ``start`` is the first key the next
page may return (just after the last one served). Clients must treat it as opaque.
Invariant: a token this module did not produce raises ``BadRequest``, never a Python error.
"""

from __future__ import annotations

import base64
import binascii

import orjson

from pykueue.api.meta.errors import BadRequest

__all__ = ["decode_continue", "encode_continue"]

_VERSION = "meta.k8s.io/v1"


def encode_continue(rv: int, last_key: tuple[str, str]) -> str:
    body = orjson.dumps({"v": _VERSION, "rv": rv, "start": f"{last_key[0]}/{last_key[1]}\x00"})
    return base64.urlsafe_b64encode(body).rstrip(b"=").decode("ascii")


def _invalid(why: str = "") -> BadRequest:
    return BadRequest("invalid continue token: continue key is not valid" + (f": {why}" if why else ""))


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    """Return (snapshot rv, last key served); rv -1 asks for the newest state (kube's convention)."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        body = orjson.loads(raw)
    except (binascii.Error, ValueError, UnicodeError):
        raise _invalid() from None
    if not isinstance(body, dict):
        raise _invalid()
    if body.get("v") != _VERSION:
        raise _invalid("server does not recognize this encoded version")
    rv, start = body.get("rv"), body.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv < -1:
        raise _invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start.endswith("\x00") or "/" not in start:
        raise _invalid("encoded start key empty" if not start else "")
    namespace, _, name = start[:-1].partition("/")
    return rv, (namespace, name)
