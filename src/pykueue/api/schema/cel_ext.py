"""The Kubernetes CEL extension functions the ``cel`` package lacks, for ``x-kubernetes-validations``.

Owns a small, documented subset of kube-apiserver's CEL libraries — strings (``lowerAscii``,
``upperAscii``, ``split``, ``trim``, ``replace``, ``indexOf``, ``lastIndexOf``, ``join``), lists
(``isSorted``, ``sum``, ``min``, ``max``), ``isURL`` and ``quantity`` (numbers, compared with
``isGreaterThan``/``isLessThan``/``compareTo``; ``asInteger``/``asApproximateFloat``). Quantities are
carried as floats, so comparisons of values beyond 2**53 are approximate. Used by
:mod:`pykueue.api.schema.structural`; a rule calling anything else is skipped, not failed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from pykueue.api.meta.quantity import QuantityError, parse_quantity

__all__ = ["FUNCTIONS"]


def _quantity(value: Any) -> float:
    try:
        return float(parse_quantity(value))
    except QuantityError as exc:
        raise ValueError(f"invalid quantity {value!r}") from exc


def _compare(a: float, b: float) -> int:
    return (a > b) - (a < b)


def _is_url(value: str) -> bool:
    parsed = urlparse(value)
    return bool(parsed.scheme) and (bool(parsed.netloc) or parsed.scheme in ("mailto", "urn"))


def _as_integer(value: float) -> int:
    if not float(value).is_integer():
        raise ValueError("cannot convert a fractional quantity to an integer")
    return int(value)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lowerAscii": lambda s: s.lower(),
    "upperAscii": lambda s: s.upper(),
    "split": lambda s, sep, *limit: s.split(sep, limit[0] - 1 if limit and limit[0] > 0 else -1),
    "trim": lambda s: s.strip(),
    "replace": lambda s, old, new, *count: s.replace(old, new, count[0] if count else -1),
    "indexOf": lambda s, sub, *start: s.find(sub, start[0] if start else 0),
    "lastIndexOf": lambda s, sub: s.rfind(sub),
    "join": lambda items, *sep: (sep[0] if sep else "").join(items),
    "isSorted": lambda items: list(items) == sorted(items),
    "sum": lambda items: sum(items),
    "min": lambda items: min(items),
    "max": lambda items: max(items),
    "isURL": _is_url,
    "quantity": _quantity,
    "isQuantity": lambda s: _safe(_quantity, s),
    "isGreaterThan": lambda a, b: a > b,
    "isLessThan": lambda a, b: a < b,
    "compareTo": _compare,
    "asInteger": _as_integer,
    "asApproximateFloat": float,
    "sign": lambda a: _compare(a, 0.0),
    "isInteger": lambda a: float(a).is_integer(),
}


def _safe(fn: Callable[[Any], Any], value: Any) -> bool:
    try:
        fn(value)
    except ValueError:
        return False
    return True
