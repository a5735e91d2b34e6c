"""Small helpers shared by the patch modules: the errors patches raise.

Owned by ``registry/patch``. Every public patch function copies what it returns, so neither the
stored object nor the caller's patch is ever aliased by the result (invariant: inputs are never
mutated, results never share mutable containers with inputs).
"""

from __future__ import annotations

from pykueue.api.meta.errors import ApiError, BadRequest, Invalid
from pykueue.api.meta.field_errors import FieldError

REJECTED = "the server rejected our request due to an error in our request"
"""kube-apiserver's message for a patch that decodes but cannot be applied (HTTP 422)."""


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
