"""Late-bound per-kind hooks for the catalogue: defaulting, validation, conversion, merge keys.

Owns nothing but the indirection: ``catalogue`` builds frozen :class:`KindInfo` records at import
time, while the heavy modules (schemas generated from pydantic models, the Kubernetes client's
model tree, the CEL evaluator) load on the first call. That keeps ``import pykueue`` cheap and
free of import cycles. Each returned callable is pure and never mutates its arguments.
"""

from __future__ import annotations

from collections.abc import Callable

from pykueue.api.kinds import FieldError, JSONDict

__all__ = ["converter", "defaulter", "merge_keys", "validator"]


def defaulter(group: str, kind: str) -> Callable[[JSONDict], JSONDict]:
    def default(obj: JSONDict) -> JSONDict:
        from pykueue.api import defaulting

        return defaulting.default(group, kind, obj)

    return default


def validator(group: str, kind: str) -> Callable[[JSONDict, JSONDict | None], list[FieldError]]:
    def validate(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
        from pykueue.api import validation

        return validation.validate(group, kind, obj, old)

    return validate


def converter(group: str, kind: str) -> Callable[[JSONDict, str], JSONDict]:
    def convert(obj: JSONDict, to_version: str) -> JSONDict:
        from pykueue.api import conversion

        return conversion.convert(group, kind, obj, to_version)

    return convert


def merge_keys(group: str, kind: str) -> dict[str, str]:
    from pykueue.api.merge_keys import merge_keys_for

    return merge_keys_for(group, kind)
