"""Kubernetes resource quantities, parsed exactly.

Owns the one conversion between the strings users write ("500m", "8Gi", "1e3", 4) and the integer
*amounts* the scheduler adds and compares: CPU in milli-cores, everything else in its base unit,
as Kueue does. Decimal arithmetic, never floats, so "0.1" + "0.2" cpu is exactly 300m.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation, localcontext

__all__ = [
    "UNLIMITED",
    "QuantityError",
    "format_amount",
    "parse_quantity",
    "to_amount",
]

UNLIMITED = 2**63 - 1
"""Kueue's sentinel for a quota too large for int64: arithmetic with it saturates."""

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_PATTERN = re.compile(r"^(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


class QuantityError(ValueError):
    """A string is not a Kubernetes quantity; the message quotes Kubernetes' own wording."""


_PARSED: dict[str, Decimal] = {}
"""Memo of string quantities: a cluster writes the same few ("1", "500m", "4Gi") in every pod set
and admission, and each write validates them again. Decimals are immutable, so sharing is safe."""
_PARSED_LIMIT = 4096


def parse_quantity(value: str | int | float) -> Decimal:
    """Return the exact value of a quantity (cpu "500m" -> Decimal("0.5"))."""
    if type(value) is str:
        found = _PARSED.get(value)
        if found is None:
            found = _parse(value)  # raises QuantityError: errors are not memoised
            if len(_PARSED) >= _PARSED_LIMIT:
                _PARSED.clear()
            _PARSED[value] = found
        return found
    return _parse(value)


def _parse(value: str | int | float) -> Decimal:
    if isinstance(value, bool):
        raise QuantityError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    match = _PATTERN.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise QuantityError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    with localcontext() as ctx:
        ctx.prec = 60
        try:
            number = Decimal(match["num"])
        except InvalidOperation as exc:  # pragma: no cover - the regex already guards this
            raise QuantityError(str(exc)) from exc
        suffix = match["suffix"] or ""
        if suffix in _BINARY:
            return number * _BINARY[suffix]
        if suffix in _DECIMAL:
            return number * _DECIMAL[suffix]
        exponent = int(suffix[1:])
        if abs(exponent) > 60:
            raise QuantityError("quantity exponent out of range")
        return number.scaleb(exponent)


def to_amount(resource: str, value: str | int | float) -> int:
    """Convert a quantity to Kueue's integer amount: milli-units for cpu, base units otherwise.

    Fractions round up, like resource.Quantity.MilliValue()/Value(); values beyond int64 become
    UNLIMITED.
    """
    exact = parse_quantity(value)
    if resource == "cpu":
        exact = exact * 1000
    with localcontext() as ctx:
        ctx.prec = 60
        amount = int(exact.to_integral_value(rounding=ROUND_CEILING))
    if amount >= UNLIMITED:
        return UNLIMITED
    return amount


def format_amount(resource: str, amount: int) -> str:
    """Render an amount the way the Kubernetes API would print the quantity (canonical form)."""
    if amount >= UNLIMITED:
        return str(UNLIMITED)
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount == 0:
        return "0"
    for suffix, factor in reversed(list(_BINARY.items())):
        if amount % factor == 0 and abs(amount) >= factor:
            return f"{amount // factor}{suffix}"
    for suffix in ("E", "P", "T", "G", "M", "k"):
        factor = int(_DECIMAL[suffix])
        if amount % factor == 0 and abs(amount) >= factor:
            return f"{amount // factor}{suffix}"
    return str(amount)
