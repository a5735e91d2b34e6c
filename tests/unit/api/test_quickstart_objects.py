"""The quickstart's objects (the packaged examples) default and validate cleanly, with no unknown fields."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from tests.e2e.harness import QUICKSTART

from pykueue.api.catalogue import build_catalogue, unknown_fields
from pykueue.api.kinds.kueue.job_webhook import validate_managed_job

DOCS: list[dict[str, Any]] = [
    d for path in sorted(QUICKSTART.glob("*.yaml")) for d in yaml.safe_load_all(path.read_text()) if d
]


def test_the_quickstart_has_objects() -> None:
    assert [d["kind"] for d in DOCS] == ["ResourceFlavor", "ClusterQueue", "LocalQueue", "Job"]


@pytest.mark.parametrize("doc", DOCS, ids=[f"{d['kind']}" for d in DOCS])
def test_quickstart_object_is_valid(doc: dict[str, Any]) -> None:
    group, _, version = doc["apiVersion"].rpartition("/")
    info = build_catalogue().find(group, doc["kind"])
    assert info is not None
    obj = dict(doc)
    if "name" not in obj["metadata"]:
        obj["metadata"] = {**obj["metadata"], "name": obj["metadata"]["generateName"] + "abcde"}
    assert unknown_fields(info, version, obj) == []
    defaulted = info.default(obj)
    assert info.validate(defaulted, None) == []
    if doc["kind"] == "Job":
        assert validate_managed_job(defaulted, None) == []
