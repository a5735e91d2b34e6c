"""The tree of API errors, and the one place where an error becomes a Kubernetes ``Status``.

Every layer raises these; the API server renders them with :meth:`ApiError.to_status` and the
HTTP client raises them back from a ``Status`` body (:func:`from_status`), so a controller sees
the same exception whether it talks in process or over HTTP.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pykueue.api.meta.field_errors import FieldError

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "MethodNotAllowed",
    "NotAcceptable",
    "NotFound",
    "RequestEntityTooLarge",
    "Unauthorized",
    "UnsupportedMediaType",
    "WebhookDenied",
    "from_status",
]


class ApiError(Exception):
    """Base class: an error the API reports to its caller as a ``Status`` with ``code``/``reason``."""

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            status["details"] = self.details
        return status


def _details(kind: str, name: str, group: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "kind": kind}
    if group:
        details["group"] = group
    return details


class BadRequest(ApiError):
    """Malformed body or parameters (undecodable JSON/YAML, wrong kind in body): fix the request."""

    code = 400
    reason = "BadRequest"


class Unauthorized(ApiError):
    """No or wrong bearer token: use the kubeconfig that ``pykueue up`` wrote."""

    code = 401
    reason = "Unauthorized"


class Forbidden(ApiError):
    """The request is understood but not allowed (e.g. a namespace is terminating)."""

    code = 403
    reason = "Forbidden"


class WebhookDenied(Forbidden):
    """A validating admission webhook refused the write, reported as kube-apiserver reports it: 403
    Forbidden, ``admission webhook "<name>" denied the request: <the webhook's message>``, and no
    causes (the webhook's message is all the client gets)."""

    def __init__(self, webhook: str, errors: list[FieldError]) -> None:
        messages = list(dict.fromkeys(f"{e.field}: {e.message}" if e.field else e.message for e in errors))
        summary = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
        super().__init__(f'admission webhook "{webhook}" denied the request: {summary}')
        self.webhook = webhook
        self.errors = errors


class NotFound(ApiError):
    """The object, or the resource type, does not exist."""

    code = 404
    reason = "NotFound"

    @classmethod
    def object(cls, plural: str, name: str, group: str = "") -> NotFound:
        resource = f"{plural}.{group}" if group else plural
        return cls(f'{resource} "{name}" not found', details=_details(plural, name, group))


class MethodNotAllowed(ApiError):
    code = 405
    reason = "MethodNotAllowed"


class NotAcceptable(ApiError):
    code = 406
    reason = "NotAcceptable"


class AlreadyExists(ApiError):
    """An object with that name exists already: pick another name or use generateName."""

    code = 409
    reason = "AlreadyExists"

    @classmethod
    def object(cls, plural: str, name: str, group: str = "") -> AlreadyExists:
        resource = f"{plural}.{group}" if group else plural
        return cls(f'{resource} "{name}" already exists', details=_details(plural, name, group))


class Conflict(ApiError):
    """A stale resourceVersion, or a server-side-apply field conflict: re-read and retry."""

    code = 409
    reason = "Conflict"

    @classmethod
    def stale(cls, plural: str, name: str, group: str = "") -> Conflict:
        resource = f"{plural}.{group}" if group else plural
        return cls(
            f'Operation cannot be fulfilled on {resource} "{name}": the object has been modified; '
            "please apply your changes to the latest version and try again",
            details=_details(plural, name, group),
        )


class Gone(ApiError):
    """The requested resourceVersion was compacted out of the watch log: list again, then watch."""

    code = 410
    reason = "Expired"


class RequestEntityTooLarge(ApiError):
    """The request body is larger than 3 MiB (kube-apiserver's limit)."""

    code = 413
    reason = "RequestEntityTooLarge"


class UnsupportedMediaType(ApiError):
    code = 415
    reason = "UnsupportedMediaType"


class Invalid(ApiError):
    """The object failed validation; ``causes`` name each bad field (HTTP 422)."""

    code = 422
    reason = "Invalid"

    def __init__(self, kind: str, name: str, errors: list[FieldError], group: str = "") -> None:
        summary = ", ".join(f"{e.field}: {e.message}" for e in errors)
        qualified = f"{kind}.{group}" if group else kind
        message = (
            f'{qualified} "{name}" is invalid: {summary}'
            if len(errors) == 1
            else (f'{qualified} "{name}" is invalid: [{summary}]')
        )
        details = _details(kind, name, group)
        details["causes"] = [{"reason": e.type, "message": e.message, "field": e.field} for e in errors]
        super().__init__(message, details=details)
        self.errors = errors


_BY_CODE_REASON: dict[tuple[int, str], type[ApiError]] = {
    (cls.code, cls.reason): cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        NotAcceptable,
        AlreadyExists,
        Conflict,
        Gone,
        RequestEntityTooLarge,
        UnsupportedMediaType,
    )
}


def from_status(status: dict[str, Any], http_code: int) -> ApiError:
    """Rebuild the exception a ``Status`` body describes (used by the HTTP client)."""
    code = int(status.get("code") or http_code)
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or f"HTTP {code}")
    details = status.get("details")
    if code == 422:
        causes = (details or {}).get("causes") or []
        errors = [
            FieldError(c.get("field", ""), c.get("message", ""), c.get("reason", "FieldValueInvalid")) for c in causes
        ]
        err = Invalid((details or {}).get("kind", ""), (details or {}).get("name", ""), errors)
        err.message = message
        err.args = (message,)
        return err
    cls = _BY_CODE_REASON.get((code, reason))
    if cls is None:
        cls = next((c for (c_code, _), c in _BY_CODE_REASON.items() if c_code == code), ApiError)
    return cls(message, details=details)
