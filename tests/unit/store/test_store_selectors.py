"""Label and field selectors: a table of matches and of errors worded like kube-apiserver's."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.meta.errors import BadRequest
from pykueue.store import field_value, parse_field_selector, parse_label_selector

LABELS = {"app": "web", "tier": "front", "n": "5", "kueue.x-k8s.io/queue-name": "q1", "empty": ""}


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        ("", True),
        ("   ", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("app!=web", False),
        ("missing!=x", True),  # != matches objects without the label
        ("app in (web,db)", True),
        ("app in (db)", False),
        ("app notin (db)", True),
        ("app notin (web,db)", False),
        ("missing notin (x)", True),
        ("missing in (x)", False),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        ("app=web, tier in (front)", True),
        ("  app = web  ", True),
        ("kueue.x-k8s.io/queue-name=q1", True),
        ("n>4", True),
        ("n>5", False),
        ("n<6", True),
        ("app>1", False),  # non-integer label value never compares
        ("empty=", True),
        ("empty in ()", True),
        ("empty in (,x)", True),
        ("app in (x,,y)", False),
        ("app in (in,notin)", False),
        ("in", False),  # "in" is a key here
        ("app in (web),!missing,tier", True),
    ],
)
def test_label_selector_matches(selector: str, want: bool) -> None:
    sel = parse_label_selector(selector)
    assert sel.matches(LABELS) is want
    assert sel({"metadata": {"labels": LABELS}}) is want


def test_label_selector_on_object_without_labels() -> None:
    assert parse_label_selector("!a")({"metadata": {}}) is True
    assert parse_label_selector("a")({}) is False
    assert parse_label_selector("a!=b")({"metadata": {"labels": None}}) is True


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("a=b,", "found '', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        ("a>b", "values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"),
        ("a b/c/d=e", "expected: in, notin"),
        ("a/b/c=d", 'key: Invalid value: "a/b/c": a qualified name must consist of'),
        ("Foo.com/a=b", 'key: Invalid value: "Foo.com/a": prefix part a lowercase RFC 1123 subdomain'),
        ("-a=b", 'key: Invalid value: "-a": name part must consist of alphanumeric characters'),
        ("/a=b", "prefix part must be non-empty"),
        ("a/=b", "name part must be non-empty"),
        ("a=" + "x" * 64, 'values[0][a]: Invalid value: "' + "x" * 64 + '": must be no more than 63'),
        ("a=-x", "a valid label must be an empty string or consist of alphanumeric characters"),
        ("a=b)", "found ')', expected: ',' or 'end of string'"),
        ("a=>", "unable to parse requirement: found '>', expected: identifier"),
    ],
)
def test_label_selector_errors(selector: str, message: str) -> None:
    with pytest.raises(BadRequest) as err:
        parse_label_selector(selector)
    assert message in err.value.message
    assert err.value.to_status()["code"] == 400


POD = {
    "metadata": {"name": "p1", "namespace": "ns"},
    "spec": {"nodeName": "", "hostNetwork": True, "priority": 3, "nested": {"deep": "x"}},
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        ("", True),
        ("metadata.name=p1", True),
        ("metadata.name==p1", True),
        ("metadata.name!=p1", False),
        ("metadata.namespace=ns,metadata.name=p1", True),
        ("metadata.namespace=ns,metadata.name=p2", False),
        ("status.phase=Running", True),
        ("status.phase!=Pending", True),
        ("spec.nodeName=", True),  # unset or empty selects ""
        ("spec.missing=", True),
        ("spec.missing!=", False),
        ("spec.hostNetwork=true", True),
        ("spec.priority=3", True),
        ("spec.nested.deep=x", True),
        ("spec.nested=x", False),  # maps never equal a scalar
        ("metadata.name=p1,", True),
    ],
)
def test_field_selector_matches(selector: str, want: bool) -> None:
    assert parse_field_selector(selector)(POD) is want


def test_field_selector_escapes() -> None:
    obj = {"metadata": {"name": "a,b=c\\d"}}
    assert parse_field_selector(r"metadata.name=a\,b\=c\\d")(obj) is True
    assert parse_field_selector(r"metadata.name!=a\,b\=c\\d")(obj) is False


def test_field_selector_key_only_fast_path() -> None:
    sel = parse_field_selector("metadata.namespace=ns,metadata.name!=p2")
    assert sel.key_only is True
    assert sel.matches_key("ns", "p1") is True
    assert sel.matches_key("ns", "p2") is False
    assert sel.matches_key("other", "p1") is False
    assert parse_field_selector("status.phase=x").key_only is False


@pytest.mark.parametrize(
    ("selector", "allowed", "message"),
    [
        ("metadata.name", None, "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("a=b,c", None, "invalid selector: 'a=b,c'; can't understand 'c'"),
        ("=x", None, "can't understand '=x'"),
        ("=x", (), "can't understand '=x'"),
        ("status.phase=Running", (), "field label not supported: status.phase"),
        ("spec.x=1", ("status.phase",), "field label not supported: spec.x"),
        (r"metadata.name=a\x", None, "invalid escape sequence"),
        ("metadata.name=a=b", None, "unescaped '='"),
    ],
)
def test_field_selector_errors(selector: str, allowed: tuple[str, ...] | None, message: str) -> None:
    with pytest.raises(BadRequest) as err:
        parse_field_selector(selector, allowed)
    assert message in err.value.message


def test_field_selector_allowed_fields() -> None:
    sel = parse_field_selector("status.phase=Running,metadata.name=p1", allowed=("status.phase",))
    assert sel(POD) is True


@pytest.mark.parametrize(
    ("path", "want"),
    [
        ("metadata.name", "p1"),
        ("spec.hostNetwork", "true"),
        ("spec.priority", "3"),
        ("spec.nested", ""),
        ("nope.deeper", ""),
        ("metadata.name.more", ""),
    ],
)
def test_field_value(path: str, want: str) -> None:
    obj: dict[str, Any] = POD
    assert field_value(obj, path) == want
