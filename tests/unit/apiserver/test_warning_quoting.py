"""Warning headers are quoted as Go's ``strconv.QuoteToASCII`` quotes: no text can end the header."""

from __future__ import annotations

import pytest
from aiohttp import web

from pykueue.apiserver.http import quoted, warning_headers


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ("plain text", '"plain text"'),
        ('unknown field "a"', '"unknown field \\"a\\""'),
        ("bad\rkey\nX-Injected: 1", '"bad\\rkey\\nX-Injected: 1"'),
        ("tab\there\\", '"tab\\there\\\\"'),
        ("nul\x00 del\x7f", '"nul\\x00 del\\x7f"'),
        ("café ✓ 𝄞", '"caf\\u00e9 \\u2713 \\U0001d11e"'),
    ],
)
def test_quoted(text: str, header: str) -> None:
    assert quoted(text) == header
    assert header.isascii()
    assert "\r" not in header
    assert "\n" not in header


def test_each_warning_is_one_header_that_aiohttp_can_send() -> None:
    response = web.Response()
    warning_headers(response, ['unknown field "bad\rkey"', 'unknown field "bad\rkey"', "second"])
    assert response.headers.getall("Warning") == ['299 - "unknown field \\"bad\\rkey\\""', '299 - "second"']
