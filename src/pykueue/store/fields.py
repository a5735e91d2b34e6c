"""Field selectors, parsed and matched the way ``k8s.io/apimachinery/pkg/fields`` does.

Owned by ``store/``; reached through :mod:`pykueue.store.selectors`. Syntax: ``path=v``,
``path==v``, ``path!=v`` joined by ``,`` (ANDed); ``\\`` escapes ``,``, ``=`` and ``\\`` inside
values. Paths are dotted (``status.phase``); an unset field compares as ``""``.

Invariant: a selector string is parsed once into an immutable matcher; a bad one raises
:class:`~pykueue.api.meta.errors.BadRequest` with kube-apiserver's wording, never a Python exception.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from pykueue.api.meta.errors import BadRequest

__all__ = ["NAMESPACE_FIELD", "NAME_FIELD", "FieldSelector", "FieldTerm", "field_value", "parse_field_selector"]

NAME_FIELD = "metadata.name"
NAMESPACE_FIELD = "metadata.namespace"
_KEY_FIELDS = frozenset({NAME_FIELD, NAMESPACE_FIELD})


@dataclass(frozen=True, slots=True)
class FieldTerm:
    path: str
    value: str
    negated: bool = False


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string a field selector compares for ``path`` in ``obj`` ("" when unset).

    Scalars are rendered as the API shows them (booleans as ``true``/``false``); lists and maps
    never match a non-empty value.
    """
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
        if node is None:
            return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, str):
        return node
    if isinstance(node, int | float):
        return str(node)
    return ""


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """A parsed field selector: every term must hold (an empty selector matches everything)."""

    terms: tuple[FieldTerm, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.terms

    @property
    def key_only(self) -> bool:
        """True when only ``metadata.name``/``metadata.namespace`` are used (no body needed)."""
        return all(t.path in _KEY_FIELDS for t in self.terms)

    def matches_key(self, namespace: str, name: str) -> bool:
        """Evaluate a :attr:`key_only` selector from an object's key alone."""
        for term in self.terms:
            have = name if term.path == NAME_FIELD else namespace
            if (have == term.value) == term.negated:
                return False
        return True

    def matches_fields(self, get: Callable[[str], str]) -> bool:
        return all((get(t.path) == t.value) != t.negated for t in self.terms)

    def __call__(self, obj: Mapping[str, Any]) -> bool:
        return all((field_value(obj, t.path) == t.value) != t.negated for t in self.terms)


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def _split_term(term: str) -> tuple[str, str, str] | None:
    """Find the first unescaped operator (``!=``, ``==`` or ``=``) in ``term``."""
    i = 0
    while i < len(term):
        if term[i] == "\\":
            i += 2
            continue
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
        i += 1
    return None


def _unescape(value: str, selector: str) -> str:
    out, i = [], 0
    while i < len(value):
        ch = value[i]
        if ch == "\\":
            if i + 1 >= len(value) or value[i + 1] not in "\\,=":
                raise BadRequest(f"invalid field selector: '{selector}'; invalid escape sequence in '{value}'")
            out.append(value[i + 1])
            i += 2
            continue
        if ch in ",=":
            raise BadRequest(f"invalid field selector: '{selector}'; unescaped '{ch}' in value '{value}'")
        out.append(ch)
        i += 1
    return "".join(out)


def parse_field_selector(text: str | None, allowed: Collection[str] | None = None) -> FieldSelector:
    """Parse a field selector string.

    ``allowed`` lists the selectable fields besides ``metadata.name``/``metadata.namespace``
    (a kind's ``selectableFields``); ``None`` allows any dotted path (callers that trust the text).
    Unknown fields raise ``BadRequest('field label not supported: <path>')`` like kube-apiserver.
    """
    if not text:
        return FieldSelector()
    terms: list[FieldTerm] = []
    for part in sorted(_split_unescaped(text, ",")):
        if part == "":
            continue
        split = _split_term(part)
        if split is None:
            raise BadRequest(f"invalid selector: '{text}'; can't understand '{part}'")
        path, op, raw = split
        if not path:
            raise BadRequest(f"invalid selector: '{text}'; can't understand '{part}'")
        if allowed is not None and path not in _KEY_FIELDS and path not in allowed:
            raise BadRequest(f"field label not supported: {path}")
        terms.append(FieldTerm(path, _unescape(raw, text), negated=op == "!="))
    return FieldSelector(tuple(terms))
