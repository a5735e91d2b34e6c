"""Small helpers shared by the patch modules: JSON deep copy and the errors patches raise.

Owned by ``registry/patch``. Every public patch function copies what it returns, so neither the
stored object nor the caller's patch is ever aliased by the result (invariant: inputs are never
mutated, results never share mutable containers with inputs).
"""

from __future__ import annotations

from typing import Any

import orjson

from pykueue.api.errors import ApiError, BadRequest, Invalid
from pykueue.api.kinds import FieldError

JSON = Any
"""Any decoded JSON value (dict, list, str, int, float, bool, None)."""

REJECTED = "the server rejected our request due to an error in our request"
"""kube-apiserver's message for a patch that decodes but cannot be applied (HTTP 422)."""


def deep_copy(value: JSON) -> JSON:
    """Copy a decoded JSON value: an orjson round trip (C speed), or a recursive copy for what
    orjson cannot encode (integers beyond 64 bits, non-string keys)."""
    try:
        return orjson.loads(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return _copy_tree(value)


def _copy_tree(value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: _copy_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_tree(v) for v in value]
    return value


def unprocessable(reason: str) -> ApiError:
    """A 422 ``Invalid`` the way kube-apiserver reports a patch that does not apply.

    kube-apiserver answers with the generic message and carries the patch library's own words in
    a cause, so ``kubectl`` prints "The request is invalid: the server rejected our request ...".
    """
    err = Invalid("", "", [FieldError("", reason, "FieldValueInvalid")])
    err.message = REJECTED
    err.args = (REJECTED,)
    err.details = {"causes": [{"reason": "FieldValueInvalid", "message": reason, "field": ""}]}
    return err


def bad_request(message: str) -> ApiError:
    """A 400 for a patch document that is malformed (wrong shape, unknown directive)."""
    return BadRequest(message)
