"""The structural validator's shortcuts keep its results: lazy paths, pruned ``self``, shared CEL context."""

from __future__ import annotations

from typing import Any

from pykueue.api.schema.structural import compile_rules, unknown_field_paths, validate_schema

_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 3},
        "count": {"type": "integer"},
        "minCount": {"type": "integer"},
        "template": {"type": "object", "properties": {"image": {"type": "string"}}},
        "a-b": {"type": "integer"},
    },
    "x-kubernetes-validations": [{"rule": "!has(self.minCount) || self.minCount <= self.count", "message": "minCount"}],
}
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "sets": {"type": "array", "items": _ITEM},
                "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}},
                "dashed": {
                    "type": "object",
                    "properties": {"a-b": {"type": "integer"}, "c": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": "self['a-b'] > 0", "message": "dashed"}],
                },
                "open": {
                    "type": "object",
                    "additionalProperties": {"type": "integer"},
                    "x-kubernetes-validations": [{"rule": "self.size() <= 2", "message": "open"}],
                },
            },
            "x-kubernetes-validations": [
                {"rule": "self.sets.all(s, !has(s.template) || s.template.image != 'bad')", "message": "image"},
                {"rule": "self == oldSelf", "message": "immutable"},
            ],
        },
    },
}


def _errors(obj: Any, old: Any = None) -> set[tuple[str, str]]:
    return {(e.field, e.message) for e in validate_schema(_SCHEMA, obj, old)}


def test_error_paths_are_rendered_like_kube_apiserver() -> None:
    obj = {"spec": {"sets": [{"name": "ok"}, {"name": "toolong"}], "labels": {"x.y/z": "long"}}}
    fields = {field for field, _ in _errors(obj)}
    assert fields == {"spec.sets[1].name", "spec.labels[x.y/z]"}
    assert unknown_field_paths(_SCHEMA, {"spec": {"sets": [{}, {"nope": 1}], "x.y": 1}}) == [
        "spec.sets[1].nope",
        "spec[x.y]",
    ]


def test_rules_see_the_fields_they_name() -> None:
    assert ("spec.sets[0]", 'Invalid value: "object": minCount') in _errors(
        {"spec": {"sets": [{"count": 1, "minCount": 2}]}}
    )
    assert ("spec", 'Invalid value: "object": image') in _errors({"spec": {"sets": [{"template": {"image": "bad"}}]}})
    assert _errors({"spec": {"sets": [{"count": 2, "minCount": 1, "template": {"image": "ok"}}]}}) == set()


def test_rules_indexing_by_string_and_map_functions_see_everything() -> None:
    assert ("spec.dashed", 'Invalid value: "object": dashed') in _errors({"spec": {"dashed": {"a-b": 0, "c": 5}}})
    assert not any(m.endswith("dashed") for _, m in _errors({"spec": {"dashed": {"a-b": 1}}}))
    assert ("spec.open", 'Invalid value: "object": open') in _errors({"spec": {"open": {"a": 1, "b": 2, "c": 3}}})


def test_transition_rules_compare_every_field() -> None:
    old = {"spec": {"sets": [{"count": 1, "template": {"image": "a"}}]}}
    new = {"spec": {"sets": [{"count": 1, "template": {"image": "b"}}]}}
    assert ("spec", 'Invalid value: "object": immutable') in _errors(new, old)
    assert _errors(old, old) == set()
    # A later create (no oldSelf) never sees the previous rule's oldSelf binding.
    assert _errors(new) == set()


def test_compile_rules_counts_every_rule() -> None:
    assert compile_rules(_SCHEMA) == 5


def test_rules_comparing_whole_values_are_not_pruned() -> None:
    schema = {
        "type": "array",
        "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "string"}}},
        "x-kubernetes-validations": [
            {"rule": "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0", "message": "must be unique"}
        ],
    }
    distinct: Any = [{"k": "a", "v": "1"}, {"k": "a", "v": "2"}]
    same: Any = [{"k": "a"}, {"k": "a"}]
    assert validate_schema(schema, distinct) == []
    assert [e.message for e in validate_schema(schema, same)] == ['Invalid value: "array": must be unique']


def test_only_rules_without_whole_value_comparisons_are_pruned() -> None:
    from pykueue.api.schema.structural import _prunable

    assert _prunable("has(self.s) ? size(self.spec.sets) == size(self.s.assigned) : true")
    assert _prunable("self.k == 'x' && self.n != 1 && has(self.a) == has(self.b) && self.l.size() == 0")
    for rule in (
        "self.a == self.b",
        "j == i",
        "f(self.a) == f(self.b)",
        "xsize(self.a) == self.b",
        "self.a in self.b",
        "self.l.exists_one(x, x.k > 0)",
        "self.v1 == self.v2",
    ):
        assert not _prunable(rule), rule


def test_escaped_property_names_keep_their_fields() -> None:
    from pykueue.api.schema.structural import _names, _prune

    names = _names("self.a__dash__b > 0 && has(self.__namespace__) && self.x__underscores__y == 1")
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in ("a-b", "namespace", "x__y", "z")}}
    assert _prune(schema, {"a-b": 1, "namespace": 2, "x__y": 3, "z": 4}, names) == {"a-b": 1, "namespace": 2, "x__y": 3}


RATCHET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "minimum": 1},
                "mode": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "mode is immutable"}],
                },
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string", "enum": ["A", "B"]}}},
    },
}


def test_an_unchanged_invalid_field_is_ratcheted_and_a_changed_one_is_not() -> None:
    old = {"spec": {"replicas": 0}, "status": {"phase": "A"}}  # stored before the minimum existed
    assert validate_schema(RATCHET_SCHEMA, {"spec": {"replicas": 0}, "status": {"phase": "B"}}, old) == []
    errors = validate_schema(RATCHET_SCHEMA, {"spec": {"replicas": -1}, "status": {"phase": "B"}}, old)
    assert [e.field for e in errors] == ["spec.replicas"]
    errors = validate_schema(RATCHET_SCHEMA, {"spec": {"replicas": 0}, "status": {"phase": "C"}}, old)
    assert [e.field for e in errors] == ["status.phase"]
    # on create (no old object) nothing is ratcheted
    assert [e.field for e in validate_schema(RATCHET_SCHEMA, {"spec": {"replicas": 0}})] == ["spec.replicas"]


def test_ratcheting_reaches_nested_fields_and_map_list_items_by_key() -> None:
    schema = {
        "type": "object",
        "properties": {
            "status": {
                "type": "object",
                "properties": {
                    "deep": {
                        "type": "object",
                        "properties": {
                            "inner": {
                                "type": "object",
                                "properties": {"level": {"type": "integer", "minimum": 1}, "note": {"type": "string"}},
                            }
                        },
                    },
                    "conditions": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["type"],
                        "items": {
                            "type": "object",
                            "properties": {
                                "type": {"type": "string"},
                                "status": {"type": "string", "enum": ["True", "False"]},
                            },
                        },
                    },
                },
            }
        },
    }
    old = {
        "status": {"deep": {"inner": {"level": 0, "note": "a"}}, "conditions": [{"type": "Old", "status": "Maybe"}]}
    }  # stored before the rules
    grown = {
        "status": {
            "deep": {"inner": {"level": 0, "note": "a"}, "other": 1},
            "conditions": [{"type": "Old", "status": "Maybe"}, {"type": "New", "status": "True"}],
        }
    }
    assert validate_schema(schema, grown, old) == []  # the unchanged nested value and list item ratchet
    moved = {
        "status": {"deep": {"inner": {"level": 0, "note": "b"}}, "conditions": [{"type": "Old", "status": "Perhaps"}]}
    }
    # a changed item is checked again; inside a changed object only the changed fields are
    fields = sorted(e.field for e in validate_schema(schema, moved, old))
    assert fields == ["status.conditions[0].status"]
    lowered = {"status": {"deep": {"inner": {"level": -1, "note": "a"}}, "conditions": []}}
    assert [e.field for e in validate_schema(schema, lowered, old)] == ["status.deep.inner.level"]


def test_transition_rules_still_run_on_unchanged_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "n": {
                        "type": "integer",
                        "x-kubernetes-validations": [{"rule": "self > oldSelf", "message": "n must grow"}],
                    }
                },
            }
        },
    }
    errors = validate_schema(schema, {"spec": {"n": 1}}, {"spec": {"n": 1}})
    assert len(errors) == 1
    assert "n must grow" in errors[0].message


def test_rule_outcomes_are_reused_for_the_same_pruned_value_and_only_for_it(monkeypatch: Any) -> None:
    from pykueue.api.schema import structural

    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer"},
                        "minCount": {"type": "integer"},
                        "name": {"type": "string"},
                    },
                    "x-kubernetes-validations": [
                        {"rule": "!has(self.minCount) || self.minCount <= self.count", "message": "minCount too large"}
                    ],
                },
            }
        },
    }
    calls: list[str] = []
    real = structural._evaluate

    def counting(text: str, variables: dict[str, Any]) -> Any:
        calls.append(text)
        return real(text, variables)

    monkeypatch.setattr(structural, "_evaluate", counting)
    monkeypatch.setattr(structural, "_OUTCOMES", {})
    # names differ but the rule never reads them: one evaluation serves all three items
    ok = {"items": [{"name": "a", "count": 2}, {"name": "b", "count": 2}, {"name": "c", "count": 2}]}
    assert validate_schema(schema, ok) == []
    assert len(calls) == 1
    bad = {"items": [{"name": "a", "count": 2, "minCount": 3}, {"name": "b", "count": 2, "minCount": 3}]}
    errors = validate_schema(schema, bad)
    assert [e.field for e in errors] == ["items[0]", "items[1]"]
    assert all("minCount too large" in e.message for e in errors)
    assert len(calls) == 2  # a different value read by the rule is evaluated, then reused
