"""The string ``format``s kube-apiserver checks in custom resources (kube-openapi's ``strfmt`` subset).

Owned by ``api/``; used by :mod:`pykueue.api.schema.structural`. A value that is not of its declared format
gets kube's message ``<path> in body must be of type <format>: "<value>"``. Formats not listed here
(``password``, ``int32`` on strings, ...) are not checked, as in kube-apiserver.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

__all__ = ["format_ok"]

_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
_HOSTNAME = re.compile(
    r"^([a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$"
)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DURATION = re.compile(r"^(\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+$")
_MAC = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")


def _ip(version: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            return ipaddress.ip_address(value).version == version
        except ValueError:
            return False

    return check


def _cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


_CHECKS: dict[str, Callable[[str], bool]] = {
    "date-time": lambda v: _DATE_TIME.match(v) is not None,
    "datetime": lambda v: _DATE_TIME.match(v) is not None,
    "date": lambda v: _DATE.match(v) is not None,
    "uuid": lambda v: _UUID.match(v) is not None,
    "hostname": lambda v: len(v) <= 253 and _HOSTNAME.match(v) is not None,
    "email": lambda v: _EMAIL.match(v) is not None,
    "duration": lambda v: _DURATION.match(v) is not None,
    "mac": lambda v: _MAC.match(v) is not None,
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "cidr": _cidr,
}


def format_ok(fmt: str, value: str) -> bool:
    """Whether ``value`` is of ``fmt`` (formats kube-apiserver does not check always pass)."""
    check = _CHECKS.get(fmt)
    return check is None or check(value)
