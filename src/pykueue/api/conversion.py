"""Version conversion for every served kind: ``KindInfo.convert(obj, to_version)``.

Owns the dispatch: Kueue kinds convert through the hub (v1beta2) using
:mod:`pykueue.api.kueue_v1beta1`; single-version kinds only get their ``apiVersion`` set. Called by
the registry on every read and write in a non-storage version. Never mutates its argument.
"""

from __future__ import annotations

import copy

from pykueue.api import kueue_v1beta1
from pykueue.api.kinds import JSONDict

__all__ = ["convert"]

_KUEUE = "kueue.x-k8s.io"


def _version_of(obj: JSONDict) -> str:
    api_version = str(obj.get("apiVersion", ""))
    return api_version.rsplit("/", 1)[-1]


def convert(group: str, kind: str, obj: JSONDict, to_version: str) -> JSONDict:
    """Return ``obj`` expressed in ``to_version`` (a new dict; the input is left untouched)."""
    if group != _KUEUE:
        out = copy.deepcopy(obj)
        out["apiVersion"] = f"{group}/{to_version}" if group else to_version
        return out
    from_version = _version_of(obj)
    hub = kueue_v1beta1.to_hub(kind, obj) if from_version == "v1beta1" else copy.deepcopy(obj)
    hub["apiVersion"] = f"{_KUEUE}/v1beta2"
    if to_version == "v1beta1":
        return kueue_v1beta1.from_hub(kind, hub)
    return hub
