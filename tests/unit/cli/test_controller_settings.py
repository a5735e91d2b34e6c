"""The cluster-mode sections of Kueue's Configuration that ``pykueue controller`` reads."""

from __future__ import annotations

import pytest

from pykueue.cli.controller_settings import ClusterSettings, parse_duration, read_settings


def test_durations_as_go_writes_them() -> None:
    assert parse_duration("15s", "x") == 15.0
    assert parse_duration("1m30s", "x") == 90.0
    assert parse_duration("500ms", "x") == 0.5
    for bad in ("", "15", "fifteen", "15 s", "-1s"):
        with pytest.raises(ValueError, match="x: "):
            parse_duration(bad, "x")


def test_defaults_and_kueues_fields() -> None:
    assert read_settings({}) == ClusterSettings()
    settings = read_settings(
        {
            "clientConnection": {"qps": 20, "burst": 30},
            "leaderElection": {
                "leaderElect": False,
                "leaseDuration": "30s",
                "renewDeadline": "20s",
                "retryPeriod": "5s",
                "resourceName": "my-lease",
            },
            "internalCertManagement": {"enable": False, "webhookServiceName": "svc"},
            "health": {"healthProbeBindAddress": ":9081"},
            "metrics": {"bindAddress": "0.0.0.0:9443"},
            "webhook": {"port": 10443},
        }
    )
    assert (settings.qps, settings.burst) == (20.0, 30)
    assert not settings.leader_elect
    assert settings.lease_name == "my-lease"
    assert (settings.lease_duration, settings.renew_deadline, settings.retry_period) == (30.0, 20.0, 5.0)
    assert not settings.internal_certs
    assert settings.service_name == "svc"
    assert (settings.health_port, settings.metrics_port, settings.webhook_port) == (9081, 9443, 10443)
    assert settings.metrics_host == "0.0.0.0"


@pytest.mark.parametrize(
    ("address", "host", "port"),
    [(":8443", "", 8443), ("127.0.0.1:9000", "127.0.0.1", 9000), ("[::1]:8443", "::1", 8443), (None, "", 8443)],
)
def test_the_metrics_bind_address_gives_host_and_port(address: str | None, host: str, port: int) -> None:
    settings = read_settings({"metrics": {"bindAddress": address}} if address is not None else {})
    assert (settings.metrics_host, settings.metrics_port) == (host, port)


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"clientConnection": {"qps": "fast"}}, "clientConnection.qps"),
        ({"clientConnection": []}, "clientConnection"),
        ({"leaderElection": {"leaseDuration": "soon"}}, "leaderElection.leaseDuration"),
        ({"health": {"healthProbeBindAddress": "here"}}, "health.healthProbeBindAddress"),
        ({"leaderElection": {"leaderElect": "yes"}}, "leaderElection.leaderElect"),
    ],
)
def test_bad_fields_are_named(doc: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        read_settings(doc)
