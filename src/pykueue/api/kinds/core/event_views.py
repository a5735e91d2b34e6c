"""events.k8s.io/v1 Event as a second view of the stored core/v1 Events.

Owned by ``api/``. kube-apiserver keeps one kind of Event object and serves it in both groups:
an Event posted through events.k8s.io/v1 (client-go's new event recorder) is listed by
``kubectl get events`` (core/v1), and the reverse. This module maps the fields between the two
forms (the mapping kube-apiserver's conversion uses) and checks what events.k8s.io/v1 requires of
a new Event, which the older core/v1 API never did.

Pure functions; inputs are never mutated.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy
from pykueue.api.meta.kind_info import STORED_FORM

__all__ = ["EVENTS_GROUP", "convert", "validate_events_v1"]

EVENTS_GROUP = "events.k8s.io"

# events.k8s.io/v1 name -> core/v1 name, for the fields whose names differ
_RENAMED = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)
_SHARED = ("metadata", "eventTime", "series", "action", "reason", "related", "reportingInstance", "type")
_NOTE_LIMIT = 1024
_SHORT_LIMIT = 128


def _to_core(obj: JSONDict) -> JSONDict:
    out: JSONDict = {"apiVersion": "v1", "kind": "Event"}
    for name in _SHARED:
        if name in obj:
            out[name] = json_copy(obj[name])
    for new_name, old_name in _RENAMED:
        if new_name in obj:
            out[old_name] = json_copy(obj[new_name])
    return out


def _to_events(obj: JSONDict) -> JSONDict:
    out: JSONDict = {"apiVersion": f"{EVENTS_GROUP}/v1", "kind": "Event"}
    for name in _SHARED:
        if name in obj:
            out[name] = json_copy(obj[name])
    for new_name, old_name in _RENAMED:
        if old_name in obj:
            out[new_name] = json_copy(obj[old_name])
    return out


def convert(obj: JSONDict, to_version: str) -> JSONDict:
    """``STORED_FORM``: into core/v1 (how Events are stored); any served version: into events.k8s.io."""
    if to_version == STORED_FORM:
        return obj if obj.get("apiVersion") == "v1" else _to_core(obj)
    if obj.get("apiVersion") == "v1":
        return _to_events(obj)
    return {**json_copy(obj), "apiVersion": f"{EVENTS_GROUP}/{to_version}"}


def _missing(value: Any) -> bool:
    return value in (None, "", {})


def validate_events_v1(core: JSONDict, old: JSONDict | None) -> list[FieldError]:
    """What events.k8s.io/v1 requires of an Event (``core`` is the stored form): eventTime,
    reportingController, reportingInstance, action and reason are set; type is Normal or Warning;
    the note fits in 1 kB. An update may change nothing but the series (and metadata)."""
    obj = _to_events(core)
    errors: list[FieldError] = []
    for name in ("eventTime", "reportingController", "reportingInstance", "action", "reason"):
        if _missing(obj.get(name)):
            errors.append(fe.required(name, ""))
    for name in ("reportingInstance", "action", "reason"):
        value = obj.get(name)
        if isinstance(value, str) and len(value) > _SHORT_LIMIT:
            errors.append(fe.too_long(name, _SHORT_LIMIT))
    if obj.get("type") not in ("Normal", "Warning"):
        errors.append(fe.not_supported("type", obj.get("type"), ("Normal", "Warning")))
    note = obj.get("note")
    if isinstance(note, str) and len(note.encode()) > _NOTE_LIMIT:
        errors.append(fe.too_long("note", _NOTE_LIMIT))
    if old is not None:
        before = _to_events(old)
        for name in (
            "regarding",
            "related",
            "reportingController",
            "reportingInstance",
            "action",
            "reason",
            "note",
            "type",
            "eventTime",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
        ):
            if obj.get(name) != before.get(name):
                errors.append(fe.invalid(name, obj.get(name), "field is immutable"))
    return errors
