"""Random sequences of applies and updates by several managers keep ownership consistent.

Invariants checked after every write: every owned path exists in the object; re-applying the
configuration just applied changes nothing; no input is mutated.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.api.meta.errors import Conflict
from pykueue.registry.patch import apply_strategic_merge_patch, server_side_apply, update_managed_fields
from pykueue.registry.patch.fieldpaths import value_at
from pykueue.registry.patch.managed import decode_entries

KEYS = {"spec.podSets": "name", "spec.tags": "", "status.conditions": "type"}


def _value(rnd: random.Random) -> Any:
    return rnd.choice([0, 1, "x", True, {"p": rnd.randint(0, 2)}, {}])


def _config(rnd: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if rnd.random() < 0.7:
        spec["queueName"] = rnd.choice(["a", "b"])
    if rnd.random() < 0.7:
        spec["podSets"] = [
            {
                "name": n,
                **({"count": rnd.randint(1, 3)} if rnd.random() < 0.7 else {}),
                **({"x": _value(rnd)} if rnd.random() < 0.5 else {}),
            }
            for n in rnd.sample("abcd", rnd.randint(0, 3))
        ]
    if rnd.random() < 0.5:
        spec["tags"] = rnd.sample(["t1", "t2", "t3"], rnd.randint(0, 3))
    if rnd.random() < 0.5:
        spec["nested"] = {k: _value(rnd) for k in rnd.sample("pqr", rnd.randint(0, 3))}
    metadata: dict[str, Any] = {"name": "w"}
    if rnd.random() < 0.5:
        metadata["labels"] = {k: f"v{rnd.randint(0, 1)}" for k in rnd.sample("lmn", rnd.randint(0, 3))}
    return {"apiVersion": "v1", "kind": "W", "metadata": metadata, "spec": spec}


def _check_owned_paths_exist(obj: dict[str, Any]) -> None:
    for entry in decode_entries(obj["metadata"].get("managedFields")):
        for path in entry.fields:
            assert value_at(obj, path) is not None, f"{entry.manager} owns missing {path}"


def _step(rnd: random.Random, obj: dict[str, Any] | None, step: int) -> dict[str, Any] | None:
    manager = rnd.choice(["m1", "m2", "m3"])
    now = f"2026-01-01T00:00:{step:02d}Z"
    roll = rnd.random()
    if obj is None or roll < 0.5:
        config = _config(rnd)
        before = (copy.deepcopy(obj), copy.deepcopy(config))
        try:
            new = server_side_apply(obj, config, manager=manager, force=rnd.random() < 0.5, merge_keys=KEYS, now=now)
        except Conflict:
            return obj
        assert (obj, config) == before
        if new["metadata"].get("managedFields"):
            assert server_side_apply(new, config, manager=manager, force=False, merge_keys=KEYS, now=now) == new
        return new
    if roll < 0.8:
        new = _config(rnd)
        new["metadata"]["managedFields"] = copy.deepcopy(obj["metadata"].get("managedFields"))
        if rnd.random() < 0.3:
            new["status"] = {
                "conditions": [{"type": t, "status": rnd.choice("TF")} for t in rnd.sample("ABC", rnd.randint(0, 2))]
            }
        return update_managed_fields(
            obj,
            new,
            manager=manager,
            operation="Update",
            now=now,
            merge_keys=KEYS,
            subresource=rnd.choice(["", "status"]),
        )
    patch = {
        "spec": {"queueName": rnd.choice(["a", "c", None])},
        "metadata": {"labels": {"l": rnd.choice(["v0", None])}},
    }
    new = apply_strategic_merge_patch(obj, patch, KEYS)
    return update_managed_fields(obj, new, manager=manager, operation="Update", now=now, merge_keys=KEYS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_random_write_sequences_keep_ownership_consistent(rnd: random.Random) -> None:
    obj: dict[str, Any] | None = None
    for step in range(8):
        obj = _step(rnd, obj, step)
        if obj is not None:
            _check_owned_paths_exist(obj)
