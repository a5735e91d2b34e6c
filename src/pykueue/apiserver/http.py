"""Small HTTP helpers shared by the API server's handlers: JSON responses, media types, warnings.

Owned by ``apiserver/``. Keeps content negotiation in one place: which ``Accept`` headers ask for
a ``meta.k8s.io`` Table or for aggregated discovery, and how ``Warning:`` headers are written
(``299 - "text"``, one header per warning, as kube-apiserver does).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from pykueue.api.meta.errors import ApiError, BadRequest, RequestEntityTooLarge

__all__ = [
    "AGGREGATED_V2",
    "BODY_LIMIT",
    "TABLE_V1",
    "accepts_aggregated",
    "accepts_partial_metadata",
    "accepts_table",
    "error_response",
    "field_validation",
    "json_response",
    "media_types",
    "partial_metadata",
    "quoted",
    "raw_json_response",
    "read_body",
    "table_content_type",
    "warning_headers",
]

BODY_LIMIT = 3 * 1024 * 1024
"""kube-apiserver's request body limit (3 MiB)."""
TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io"
AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def media_types(accept: str) -> list[tuple[str, dict[str, str]]]:
    """Parse an Accept header into (type, params) pairs, in the client's order."""
    out: list[tuple[str, dict[str, str]]] = []
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        if not pieces[0]:
            continue
        params: dict[str, str] = {}
        for piece in pieces[1:]:
            if "=" in piece:
                key, _, value = piece.partition("=")
                params[key.strip().lower()] = value.strip()
        out.append((pieces[0].lower(), params))
    return out


def accepts_table(accept: str) -> str | None:
    """The Table version ("v1"/"v1beta1") the client asks for, or None for plain objects."""
    for media, params in media_types(accept):
        if (
            media in ("application/json", "*/*")
            and params.get("as") == "Table"
            and params.get("g") == "meta.k8s.io"
            and params.get("v") in ("v1", "v1beta1")
        ):
            return params["v"]
    return None


def accepts_partial_metadata(accept: str) -> bool:
    """True when the client (client-go's metadata client) wants PartialObjectMetadata(List)."""
    for media, params in media_types(accept):
        if (
            media == "application/json"
            and params.get("as") in ("PartialObjectMetadata", "PartialObjectMetadataList")
            and params.get("g") == "meta.k8s.io"
            and params.get("v") in ("v1", "v1beta1")
        ):
            return True
        if media == "application/json" and not params:
            return False
    return False


def partial_metadata(obj: Any) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": (obj.get("metadata") if isinstance(obj, dict) else None) or {},
    }


def accepts_aggregated(accept: str) -> bool:
    for media, params in media_types(accept):
        if (
            media == "application/json"
            and params.get("as") == "APIGroupDiscoveryList"
            and params.get("g") == "apidiscovery.k8s.io"
            and params.get("v") == "v2"
        ):
            return True
    return False


def table_content_type(version: str) -> str:
    return TABLE_V1 if version == "v1" else TABLE_V1.replace("v=v1", "v=v1beta1")


def field_validation(query: Any) -> str:
    """The request's ``fieldValidation`` directive; kube-apiserver's default when the parameter is
    absent is Warn (drop unknown fields, warn). The value is checked where it is used."""
    return str(query.get("fieldValidation") or "Warn")


def warning_headers(response: web.StreamResponse, warnings: list[str]) -> None:
    seen: set[str] = set()
    for text in warnings:
        if text in seen:
            continue
        seen.add(text)
        response.headers.add("Warning", f"299 - {quoted(text)}")


_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def quoted(text: str) -> str:
    """``text`` as a quoted string that is a valid header value (what Go's ``strconv.QuoteToASCII``
    gives, as kube-apiserver quotes warnings): control characters such as CR and LF, which would end
    the header, and non-ASCII characters are escaped, so a field name can never break the response."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = []
    for char in text:
        code = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def json_response(
    body: Any, *, status: int = 200, content_type: str = "application/json", warnings: list[str] | None = None
) -> web.Response:
    response = web.Response(body=orjson.dumps(body), status=status, headers={"Content-Type": content_type})
    if warnings:
        warning_headers(response, warnings)
    return response


def raw_json_response(body: bytes, *, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    """A response whose JSON body is already encoded (spliced lists)."""
    response = web.Response(body=body, status=status, headers={"Content-Type": "application/json"})
    if warnings:
        warning_headers(response, warnings)
    return response


def error_response(error: ApiError, warnings: list[str] | None = None) -> web.Response:
    return json_response(error.to_status(), status=error.code, warnings=warnings)


async def read_body(request: web.Request, *, allow_empty: bool = False, limit: int = BODY_LIMIT) -> bytes:
    """The request body, or ``RequestEntityTooLarge`` past ``limit`` (3 MiB) without reading it all;
    an empty body is a 400 unless ``allow_empty``."""
    length = request.content_length
    if length is not None and length > limit:
        raise RequestEntityTooLarge(f"Request entity too large: limit is {limit}")
    if length is not None:  # the common case: one read, no chunk loop
        body = await request.read()
    else:
        data = bytearray()
        async for chunk in request.content.iter_chunked(65536):
            data += chunk
            if len(data) > limit:
                raise RequestEntityTooLarge(f"Request entity too large: limit is {limit}")
        body = bytes(data)
    if not body and not allow_empty:
        raise BadRequest("the request body is empty")
    return body
