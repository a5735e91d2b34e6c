"""Which Kueue ``Configuration`` a cluster runs with, for the commands that rebuild its engine.

Owned by ``cli/``. ``explain workload``, ``simulate eta`` and ``simulate run --from-cluster`` rebuild
the scheduler engine outside the cluster from the objects they read. To answer as the cluster would,
the engine needs the settings the cluster's controller runs with (fair sharing and its preemption
strategies, admission fair sharing, the requeuing order): a cluster with fair sharing on explained
with the defaults gets a wrong answer to "what would let it in". The settings come from, in order:

1. ``--config FILE`` (a Kueue ``Configuration``), overriding everything;
2. the ConfigMap the controller reads its Configuration from, key ``controller_manager_config.yaml``:
   ``pykueue-manager-config`` (``pykueue install`` and the Helm chart, in the install's namespace;
   ``pykueue up``, which stores the Configuration it runs with there at start, in the
   Configuration's ``namespace``, ``kueue-system`` by default, as ``kubeadm`` records its
   ClusterConfiguration in a ConfigMap) or Kueue's own ``kueue-manager-config``. They are looked up
   by name across namespaces (a list with a field selector, so a custom install namespace is found);
   a user who may not list ConfigMaps cluster-wide gets a read of the usual places instead
   (``pykueue-system`` and ``kueue-system``);
3. none found, or none readable (403, 404): Kueue's defaults, and the answer says so and why.

Fails closed: a ConfigMap that is found but holds no Configuration, or an invalid one, or two
candidate ConfigMaps (which one runs is not knowable from here), raise :class:`ConfigLookupError`
(one line; the commands exit non-zero) rather than fall back to the defaults silently. The
Configuration is parsed by the controller's own loader (:func:`pykueue.controllers.config.load_config`),
so the CLI accepts exactly what the controller accepts and derives the same engine settings
(:meth:`~pykueue.controllers.config.KueueConfig.scheduler_config`).

The search is written once, without I/O: :func:`search` is a generator that yields each request
(:class:`Lookup`) and is sent its :class:`Answer`; :func:`read_running_config` drives it over any
:class:`~pykueue.client.protocol.Client` (``simulate``, and the embedded server's own tests), and
``cli/explain.py`` drives it over the kueuectl connection. :func:`stored_config_map` builds the
ConfigMap ``pykueue up`` writes.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

from pykueue.api.meta.errors import Forbidden, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.protocol import Client
from pykueue.controllers.config import ConfigError, KueueConfig, load_config
from pykueue.install.options import APP_LABELS, CONFIG_KEY, CONFIG_MAP, InstallOptions
from pykueue.scheduler import SchedulerConfig
from pykueue.scheduler.types import LESS_THAN_INITIAL_SHARE, LESS_THAN_OR_EQUAL_TO_FINAL_SHARE

__all__ = [
    "CONFIG_MAPS",
    "KUEUE_CONFIG_MAP",
    "Answer",
    "ConfigLookupError",
    "Lookup",
    "RunningConfig",
    "from_file",
    "read_running_config",
    "search",
    "stored_config_map",
]

KUEUE_CONFIG_MAP = "kueue-manager-config"
"""Kueue's own manifests and Helm chart (``kueue-system`` by default), same key."""
CONFIG_MAPS = GroupVersionResource("", "v1", "configmaps")
USUAL_NAMESPACES: dict[str, tuple[str, ...]] = {
    CONFIG_MAP: (InstallOptions().namespace, KueueConfig().namespace),
    KUEUE_CONFIG_MAP: (KueueConfig().namespace,),
}
"""Where to look when ConfigMaps may not be listed across namespaces: ``pykueue install``'s default
namespace and ``pykueue up``'s, and Kueue's."""
_DEFAULT_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)


class ConfigLookupError(ValueError):
    """A Configuration was found but cannot be used; the message is the one line the user sees."""


@dataclass(frozen=True, slots=True)
class Lookup:
    """One request of the search: ConfigMaps called ``name`` in ``namespace`` ("" = every namespace)."""

    name: str
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a :class:`Lookup` found: the ConfigMaps, or the refusal's HTTP status (403, 404)."""

    items: list[JSONDict] = field(default_factory=list)
    status: int = 200


@dataclass(frozen=True, slots=True)
class RunningConfig:
    """The Configuration the engine is rebuilt with, and where it came from."""

    source: str
    """``file`` (``--config``), ``configMap`` or ``defaults``."""
    name: str
    """The file as given, ``namespace/name`` of the ConfigMap, or "" for the defaults."""
    config: KueueConfig
    why_defaults: str = ""
    """For ``defaults``: why no Configuration was used (none found, or not allowed to read it)."""

    @property
    def scheduler(self) -> SchedulerConfig:
        """The engine settings, derived exactly as the controller derives them."""
        return self.config.scheduler_config()

    def settings(self) -> str:
        """The engine-relevant settings in words: ``fair sharing on (...)``, ``admission fair sharing on``."""
        fair = self.config.fair_sharing
        if fair is None:
            parts = ["fair sharing off"]
        elif fair.preemption_strategies == _DEFAULT_STRATEGIES:
            parts = ["fair sharing on"]
        else:
            parts = [f"fair sharing on, preemptionStrategies {', '.join(fair.preemption_strategies)}"]
        if self.config.admission_fair_sharing is not None:
            parts.append("admission fair sharing on")
        if self.config.wait_for_pods_ready.requeuing_strategy.timestamp != "Eviction":
            parts.append("requeued by creation time")
        return ", ".join(parts)

    def describe(self) -> str:
        """The line the commands print after ``Scheduler configuration:``."""
        if self.source == "defaults":
            return f"Kueue's defaults ({self.why_defaults}; {self.settings()})"
        where = f"ConfigMap {self.name}" if self.source == "configMap" else f"file {self.name}"
        return f"{where} ({self.settings()})"

    def as_json(self) -> JSONDict:
        """The ``-o json`` field: where it came from and the settings that change the engine."""
        fair = self.config.fair_sharing
        out: JSONDict = {
            "source": self.source,
            "name": self.name,
            "fairSharing": None if fair is None else {"preemptionStrategies": list(fair.preemption_strategies)},
            "admissionFairSharing": self.config.admission_fair_sharing is not None,
            "description": self.describe(),
        }
        if self.source == "defaults":
            out["reason"] = self.why_defaults
        return out


def from_file(path: Path) -> RunningConfig:
    """``--config FILE``: the user's Configuration, overriding whatever the cluster holds."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigLookupError(f"--config {path}: cannot read: {exc.strerror or exc}") from None
    return RunningConfig("file", str(path), _parse(text, f"--config {path}"))


def _parse(text: str, where: str) -> KueueConfig:
    try:
        return load_config(text)
    except ConfigError as exc:
        raise ConfigLookupError(f"{where}: {' '.join(str(exc).split())}") from None


def _key(config_map: JSONDict) -> str:
    meta = config_map.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def search() -> Generator[Lookup, Answer, RunningConfig]:
    """The lookup, without I/O: yields each request, is sent its answer, returns the result.

    Each ConfigMap name is first listed across namespaces; when that is refused, the usual namespaces
    are read one by one. Other failures (the cluster unreachable, 500s) are the driver's to raise."""
    found: dict[str, JSONDict] = {}
    refused: list[str] = []
    for name in (CONFIG_MAP, KUEUE_CONFIG_MAP):
        answer = yield Lookup(name)
        if answer.status == 200:
            found.update((_key(cm), cm) for cm in answer.items if (cm.get("metadata") or {}).get("name") == name)
            continue
        for namespace in USUAL_NAMESPACES[name]:
            answer = yield Lookup(name, namespace)
            if answer.status == 200:
                found.update((_key(cm), cm) for cm in answer.items)
            elif answer.status == 403:
                refused.append(f"{namespace}/{name}")
    return _decide(found, refused)


def _decide(found: dict[str, JSONDict], refused: list[str]) -> RunningConfig:
    if len(found) > 1:
        raise ConfigLookupError(
            f"several Kueue Configurations in the cluster (ConfigMaps {', '.join(sorted(found))}); "
            "give the one the controller runs with as --config FILE"
        )
    if not found:
        why = (
            "no Configuration found"
            if not refused
            else f"no Configuration readable: not allowed to read ConfigMap {', '.join(refused)}"
        )
        return RunningConfig("defaults", "", KueueConfig(), why_defaults=why)
    (key, config_map), *_ = found.items()
    text = (config_map.get("data") or {}).get(CONFIG_KEY)
    if not isinstance(text, str):
        raise ConfigLookupError(f"ConfigMap {key} has no {CONFIG_KEY}: it holds no Kueue Configuration")
    return RunningConfig("configMap", key, _parse(text, f"ConfigMap {key}"))


async def read_running_config(client: Client) -> RunningConfig:
    """:func:`search` over a :class:`~pykueue.client.protocol.Client`."""
    steps = search()
    lookup = next(steps)
    while True:
        try:
            if lookup.namespace:
                answer = Answer([await client.get(CONFIG_MAPS, lookup.name, lookup.namespace)])
            else:
                items, _ = await client.list(CONFIG_MAPS, field_selector=f"metadata.name={lookup.name}")
                answer = Answer(items)
        except Forbidden:
            answer = Answer(status=403)
        except NotFound:
            answer = Answer(status=404)
        try:
            lookup = steps.send(answer)
        except StopIteration as done:
            result: RunningConfig = done.value
            return result


def stored_config_map(text: str, config: KueueConfig) -> JSONDict:
    """The ConfigMap ``pykueue up`` stores at start: the Configuration it runs with (``text``, parsed
    as ``config``), where the lookup above and ``kubectl get configmap`` find it."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CONFIG_MAP, "namespace": config.namespace, "labels": dict(APP_LABELS)},
        "data": {CONFIG_KEY: text},
    }
