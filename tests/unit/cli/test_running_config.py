"""Which Kueue Configuration a cluster runs with (``pykueue.cli.running_config``): the ConfigMaps looked
for and in which order, what is found, and every way a found Configuration is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.unit.client.conftest import make_registry

from pykueue.api.meta.errors import Forbidden, NotFound
from pykueue.cli.embedded import EmbeddedOptions, _record_configuration
from pykueue.cli.explain import running_config
from pykueue.cli.kueuectl.connection import ApiFailure, CommandError
from pykueue.cli.running_config import (
    CONFIG_MAPS,
    Answer,
    ConfigLookupError,
    Lookup,
    RunningConfig,
    from_file,
    read_running_config,
    search,
    stored_config_map,
)
from pykueue.client import LocalClient
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.controllers.config import embedded_default, embedded_default_document, load_config, parse_config
from pykueue.scheduler.types import LESS_THAN_INITIAL_SHARE

FAIR = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n"
KUEUE_V1BETA1_FAIR = (
    "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
    "fairSharing:\n  enable: true\n  preemptionStrategies: [LessThanInitialShare]\n"
)


def config_map(namespace: str, name: str, text: str | None) -> dict[str, Any]:
    data = {} if text is None else {"controller_manager_config.yaml": text}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": namespace, "name": name}, "data": data}


def drive(answer_for: Callable[[Lookup], Answer]) -> tuple[RunningConfig, list[Lookup]]:
    """Run the search with ``answer_for`` as the cluster; returns the result and every request made."""
    asked: list[Lookup] = []
    steps = search()
    lookup = next(steps)
    while True:
        asked.append(lookup)
        try:
            lookup = steps.send(answer_for(lookup))
        except StopIteration as done:
            return done.value, asked


def cluster_of(*config_maps: dict[str, Any], list_status: int = 200, forbidden: tuple[str, ...] = ()) -> Any:
    """A cluster holding ``config_maps``; lists across namespaces answer ``list_status``; the
    ``namespace/name`` keys in ``forbidden`` answer 403 to a get."""

    def answer(lookup: Lookup) -> Answer:
        named = [cm for cm in config_maps if cm["metadata"]["name"] == lookup.name]
        if not lookup.namespace:
            return Answer(named) if list_status == 200 else Answer(status=list_status)
        if f"{lookup.namespace}/{lookup.name}" in forbidden:
            return Answer(status=403)
        here = [cm for cm in named if cm["metadata"]["namespace"] == lookup.namespace]
        return Answer(here) if here else Answer(status=404)

    return answer


def test_kueues_own_config_map_with_fair_sharing() -> None:
    found, asked = drive(cluster_of(config_map("kueue-system", "kueue-manager-config", KUEUE_V1BETA1_FAIR)))
    assert asked == [Lookup("pykueue-manager-config"), Lookup("kueue-manager-config")]
    assert (found.source, found.name) == ("configMap", "kueue-system/kueue-manager-config")
    assert found.scheduler.fair_sharing is not None
    assert found.scheduler.fair_sharing.preemption_strategies == (LESS_THAN_INITIAL_SHARE,)
    assert found.describe() == (
        "ConfigMap kueue-system/kueue-manager-config (fair sharing on, preemptionStrategies LessThanInitialShare)"
    )
    assert found.as_json()["fairSharing"] == {"preemptionStrategies": ["LessThanInitialShare"]}


def test_a_pykueue_install_in_any_namespace_is_found_by_the_list() -> None:
    found, _ = drive(cluster_of(config_map("team-platform", "pykueue-manager-config", FAIR)))
    assert (found.source, found.name) == ("configMap", "team-platform/pykueue-manager-config")
    assert found.describe() == "ConfigMap team-platform/pykueue-manager-config (fair sharing on)"
    assert found.scheduler.admission_fair_sharing is None


def test_nothing_found_is_the_defaults_and_says_so() -> None:
    found, _ = drive(cluster_of(config_map("default", "something-else", FAIR)))
    assert found.source == "defaults"
    assert found.scheduler.fair_sharing is None
    assert found.describe() == "Kueue's defaults (no Configuration found; fair sharing off)"
    assert found.as_json() == {
        "source": "defaults",
        "name": "",
        "fairSharing": None,
        "admissionFairSharing": False,
        "description": "Kueue's defaults (no Configuration found; fair sharing off)",
        "reason": "no Configuration found",
    }


def test_without_the_right_to_list_the_usual_namespaces_are_read() -> None:
    found, asked = drive(
        cluster_of(config_map("kueue-system", "kueue-manager-config", FAIR), list_status=403),
    )
    assert asked == [
        Lookup("pykueue-manager-config"),
        Lookup("pykueue-manager-config", "pykueue-system"),
        Lookup("pykueue-manager-config", "kueue-system"),
        Lookup("kueue-manager-config"),
        Lookup("kueue-manager-config", "kueue-system"),
    ]
    assert (found.source, found.name) == ("configMap", "kueue-system/kueue-manager-config")


def test_not_allowed_to_read_any_is_the_defaults_with_the_reason() -> None:
    found, _ = drive(
        cluster_of(
            list_status=403,
            forbidden=("pykueue-system/pykueue-manager-config", "kueue-system/kueue-manager-config"),
        )
    )
    assert found.source == "defaults"
    assert found.why_defaults == (
        "no Configuration readable: not allowed to read ConfigMap pykueue-system/pykueue-manager-config, "
        "kueue-system/kueue-manager-config"
    )
    assert found.describe().startswith("Kueue's defaults (no Configuration readable: not allowed")


def test_two_candidates_are_an_error_not_a_guess() -> None:
    with pytest.raises(ConfigLookupError) as err:
        drive(
            cluster_of(
                config_map("pykueue-system", "pykueue-manager-config", FAIR),
                config_map("kueue-system", "kueue-manager-config", "{}"),
            )
        )
    assert str(err.value) == (
        "several Kueue Configurations in the cluster (ConfigMaps kueue-system/kueue-manager-config, "
        "pykueue-system/pykueue-manager-config); give the one the controller runs with as --config FILE"
    )


def test_a_config_map_without_the_key_is_an_error() -> None:
    with pytest.raises(ConfigLookupError, match=r"^ConfigMap kueue-system/kueue-manager-config has no "):
        drive(cluster_of(config_map("kueue-system", "kueue-manager-config", None)))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "fairSharing: {enable: maybe}\n",
            "ConfigMap kueue-system/kueue-manager-config: invalid Configuration: "
            "fairSharing.enable: must be true or false",
        ),
        (
            "fairSharing: [\n",
            "ConfigMap kueue-system/kueue-manager-config: invalid Configuration: <root>: not valid YAML",
        ),
        (
            "fairSharing: {}\nscheduler: {}\n",
            "ConfigMap kueue-system/kueue-manager-config: invalid Configuration: scheduler: unknown field",
        ),
    ],
)
def test_an_invalid_configuration_is_an_error_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(ConfigLookupError) as err:
        drive(cluster_of(config_map("kueue-system", "kueue-manager-config", text)))
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_config_file(tmp_path: Path) -> None:
    path = tmp_path / "fair.yaml"
    path.write_text(FAIR + "admissionFairSharing: {usageHalfLifeTime: 1h}\n")
    found = from_file(path)
    assert (found.source, found.name) == ("file", str(path))
    assert found.describe() == f"file {path} (fair sharing on, admission fair sharing on)"
    path.write_text("waitForPodsReady: {requeuingStrategy: {timestamp: Creation}}\n")
    creation = from_file(path)
    assert creation.scheduler.pods_ready_requeue_by_eviction is False
    assert creation.describe() == f"file {path} (fair sharing off, requeued by creation time)"
    path.write_text("waitForPodsReady: {timeout: soon}\n")
    with pytest.raises(ConfigLookupError) as err:
        from_file(path)
    assert str(err.value) == (
        f'--config {path}: invalid Configuration: waitForPodsReady.timeout: must be a duration like "5m"'
    )
    with pytest.raises(ConfigLookupError, match=r"cannot read"):
        from_file(tmp_path / "absent.yaml")


def test_the_embedded_default_document_loads_as_the_embedded_default() -> None:
    document = embedded_default_document()
    assert parse_config(document) == embedded_default()
    stored = stored_config_map(yaml.safe_dump(document), embedded_default())
    assert stored["metadata"]["namespace"] == "kueue-system"
    assert load_config(stored["data"]["controller_manager_config.yaml"]) == embedded_default()


class _Refusing:
    """A client whose ConfigMap reads answer ``error`` (the driver maps it to a status)."""

    def __init__(self, error: Exception, held: dict[str, Any] | None = None) -> None:
        self.error = error
        self.held = held
        self.gets: list[tuple[str, str]] = []

    async def list(self, res: GroupVersionResource, namespace: str = "", **_: str) -> tuple[list[Any], str]:
        raise self.error

    async def get(self, res: GroupVersionResource, name: str, namespace: str = "") -> dict[str, Any]:
        self.gets.append((namespace, name))
        if self.held is not None and (namespace, name) == (
            self.held["metadata"]["namespace"],
            self.held["metadata"]["name"],
        ):
            return self.held
        raise self.error


async def test_read_over_a_client_maps_forbidden_and_not_found() -> None:
    held = config_map("kueue-system", "pykueue-manager-config", FAIR)
    refusing = _Refusing(Forbidden("configmaps is forbidden"), held)
    found = await read_running_config(refusing)  # type: ignore[arg-type]
    assert (found.source, found.name) == ("configMap", "kueue-system/pykueue-manager-config")
    assert refusing.gets[:2] == [
        ("pykueue-system", "pykueue-manager-config"),
        ("kueue-system", "pykueue-manager-config"),
    ]
    nothing = await read_running_config(_Refusing(NotFound("no"), None))  # type: ignore[arg-type]
    assert (nothing.source, nothing.why_defaults) == ("defaults", "no Configuration found")


async def test_read_over_the_embedded_registry() -> None:
    client = LocalClient(make_registry())
    await client.create(
        GroupVersionResource("", "v1", "namespaces"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}},
    )
    assert (await read_running_config(client)).source == "defaults"
    await client.create(CONFIG_MAPS, config_map("kueue-system", "kueue-manager-config", FAIR))
    found = await read_running_config(client)
    assert (found.source, found.name) == ("configMap", "kueue-system/kueue-manager-config")
    assert found.scheduler.fair_sharing is not None


async def test_pykueue_up_records_what_it_runs_with_and_replaces_an_earlier_start() -> None:
    client = LocalClient(make_registry())
    await _record_configuration(client, EmbeddedOptions())
    found = await read_running_config(client)
    assert (found.source, found.name) == ("configMap", "kueue-system/pykueue-manager-config")
    assert found.config == embedded_default()
    # a restart with a Configuration naming another namespace: the earlier one does not linger
    elsewhere = FAIR + "namespace: platform\n"
    await _record_configuration(client, EmbeddedOptions(config=load_config(elsewhere), config_text=elsewhere))
    found = await read_running_config(client)
    assert (found.source, found.name) == ("configMap", "platform/pykueue-manager-config")
    assert found.scheduler.fair_sharing is not None
    assert (await client.get(CONFIG_MAPS, "pykueue-manager-config", "platform"))["data"] == {
        "controller_manager_config.yaml": elsewhere
    }


class _KueuectlCluster:
    """The kueuectl connection's two calls the lookup makes, over ``cluster_of``-style answers."""

    def __init__(self, answer_for: Callable[[Lookup], Answer]) -> None:
        self.answer_for = answer_for

    def _answer(self, lookup: Lookup) -> list[dict[str, Any]]:
        answer = self.answer_for(lookup)
        if answer.status != 200:
            raise ApiFailure(answer.status, "Forbidden" if answer.status == 403 else "NotFound", "refused")
        return answer.items

    def list_all(self, path: str, *, query: dict[str, str]) -> list[dict[str, Any]]:
        assert path == "/api/v1/configmaps"
        return self._answer(Lookup(query["fieldSelector"].removeprefix("metadata.name=")))

    def request(self, method: str, path: str) -> dict[str, Any]:
        _, _, namespace, _, name = path.strip("/").split("/")[1:]
        (found,) = self._answer(Lookup(name, namespace))
        return found


def test_explain_drives_the_lookup_over_the_kubectl_connection() -> None:
    held = config_map("kueue-system", "kueue-manager-config", FAIR)
    found = running_config(_KueuectlCluster(cluster_of(held, list_status=403)))  # type: ignore[arg-type]
    assert (found.source, found.name) == ("configMap", "kueue-system/kueue-manager-config")
    refused = running_config(
        _KueuectlCluster(cluster_of(list_status=403, forbidden=("kueue-system/kueue-manager-config",)))  # type: ignore[arg-type]
    )
    assert (
        refused.why_defaults
        == "no Configuration readable: not allowed to read ConfigMap kueue-system/kueue-manager-config"
    )
    broken = config_map("kueue-system", "kueue-manager-config", "fairSharing: 3\n")
    with pytest.raises(CommandError) as err:
        running_config(_KueuectlCluster(cluster_of(broken)))  # type: ignore[arg-type]
    assert str(err.value) == (
        "error: ConfigMap kueue-system/kueue-manager-config: invalid Configuration: fairSharing: must be a mapping"
    )
