"""The patch library's public surface: the registry and API server code against these exactly."""

from __future__ import annotations

import inspect

import pykueue.registry.patch as patch


def test_exports_are_pinned() -> None:
    assert sorted(patch.__all__) == [
        "METADATA_MERGE_KEYS",
        "apply_json_patch",
        "apply_merge_patch",
        "apply_strategic_merge_patch",
        "server_side_apply",
        "update_managed_fields",
    ]


def _params(fn: object) -> list[tuple[str, str, object]]:
    sig = inspect.signature(fn)  # type: ignore[arg-type]
    return [(p.name, p.kind.name, p.default) for p in sig.parameters.values()]


def test_signatures_match_the_contract() -> None:
    empty = inspect.Parameter.empty
    assert _params(patch.apply_merge_patch) == [
        ("current", "POSITIONAL_OR_KEYWORD", empty),
        ("patch", "POSITIONAL_OR_KEYWORD", empty),
    ]
    assert _params(patch.apply_json_patch) == [
        ("current", "POSITIONAL_OR_KEYWORD", empty),
        ("ops", "POSITIONAL_OR_KEYWORD", empty),
    ]
    assert _params(patch.apply_strategic_merge_patch) == [
        ("current", "POSITIONAL_OR_KEYWORD", empty),
        ("patch", "POSITIONAL_OR_KEYWORD", empty),
        ("merge_keys", "POSITIONAL_OR_KEYWORD", empty),
    ]
    assert _params(patch.server_side_apply) == [
        ("current", "POSITIONAL_OR_KEYWORD", empty),
        ("applied", "POSITIONAL_OR_KEYWORD", empty),
        ("manager", "KEYWORD_ONLY", empty),
        ("force", "KEYWORD_ONLY", empty),
        ("merge_keys", "KEYWORD_ONLY", empty),
        ("now", "KEYWORD_ONLY", empty),
        ("subresource", "KEYWORD_ONLY", ""),
    ]
    # merge_keys is an optional extra so Update ownership can track list items like apply does.
    assert _params(patch.update_managed_fields) == [
        ("old", "POSITIONAL_OR_KEYWORD", empty),
        ("new", "POSITIONAL_OR_KEYWORD", empty),
        ("manager", "KEYWORD_ONLY", empty),
        ("operation", "KEYWORD_ONLY", empty),
        ("now", "KEYWORD_ONLY", empty),
        ("subresource", "KEYWORD_ONLY", ""),
        ("merge_keys", "KEYWORD_ONLY", None),
    ]
