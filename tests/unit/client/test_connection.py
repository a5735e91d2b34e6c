"""Connection settings through the official kubeconfig loader, and client-side QPS/burst."""

from __future__ import annotations

import asyncio
import base64
import stat
import types
from pathlib import Path

import pytest

from pykueue.client.connection import load_connection
from pykueue.client.ratelimit import TokenBucket
from pykueue.webhooks.certs import new_bundle

CLUSTER = """
apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {{server: "https://127.0.0.1:6443/", certificate-authority-data: {ca}}}
users:
- name: static
  user: {{token: static-token}}
contexts:
- name: main
  context: {{cluster: c1, user: static, namespace: team-a}}
current-context: main
"""

PLUGIN_USER = """
apiVersion: v1
kind: Config
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: {plugin}
      interactiveMode: Never
contexts:
- name: cloud
  context: {{cluster: c1, user: plugin}}
"""


@pytest.fixture
def kubeconfigs(tmp_path: Path) -> tuple[Path, Path, Path]:
    ca = new_bundle(("127.0.0.1",)).ca_crt
    first = tmp_path / "cluster.yaml"
    first.write_text(CLUSTER.format(ca=base64.b64encode(ca).decode()))
    counter = tmp_path / "calls"
    plugin = tmp_path / "plugin.sh"
    plugin.write_text(
        f"#!/bin/sh\necho x >> {counter}\n"
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        '"status":{"token":"plugin-token"}}\'\n'
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    second = tmp_path / "plugin.yaml"
    second.write_text(PLUGIN_USER.format(plugin=plugin))
    return first, second, counter


def test_a_kubeconfig_file_with_its_context_namespace_and_ca(kubeconfigs: tuple[Path, Path, Path]) -> None:
    first, _, _ = kubeconfigs
    conn = load_connection(first)
    assert conn.server == "https://127.0.0.1:6443"
    assert conn.token == "static-token"
    assert conn.namespace == "team-a"
    assert conn.ca_data is not None
    assert conn.ca_data.startswith(b"-----BEGIN CERTIFICATE-----")
    assert conn.auth is not None
    assert conn.auth() == "Bearer static-token"


def test_merged_kubeconfig_list_and_an_exec_plugin(
    kubeconfigs: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, counter = kubeconfigs
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    conn = load_connection(None, context="cloud")  # the context of one file, the cluster of the other
    assert conn.server == "https://127.0.0.1:6443"
    assert conn.namespace == "default"
    assert conn.token == "plugin-token"
    assert counter.read_text().count("x") >= 1  # the plugin really ran
    assert load_connection(None).token == "static-token"  # the first file's current-context


def test_kubeconfig_problems_are_one_line(tmp_path: Path, kubeconfigs: tuple[Path, Path, Path]) -> None:
    with pytest.raises(ValueError, match="no such file"):
        load_connection(tmp_path / "absent")
    with pytest.raises(ValueError, match="kubeconfig") as bad_context:
        load_connection(kubeconfigs[0], context="nope")
    assert "nope" in str(bad_context.value)
    assert "\n" not in str(bad_context.value)
    junk = tmp_path / "junk"
    junk.write_text("{{{ not yaml")
    with pytest.raises(ValueError, match="kubeconfig") as unreadable:
        load_connection(junk)
    assert "\n" not in str(unreadable.value)


def test_token_bucket_allows_a_burst_then_paces_at_qps() -> None:
    now = [0.0]
    bucket = TokenBucket(10.0, 3, clock=lambda: now[0])
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() == pytest.approx(0.1)
    assert bucket.reserve() == pytest.approx(0.2)  # waiting requests queue up in order
    now[0] = 10.0  # a long pause refills, but never beyond the burst
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() > 0
    with pytest.raises(ValueError, match="qps must be positive"):
        TokenBucket(0, 1)


async def test_token_bucket_acquire_waits() -> None:
    bucket = TokenBucket(50.0, 1)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(3):
        await bucket.acquire()
    assert loop.time() - start >= 2 / 50 * 0.9  # two of the three waited one period each


def test_in_cluster_token_is_reread_as_it_rotates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime as dt

    from kubernetes.config import incluster_config

    from pykueue.client import connection

    (tmp_path / "token").write_text("first-token")
    (tmp_path / "ca.crt").write_bytes(new_bundle(("127.0.0.1",)).ca_crt)
    (tmp_path / "namespace").write_text("pykueue-system\n")
    monkeypatch.setattr(connection, "_SA_DIR", tmp_path)
    monkeypatch.setattr(connection, "AUTH_REFRESH_S", 0.0)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config: in-cluster
    conn = load_connection(None)
    assert conn.server == "https://10.96.0.1:443"
    assert conn.namespace == "pykueue-system"
    assert conn.token == "first-token"
    assert conn.auth is not None
    (tmp_path / "token").write_text("rotated-token")  # the kubelet rotates the bound token
    assert conn.auth() == "bearer first-token"  # the loader keeps a read token for its refresh period

    real = dt.datetime

    class Later(dt.datetime):  # two minutes on: past the loader's one-minute refresh period
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> Later:
            return cls.fromtimestamp(real.now(tz).timestamp() + 120, tz)

    monkeypatch.setattr(incluster_config, "datetime", types.SimpleNamespace(datetime=Later, timedelta=dt.timedelta))
    assert conn.auth() == "bearer rotated-token"
