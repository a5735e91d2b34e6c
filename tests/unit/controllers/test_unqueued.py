"""The NotQueued warning's wording: which of the three reasons a labelled object is not queued."""

from __future__ import annotations

from pykueue.api.meta.kind_info import KindInfo
from pykueue.controllers.unqueued import unqueued_message


def _kind(group: str, kind: str) -> KindInfo:
    return KindInfo(
        group=group, kind=kind, plural=kind.lower() + "s", singular=kind.lower(), versions=("v1",), namespaced=True
    )


def test_an_enabled_integration_queues_its_kind() -> None:
    assert unqueued_message(_kind("batch", "Job"), frozenset({"batch/job"})) is None


def test_a_disabled_integration_says_how_to_enable_it() -> None:
    message = unqueued_message(_kind("jobset.x-k8s.io", "JobSet"), frozenset({"batch/job"}))
    assert message is not None
    assert '"jobset.x-k8s.io/jobset" integration is not enabled' in message
    assert 'add "jobset.x-k8s.io/jobset" to integrations.frameworks' in message


def test_a_kueue_integration_pykueue_lacks_is_named() -> None:
    message = unqueued_message(_kind("apps", "Deployment"), frozenset({"batch/job"}))
    assert message is not None
    assert 'Kueue\'s "deployment" integration is not implemented by pykueue' in message
    assert "runs outside every quota" in message


def test_a_kind_no_integration_queues() -> None:
    message = unqueued_message(_kind("", "ConfigMap"), frozenset({"batch/job"}))
    assert message is not None
    assert "no Kueue integration queues ConfigMap objects" in message
