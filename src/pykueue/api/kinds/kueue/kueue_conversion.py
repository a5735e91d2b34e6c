"""Version conversion of Kueue's kinds: their ``KindInfo.convert(obj, to_version)``.

Owned by ``api/kinds/kueue``. Kueue's kinds convert through the hub (v1beta2) using
:mod:`pykueue.api.kinds.kueue.kueue_v1beta1`. Called by the registry on every read and write in a
non-storage version. Never mutates its argument.
"""

from __future__ import annotations

from collections.abc import Callable

from pykueue.api.kinds.kueue import kueue_v1beta1
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy

__all__ = ["HUB", "KUEUE_GROUP", "converter"]

KUEUE_GROUP = "kueue.x-k8s.io"
HUB = "v1beta2"


def _version_of(obj: JSONDict) -> str:
    api_version = str(obj.get("apiVersion", ""))
    return api_version.rsplit("/", 1)[-1]


def converter(kind: str) -> Callable[[JSONDict, str], JSONDict]:
    """``convert(obj, to_version)`` for one of Kueue's kinds: a new dict, the input left untouched."""

    def convert(obj: JSONDict, to_version: str) -> JSONDict:
        from_version = _version_of(obj)
        hub = kueue_v1beta1.to_hub(kind, obj) if from_version == "v1beta1" else json_copy(obj)
        hub["apiVersion"] = f"{KUEUE_GROUP}/{HUB}"
        if to_version == "v1beta1":
            return kueue_v1beta1.from_hub(kind, hub)
        return hub

    return convert
