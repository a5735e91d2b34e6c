"""A generic validator for structural OpenAPI v3 schemas, CEL rules included.

Owns what kube-apiserver does for any CustomResource before admission webhooks run: types,
``required``, ``enum``, ``pattern``, length/size/range bounds, list-type ``map``/``set`` uniqueness,
quantities, and the ``x-kubernetes-validations`` CEL rules (``self``, and ``oldSelf`` for
transition rules, which only run where the old object has a correlated value). It knows nothing
about Kueue: :mod:`pykueue.api.schema.object_validation` runs it for every kind, then adds webhook rules.
Also owns unknown-field detection for ``fieldValidation=Strict|Warn``.

Invariant: never raises on user input; every problem becomes a :class:`FieldError` with the
path of the offending node (``spec.resourceGroups[0].flavors[1]``).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

import orjson
import re2

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.formats import format_ok
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.quantity import QuantityError, parse_quantity
from pykueue.api.schema.cel_ext import FUNCTIONS

__all__ = [
    "compile_rules",
    "pattern_error",
    "rule_compile_error",
    "strict_decoding_error",
    "trust_patterns",
    "unknown_field_paths",
    "validate_schema",
]

_MISSING = object()
_EMBEDDED_FIELDS = frozenset({"apiVersion", "kind", "metadata"})
"""What an ``x-kubernetes-embedded-resource`` object holds besides its declared properties."""
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_UNANCHORED = re2._Anchor.UNANCHORED
_TRUSTED_PATTERNS: set[str] = set()
"""Patterns of pykueue's own schemas (Kueue's, JobSet's, the built-in kinds'): known to run in linear
time under Python's ``re`` too, which is ~3x faster per match than RE2's binding on these short
values. Every other pattern (any CRD's) is matched by RE2."""


def trust_patterns(schema: Any) -> None:
    """Record the patterns of one of pykueue's own schemas (see ``_TRUSTED_PATTERNS``)."""
    if isinstance(schema, dict):
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            _TRUSTED_PATTERNS.add(pattern)
        for value in schema.values():
            if isinstance(value, (dict, list)):
                trust_patterns(value)
    elif isinstance(schema, list):
        for item in schema:
            trust_patterns(item)


@cache
def _regex(pattern: str) -> Callable[[str], bool] | None:
    """A matcher for a schema ``pattern`` with RE2 semantics (linear time: a user's regex cannot hang
    the server, as in kube-apiserver); None when RE2 rejects the pattern."""
    try:
        compiled = re2.compile(pattern, _RE2_OPTIONS)
    except re2.error:
        return None
    if pattern in _TRUSTED_PATTERNS:
        with contextlib.suppress(re.error):
            return re.compile(pattern).search  # type: ignore[return-value]
    regexp = getattr(compiled, "_regexp", None)
    if regexp is None:  # another binding version: the public (slower) search
        return lambda value: compiled.search(value) is not None

    def matches(value: str) -> bool:
        encoded = value.encode()
        return bool(regexp.Match(_UNANCHORED, encoded, 0, len(encoded))[0][0] >= 0)

    return matches


def pattern_error(pattern: str) -> str | None:
    """Why RE2 rejects ``pattern`` (None when it compiles)."""
    try:
        re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        return detail.decode() if isinstance(detail, bytes) else str(detail)
    return None


@cache
def _program(rule: str) -> Any:
    import cel  # deferred, not a cycle: ~0.35 s to import, paid only by a server that meets a CEL rule

    return cel.compile(rule)


def rule_compile_error(rule: str) -> str | None:
    """Why a CEL expression does not compile (None when it does)."""
    try:
        _program(rule)
    except Exception as exc:  # the cel library raises its own error types
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def _map_key(item: JSONDict, keys: list[str]) -> str:
    """A hashable identity for a list-map element (key values may be any JSON in bad input)."""
    return repr([item.get(k) for k in keys])


_local = threading.local()


def _context(variables: dict[str, Any]) -> Any:
    """A CEL context holding ``variables`` and the extension functions.

    Building a context registers every extension function (~5 us), so each thread keeps one and only
    rebinds the variables a rule uses (a rule reads only ``self`` and, if it names it, ``oldSelf``,
    so a stale binding of another variable is never read).
    """
    context = getattr(_local, "context", None)
    if context is None:
        import cel  # deferred, as in _program

        context = _local.context = cel.Context(functions=FUNCTIONS)
    for name, value in variables.items():
        context.add_variable(name, value)
    return context


_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_STRING = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


@cache
def _names(rule: str) -> frozenset[str]:
    """Every identifier and string literal in a rule: a superset of the field names it can read."""
    found = set(_IDENTIFIER.findall(rule))
    for single, double in _STRING.findall(rule):
        found.add(single or double)
    # Kubernetes' CEL escaping of property names (``a__dash__b`` reads ``a-b``, ``__namespace__``
    # reads ``namespace``): keep the unescaped names too.
    for name in [n for n in found if "__" in n]:
        unescaped = (
            name.replace("__underscores__", "\0")
            .replace("__dash__", "-")
            .replace("__dot__", ".")
            .replace("__slash__", "/")
            .replace("\0", "__")
        )
        found.add(unescaped)
        if unescaped.startswith("__") and unescaped.endswith("__") and len(unescaped) > 4:
            found.add(unescaped[2:-2])
    return frozenset(found)


_COMPARISON = re.compile(r"==|!=")
_LITERAL_END = re.compile(r"""('[^']*'|"[^"]*"|(?<![A-Za-z0-9_$.])-?\d+(\.\d+)?|\btrue|\bfalse|\bnull)\s*$""")
_LITERAL_START = re.compile(r"""\s*('|"|-?\d|true\b|false\b|null\b)""")
# Operations that compare whole values (objects or lists of them) besides == and !=.
_WHOLE_VALUE = re.compile(
    r"\bin\b|contains\(|equivalent\(|intersects\(|indexOf\(|lastIndexOf\(|isSorted\("
    r"|string\(|dyn\(|exists_one\("
)


@cache
def _prunable(rule: str) -> bool:
    """Whether pruning ``self`` cannot change the rule's result: it never compares whole values.

    Every ``==``/``!=`` must have a literal operand (``c.type == 'Ready'``, ``size(x) == 0``): two
    pruned objects could compare equal where the full ones differ (``j == i`` in a uniqueness
    rule). Membership and set functions compare whole values too.
    """
    if _WHOLE_VALUE.search(rule):
        return False
    for match in _COMPARISON.finditer(rule):
        if not (
            _LITERAL_END.search(rule, 0, match.start())
            or _LITERAL_START.match(rule, match.end())
            or _scalar_call_before(rule, match.start())
            or _SCALAR_CALL_START.match(rule, match.end())
        ):
            return False
    return True


_SCALAR_CALL_END = re.compile(r"(?<![A-Za-z0-9_$])(size|has|int|uint|double|bool)\s*$")
_SCALAR_CALL_START = re.compile(r"\s*(size|has|int|uint|double|bool)\(")


def _scalar_call_before(rule: str, end: int) -> bool:
    """Whether the operand ending at ``end`` is a call that yields a scalar (``size(x)``, ``has(x)``,
    ``x.size()``): comparing those is comparing numbers or booleans."""
    text = rule[:end].rstrip()
    if not text.endswith(")"):
        return False
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        if text[index] == ")":
            depth += 1
        elif text[index] == "(":
            depth -= 1
            if depth == 0:
                return _SCALAR_CALL_END.search(text, 0, index) is not None
    return False


def _prune(schema: JSONDict, value: Any, names: frozenset[str]) -> Any:
    """``value`` without the fields of structured objects that a rule never names.

    Binding ``self`` converts the whole value to CEL (~30 us for a Workload spec, per rule), yet a
    rule reads only fields it names. Objects with declared ``properties`` (and no open
    ``additionalProperties`` or preserved unknown fields) keep just the properties whose name occurs
    in the rule text, recursively; maps, open objects and scalars are kept whole, so ``size()``, key
    iteration and map indexing see everything. Rules that use ``oldSelf`` or may compare whole values
    (:func:`_prunable`) are never pruned.
    """
    if isinstance(value, dict):
        properties = schema.get("properties")
        if (
            not isinstance(properties, dict)
            or schema.get("additionalProperties")
            or schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            return value
        out: JSONDict = {}
        for key, child in value.items():
            if key in names:
                sub = properties.get(key)
                out[key] = _prune(sub, child, names) if isinstance(sub, dict) else child
        return out
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict) and (items.get("properties") or items.get("items")):
            return [_prune(items, item, names) for item in value]
    return value


# Field paths are built lazily: a node's path is the root string or a ``(parent, segment, bracket)``
# tuple, rendered only when an error is reported (most nodes of a valid object never need it).
_Path = Any


def _render(path: _Path) -> str:
    if isinstance(path, str):
        return path
    parent, segment, bracket = path
    base = _render(parent)
    if bracket:
        return f"{base}[{segment}]"
    return fe.join(base, segment)


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _type_ok(expected: str, value: Any) -> bool:
    # The common cases first, without naming the actual type (this runs for every schema node).
    if expected == "string":
        return isinstance(value, str)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "array":
        return isinstance(value, list)
    actual = _type_name(value)
    if expected == "number":
        return actual in ("number", "integer")
    if expected == "integer" and isinstance(value, float):
        return value.is_integer()
    return actual == expected


_SCALAR_CHECKS = ("enum", "pattern", "format", "maxLength", "minLength", "minimum", "maximum")


class _Node:
    """What the walker asks of one schema node, read once: a node is visited for every value it
    validates (every Event's ~20 fields, every condition of every status write)."""

    __slots__ = ("has_enum", "int_or_string", "rules", "scalar_checks", "schema", "type")

    def __init__(self, schema: JSONDict) -> None:
        self.schema = schema  # holding the node keeps its id from being reused while cached
        self.type: str | None = schema.get("type") or None
        self.int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
        self.has_enum = "enum" in schema
        self.scalar_checks = self.int_or_string or any(k in schema for k in _SCALAR_CHECKS)
        self.rules = "x-kubernetes-validations" in schema


_NODES: dict[int, _Node] = {}
_NODES_MAX = 50_000


def _node(schema: JSONDict) -> _Node:
    node = _NODES.get(id(schema))
    if node is None or node.schema is not schema:
        if len(_NODES) >= _NODES_MAX:  # tests build throwaway schemas; the catalogue's live on
            _NODES.clear()
        node = _NODES[id(schema)] = _Node(schema)
    return node


class _Walker:
    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def walk(self, schema: JSONDict, value: Any, old: Any, path: _Path) -> None:
        if value is None:
            return
        node = _node(schema)
        expected = node.type
        if (node.int_or_string or (expected is not None and not _type_ok(expected, value))) and not self._check_type(
            schema, value, path
        ):
            return
        if isinstance(value, dict):
            if node.has_enum:
                self._check_scalar(schema, value, path)
            self._walk_object(schema, value, old, path)
        elif isinstance(value, list):
            if node.has_enum:
                self._check_scalar(schema, value, path)
            self._walk_array(schema, value, old, path)
        elif node.scalar_checks:
            self._check_scalar(schema, value, path)
        if node.rules:
            self._run_rules(schema, value, old, path)

    def _check_type(self, schema: JSONDict, value: Any, path: _Path) -> bool:
        if schema.get("x-kubernetes-int-or-string"):
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                actual = _type_name(value)
                where = _render(path)
                self.errors.append(
                    fe.type_invalid(where, actual, f'{where} in body must be of type integer-or-string: "{actual}"')
                )
                return False
            return True
        expected = schema.get("type")
        if expected and not _type_ok(expected, value):
            actual = _type_name(value)
            where = _render(path)
            self.errors.append(
                fe.type_invalid(where, actual, f'{where or "body"} in body must be of type {expected}: "{actual}"')
            )
            return False
        return True

    def _check_scalar(self, schema: JSONDict, value: Any, lazy_path: _Path) -> None:
        errors = self.errors
        enum = schema.get("enum")
        if enum is not None and value not in enum:
            errors.append(fe.not_supported(_render(lazy_path), value, [str(e) for e in enum]))
        if isinstance(value, str):
            pattern = schema.get("pattern")
            fmt = schema.get("format")
            if not pattern and not fmt and "maxLength" not in schema and "minLength" not in schema:
                return
            if schema.get("x-kubernetes-int-or-string") and pattern:
                try:
                    parse_quantity(value)
                except QuantityError as exc:
                    errors.append(fe.invalid(_render(lazy_path), value, str(exc)))
            elif pattern and (matcher := _regex(pattern)) is not None and not matcher(value):
                path = _render(lazy_path)
                errors.append(fe.invalid(path, value, f"{path} in body should match '{pattern}'"))
            if fmt == "byte":
                if len(value) % 4 or not _BASE64.match(value):
                    errors.append(fe.invalid(_render(lazy_path), value, "illegal base64 data"))
            elif fmt and not format_ok(fmt, value):
                path = _render(lazy_path)
                detail = f"{path} in body must be of type {fmt}: {fe.render_value(value)}"
                errors.append(fe.invalid(path, value, detail))
            if "maxLength" in schema and len(value) > schema["maxLength"]:
                errors.append(fe.too_long(_render(lazy_path), schema["maxLength"]))
            if "minLength" in schema and len(value) < schema["minLength"]:
                path = _render(lazy_path)
                errors.append(
                    fe.invalid(path, value, f"{path} in body should be at least {schema['minLength']} chars long")
                )
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                path = _render(lazy_path)
                errors.append(
                    fe.invalid(path, value, f"{path} in body should be greater than or equal to {schema['minimum']}")
                )
            if "maximum" in schema and value > schema["maximum"]:
                path = _render(lazy_path)
                errors.append(
                    fe.invalid(path, value, f"{path} in body should be less than or equal to {schema['maximum']}")
                )

    def _walk_object(self, schema: JSONDict, value: JSONDict, old: Any, path: _Path) -> None:
        properties: JSONDict = schema.get("properties") or {}
        for name in schema.get("required") or ():
            if value.get(name) is None:
                self.errors.append(fe.required(fe.join(_render(path), name)))
        if schema.get("x-kubernetes-embedded-resource"):
            for name in ("apiVersion", "kind"):
                if not value.get(name):
                    self.errors.append(fe.required(fe.join(_render(path), name), "must not be empty"))
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            self.errors.append(fe.too_many(_render(path), len(value), schema["maxProperties"]))
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            where = _render(path)
            self.errors.append(
                fe.invalid(
                    where, len(value), f"{where} in body should have at least {schema['minProperties']} properties"
                )
            )
        old_map = old if isinstance(old, dict) else {}
        # Validation ratcheting (Kubernetes' CRDValidationRatcheting): a field equal to the old
        # object's is not re-checked (rules reading ``oldSelf`` still run), at every level where the
        # old value correlates: object properties and map-list items by key.
        ratchet = bool(old_map)
        extra: Any = _MISSING
        for name, child in value.items():
            sub = properties.get(name)
            if sub is not None:
                old_child = old_map.get(name, _MISSING)
                if ratchet and old_child == child and type(old_child) is type(child) and not _has_transition_rules(sub):
                    continue
                self.walk(sub, child, old_child, (path, name, False))
                continue
            if extra is _MISSING:
                extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                self.walk(extra, child, old_map.get(name, _MISSING), (path, name, True))

    def _walk_array(self, schema: JSONDict, value: list[Any], old: Any, path: _Path) -> None:
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            self.errors.append(fe.too_many(_render(path), len(value), schema["maxItems"]))
        if "minItems" in schema and len(value) < schema["minItems"]:
            where = _render(path)
            self.errors.append(
                fe.invalid(where, len(value), f"{where} in body should have at least {schema['minItems']} items")
            )
        items: JSONDict = schema.get("items") or {}
        list_type = schema.get("x-kubernetes-list-type")
        keys: list[str] = list(schema.get("x-kubernetes-list-map-keys") or ())
        old_by_key: dict[str, Any] = {}
        if list_type == "map" and isinstance(old, list):
            old_by_key = {_map_key(o, keys): o for o in old if isinstance(o, dict)}
        seen: set[Any] = set()
        for index, item in enumerate(value):
            item_path = (path, index, True)
            correlated: Any = _MISSING
            if list_type == "map" and isinstance(item, dict):
                key = _map_key(item, keys)
                if key in seen:
                    self.errors.append(fe.duplicate(_render(item_path), {k: item.get(k) for k in keys}))
                seen.add(key)
                correlated = old_by_key.get(key, _MISSING)
                if (
                    correlated is not _MISSING
                    and correlated == item
                    and type(correlated) is type(item)
                    and not _has_transition_rules(items)
                ):
                    continue  # ratcheted: an unchanged item of a map list (e.g. an old condition)
            elif list_type == "set":
                marker = repr(item)
                if marker in seen:
                    self.errors.append(fe.duplicate(_render(item_path), item))
                seen.add(marker)
            self.walk(items, item, correlated, item_path)

    def _run_rules(self, schema: JSONDict, value: Any, old: Any, lazy_path: _Path) -> None:
        for rule in schema.get("x-kubernetes-validations") or ():
            text: str = rule["rule"]
            uses_old = "oldSelf" in text
            if uses_old and (old is _MISSING or old is None):
                continue
            variables: dict[str, Any] = {"self": value}
            memo_key: tuple[str, bytes] | None = None
            if uses_old:
                variables["oldSelf"] = old
            elif _prunable(text):
                pruned = variables["self"] = _prune(schema, value, _names(text))
                with contextlib.suppress(TypeError, orjson.JSONEncodeError):
                    memo_key = (text, orjson.dumps(pruned, option=orjson.OPT_SORT_KEYS))
            outcome = _OUTCOMES.get(memo_key) if memo_key is not None else None
            if outcome is None:
                outcome = _evaluate(text, variables)
                if memo_key is not None:
                    if len(_OUTCOMES) >= _OUTCOMES_MAX:
                        _OUTCOMES.clear()
                    _OUTCOMES[memo_key] = outcome
            ok, error = outcome
            if ok is None:
                continue  # a CEL library we do not implement: skip rather than reject
            if ok is True:
                continue
            message = f"evaluation error: {error}" if error is not None else _message(rule, value, old, text)
            path = _render(lazy_path)
            target = path
            field_path = rule.get("fieldPath")
            if field_path:
                target = (path + field_path).lstrip(".")
            reason = rule.get("reason") or "FieldValueInvalid"
            if reason == "FieldValueForbidden":
                self.errors.append(fe.forbidden(target, message))
            elif reason == "FieldValueRequired":
                self.errors.append(fe.required(target, message))
            elif reason == "FieldValueDuplicate":  # kube reports the node's type, not the message
                self.errors.append(fe.duplicate(target, schema.get("type", "object")))
            else:
                self.errors.append(fe.invalid(target, schema.get("type", "object"), message))


def _message(rule: JSONDict, value: Any, old: Any, text: str) -> str:
    """A failed rule's message: its ``messageExpression`` evaluated (when it yields a non-empty
    string), else ``message``, else kube's "failed rule: <rule>"."""
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression:
        variables: dict[str, Any] = {"self": value}
        if "oldSelf" in expression and old is not _MISSING:
            variables["oldSelf"] = old
        result, error = _evaluate(expression, variables)
        if error is None and isinstance(result, str) and result.strip():
            return result
    return str(rule.get("message") or f"failed rule: {text}")


_OUTCOMES: dict[tuple[str, bytes], tuple[Any, str | None]] = {}
"""Outcomes of rules without ``oldSelf`` by (rule, the pruned ``self`` it read as JSON): a rule is
a pure function of what it reads, and pruned values repeat across objects (every podSet's
``{"count": 1}``, every admitted Workload's condition types), while binding and running CEL costs
~30-50 us per rule."""
_OUTCOMES_MAX = 8192


def _evaluate(text: str, variables: dict[str, Any]) -> tuple[Any, str | None]:
    """(result, None), (False, error text), or (None, None) for a CEL library we do not implement."""
    try:
        return _program(text).execute(_context(variables)), None
    except Exception as exc:
        if "Undefined variable or function" in str(exc):
            return None, None
        return False, str(exc)


_TRANSITIONAL: dict[int, tuple[JSONDict, bool]] = {}


def _has_transition_rules(schema: JSONDict) -> bool:
    """Does a rule in this subtree read ``oldSelf``? (Those run even on unchanged values.)
    Cached by identity: schemas are long-lived (the catalogue's and installed CRDs')."""
    hit = _TRANSITIONAL.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    found = "oldSelf" in orjson.dumps(schema).decode()
    _TRANSITIONAL[id(schema)] = (schema, found)
    return found


def validate_schema(
    schema: JSONDict, obj: JSONDict, old: JSONDict | None = None, *, path: str = ""
) -> list[FieldError]:
    """All schema and CEL violations of ``obj`` (``old`` enables transition rules on update)."""
    walker = _Walker()
    walker.walk(schema, obj, old if old is not None else _MISSING, path)
    return walker.errors


def compile_rules(schema: Any) -> int:
    """Compile every CEL rule in ``schema`` now (they are cached), so the first write does not pay
    for it; returns how many rules were seen. Rules that do not compile are left for validation to
    report."""
    count = 0
    if isinstance(schema, dict):
        for rule in schema.get("x-kubernetes-validations") or ():
            if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
                count += 1
                with contextlib.suppress(Exception):  # reported per object by validation
                    _program(rule["rule"])
        for value in schema.values():
            if isinstance(value, (dict, list)):
                count += compile_rules(value)
    elif isinstance(schema, list):
        for item in schema:
            count += compile_rules(item)
    return count


def unknown_field_paths(schema: JSONDict, obj: Any, path: str = "", old: Any = None) -> list[str]:
    """Paths (``spec.foo``, ``spec.containers[0].bar``) of fields the schema does not declare.

    ``old``: the stored value ``obj`` was derived from (a patch's target; ``None`` on create).
    Storage holds no unknown fields, so subtrees equal to their counterpart in ``old`` (properties
    by name, list items by index) are not walked: a status patch walks what it changed, not the
    whole status.
    """
    found: list[str] = []
    _unknown(schema, obj, path, found, old)
    return found


def _unknown(schema: JSONDict, value: Any, path: _Path, found: list[str], old: Any = _MISSING) -> None:
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields") and "properties" not in schema:
            return
        properties: JSONDict | None = schema.get("properties")
        extra = schema.get("additionalProperties")
        old_map = old if isinstance(old, dict) else None
        for name, child in value.items():
            old_child = _MISSING
            if old_map is not None:
                old_child = old_map.get(name, _MISSING)
                if old_child == child:
                    continue  # came from storage unchanged
            if properties is not None and name in properties:
                _unknown(properties[name], child, (path, name, False), found, old_child)
            elif isinstance(extra, dict):
                _unknown(extra, child, (path, name, False), found, old_child)
            elif (
                properties is not None
                and not extra
                and not schema.get("x-kubernetes-preserve-unknown-fields")
                and not (schema.get("x-kubernetes-embedded-resource") and name in _EMBEDDED_FIELDS)
            ):
                found.append(_render((path, name, False)))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            old_list = old if isinstance(old, list) else ()
            for index, item in enumerate(value):
                if index < len(old_list) and old_list[index] == item:
                    continue  # came from storage unchanged
                _unknown(items, item, (path, index, True), found)


def strict_decoding_error(paths: list[str]) -> str:
    """kube-apiserver's wording for fieldValidation=Strict (and the Warn warnings, one per path)."""
    return "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in paths)
