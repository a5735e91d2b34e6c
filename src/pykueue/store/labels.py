"""Label selectors, parsed and matched the way ``k8s.io/apimachinery/pkg/labels`` does.

Owned by ``store/``; reached through :mod:`pykueue.store.selectors`. Syntax: ``a=b``, ``a==b``,
``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a`` (exists), ``!a`` (does not exist), ``a>1``/``a<1``
(integer comparison); requirements joined by ``,`` are ANDed. Keys and values are validated like
label keys and values.

Invariant: a selector string is parsed once into an immutable matcher; a bad one raises
:class:`~pykueue.api.meta.errors.BadRequest` with kube-apiserver's wording, never a Python exception.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pykueue.api.meta.errors import BadRequest

__all__ = ["LabelOp", "LabelRequirement", "LabelSelector", "parse_label_selector"]

# ---------------------------------------------------------------------------------------------
# Label key/value validation (k8s.io/apimachinery/pkg/util/validation), kube's own messages.

_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

_NAME_FMT = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _label_key_errors(key: str) -> list[str]:
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        if len(prefix) > 253:
            return ["prefix part must be no more than 253 characters"]
        if not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
            return [f"prefix part {_SUBDOMAIN_MSG}"]
    else:
        return [
            f"a qualified name {_NAME_FMT} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        return ["name part must be non-empty"]
    errors = []
    if len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _NAME_RE.fullmatch(name):
        errors.append(f"name part {_NAME_FMT}")
    return errors


def _label_value_errors(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _VALUE_RE.fullmatch(value):
        errors.append(_VALUE_MSG)
    return errors


def _invalid(field: str, value: str, details: list[str]) -> str:
    return f'{field}: Invalid value: "{value}": {"; ".join(details)}'


# ---------------------------------------------------------------------------------------------
# Label selector: lexer + recursive-descent parser with kube's grammar and error texts.


class _Tok(Enum):
    ERROR = 0
    END = 1
    CLOSE_PAR = 2
    COMMA = 3
    NOT = 4
    DOUBLE_EQUALS = 5
    EQUALS = 6
    GREATER = 7
    IDENT = 8
    IN = 9
    LESS = 10
    NOT_EQUALS = 11
    NOT_IN = 12
    OPEN_PAR = 13


_LITERALS = {
    ")": _Tok.CLOSE_PAR,
    ",": _Tok.COMMA,
    "!": _Tok.NOT,
    "==": _Tok.DOUBLE_EQUALS,
    "=": _Tok.EQUALS,
    ">": _Tok.GREATER,
    "in": _Tok.IN,
    "<": _Tok.LESS,
    "!=": _Tok.NOT_EQUALS,
    "notin": _Tok.NOT_IN,
    "(": _Tok.OPEN_PAR,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"


def _lex(text: str) -> list[tuple[_Tok, str]]:
    """Split ``text`` into tokens; the last one is always ``END`` (or ``ERROR``)."""
    tokens: list[tuple[_Tok, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            tokens.append((_Tok.END, ""))
            return tokens
        if text[i] in _SPECIAL:
            # Longest run of special characters that still spells a token ("!=" but "!" + "(").
            best: tuple[_Tok, str] | None = None
            j = i
            while j < n and text[j] in _SPECIAL:
                tok = _LITERALS.get(text[i : j + 1])
                if tok is not None:
                    best = (tok, text[i : j + 1])
                elif best is not None:
                    break
                j += 1
            if best is None:
                tokens.append((_Tok.ERROR, f"error expected: keyword found '{text[i:j]}'"))
                return tokens
            tokens.append(best)
            i += len(best[1])
            continue
        j = i
        while j < n and text[j] not in _SPECIAL and text[j] not in _WHITESPACE:
            j += 1
        word = text[i:j]
        tokens.append((_LITERALS.get(word, _Tok.IDENT), word))
        i = j


class LabelOp(Enum):
    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER = "gt"
    LESS = "lt"


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One ANDed term of a label selector."""

    key: str
    op: LabelOp
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        value = labels.get(self.key)
        if op in (LabelOp.EQUALS, LabelOp.DOUBLE_EQUALS, LabelOp.IN):
            return value is not None and value in self.values
        if op in (LabelOp.NOT_EQUALS, LabelOp.NOT_IN):
            return value is None or value not in self.values
        if op is LabelOp.EXISTS:
            return value is not None
        if op is LabelOp.DOES_NOT_EXIST:
            return value is None
        if value is None:
            return False
        try:
            have = int(value)
        except ValueError:
            return False
        want = int(next(iter(self.values)))
        return have > want if op is LabelOp.GREATER else have < want


def _values_in_context(tok: _Tok) -> _Tok:
    """In value position the keywords ``in``/``notin`` are plain identifiers (``a in (in)``)."""
    return _Tok.IDENT if tok in (_Tok.IN, _Tok.NOT_IN) else tok


class _LabelParser:
    def __init__(self, text: str) -> None:
        self._tokens = _lex(text)
        self._pos = 0

    def _peek(self, values: bool = True) -> tuple[_Tok, str]:
        tok, lit = self._tokens[min(self._pos, len(self._tokens) - 1)]
        return (_values_in_context(tok), lit) if values else (tok, lit)

    def _next(self, values: bool = True) -> tuple[_Tok, str]:
        item = self._peek(values)
        self._pos += 1
        return item

    def parse(self) -> list[LabelRequirement]:
        requirements: list[LabelRequirement] = []
        while True:
            tok, lit = self._peek()
            if tok is _Tok.END:
                return requirements
            if tok not in (_Tok.IDENT, _Tok.NOT):
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self._requirement())
            except ValueError as err:
                raise ValueError(f"unable to parse requirement: {err}") from None
            tok, lit = self._next()
            if tok is _Tok.END:
                return requirements
            if tok is not _Tok.COMMA:
                raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            tok2, lit2 = self._peek()
            if tok2 not in (_Tok.IDENT, _Tok.NOT):
                raise ValueError(f"found '{lit2}', expected: identifier after ','")

    def _requirement(self) -> LabelRequirement:
        negated = False
        tok, lit = self._next()
        if tok is _Tok.NOT:
            negated = True
            tok, lit = self._next()
        if tok is not _Tok.IDENT:
            raise ValueError(f"found '{lit}', expected: identifier")
        key = lit
        if errors := _label_key_errors(key):
            raise ValueError(_invalid("key", key, errors))
        if negated:
            # Anything after "!key" but "," or the end is reported by parse(), as kube does.
            return LabelRequirement(key, LabelOp.DOES_NOT_EXIST)
        if self._peek()[0] in (_Tok.END, _Tok.COMMA):
            return LabelRequirement(key, LabelOp.EXISTS)
        op = self._operator()
        values = self._set_values() if op in (LabelOp.IN, LabelOp.NOT_IN) else self._exact_value()
        return _new_requirement(key, op, values)

    def _operator(self) -> LabelOp:
        tok, lit = self._next(values=False)
        op = {
            _Tok.IN: LabelOp.IN,
            _Tok.NOT_IN: LabelOp.NOT_IN,
            _Tok.EQUALS: LabelOp.EQUALS,
            _Tok.DOUBLE_EQUALS: LabelOp.DOUBLE_EQUALS,
            _Tok.NOT_EQUALS: LabelOp.NOT_EQUALS,
            _Tok.GREATER: LabelOp.GREATER,
            _Tok.LESS: LabelOp.LESS,
        }.get(tok)
        if op is None:
            raise ValueError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        return op

    def _set_values(self) -> list[str]:
        tok, lit = self._next()
        if tok is not _Tok.OPEN_PAR:
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self._peek()
        if tok is _Tok.CLOSE_PAR:
            self._next()
            return [""]
        if tok not in (_Tok.IDENT, _Tok.COMMA):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        values: list[str] = []
        while True:
            tok, lit = self._next()
            if tok is _Tok.IDENT:
                values.append(lit)
                tok2, lit2 = self._peek()
                if tok2 is _Tok.COMMA:
                    continue
                if tok2 is _Tok.CLOSE_PAR:
                    self._next()
                    return values
                raise ValueError(f"found '{lit2}', expected: ',' or ')'")
            if tok is _Tok.COMMA:
                # "(a,,b)", "(,a)" and "(a,)" all contain the empty value, as in kube.
                if not values or self._peek()[0] in (_Tok.CLOSE_PAR, _Tok.COMMA):
                    values.append("")
                if self._peek()[0] is _Tok.CLOSE_PAR:
                    self._next()
                    return values
                continue
            raise ValueError(f"found '{lit}', expected: ',', or identifier")

    def _exact_value(self) -> list[str]:
        tok, _ = self._peek()
        if tok in (_Tok.END, _Tok.COMMA):
            return [""]
        tok, lit = self._next()
        if tok is _Tok.IDENT:
            return [lit]
        raise ValueError(f"found '{lit}', expected: identifier")


def _new_requirement(key: str, op: LabelOp, values: list[str]) -> LabelRequirement:
    errors: list[str] = []
    if op in (LabelOp.GREATER, LabelOp.LESS):
        for i, value in enumerate(values):
            try:
                int(value)
            except ValueError:
                errors.append(
                    _invalid(f"values[{i}]", value, ["for 'Gt', 'Lt' operators, the value must be an integer"])
                )
    for i, value in enumerate(values):
        if value_errors := _label_value_errors(value):
            errors.append(_invalid(f"values[{i}][{key}]", value, value_errors))
    if errors:
        raise ValueError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return LabelRequirement(key, op, frozenset(values))


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed label selector: all requirements must hold (an empty selector matches everything)."""

    requirements: tuple[LabelRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def __call__(self, obj: Mapping[str, Any]) -> bool:
        """Match a whole object by its ``metadata.labels``."""
        if not self.requirements:
            return True
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return self.matches(labels)


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a label selector string; raise ``BadRequest`` with kube's message when malformed."""
    if text is None or not text.strip():
        return LabelSelector()
    try:
        requirements = _LabelParser(text).parse()
    except ValueError as err:
        raise BadRequest(str(err)) from None
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))
