"""``pykueue install`` renders what a cluster needs: webhooks for exactly the admission hooks the code
has, the Deployment's hardening, the Configuration, certificate management, and fails closed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pykueue.api.meta.clock import ManualClock
from pykueue.client import LocalClient
from pykueue.controllers.config import embedded_default
from pykueue.controllers.manager import ControllerManager
from pykueue.install import install_options, render
from pykueue.install.chart_files import chart_files
from pykueue.registry import Registry
from pykueue.store import Store

REPO = Path(__file__).resolve().parents[3]
JSONDict = dict[str, Any]


def _by_kind(objects: list[JSONDict], kind: str) -> list[JSONDict]:
    return [o for o in objects if o["kind"] == kind]


def _one(objects: list[JSONDict], kind: str) -> JSONDict:
    (found,) = _by_kind(objects, kind)
    return found


def _webhooks(objects: list[JSONDict]) -> dict[str, JSONDict]:
    return {
        w["name"]: w
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
        for w in _one(objects, kind)["webhooks"]
    }


def test_one_webhook_per_admission_hook_the_controllers_install() -> None:
    """Every hook the embedded server installs that mutates or validates has its webhook, for its resource."""
    manager = ControllerManager(LocalClient(Registry(Store(None), clock=ManualClock())), embedded_default())
    hooks = [h for h in manager.admission_hooks() if h.mutate is not None or h.validate is not None]
    webhooks = _webhooks(render(install_options()))
    for hook in hooks:
        kind = "mutating" if hook.mutate is not None else "validating"
        serving = [
            w
            for w in webhooks.values()
            if ("reinvocationPolicy" in w) == (kind == "mutating")
            and {f"{r}.{rule['apiGroups'][0]}".strip(".") for rule in w["rules"] for r in rule["resources"]}
            >= set(hook.resources)
        ]
        assert serving, f"no {kind} webhook for hook {hook.name} on {sorted(hook.resources)}"
    # the kind rules that deny as Kueue's validating webhooks
    assert {"vclusterqueue.kb.io", "vcohort.kb.io", "vresourceflavor.kb.io", "vworkload.kb.io"} <= set(webhooks)
    assert webhooks["vworkload.kb.io"]["rules"][0]["resources"] == ["workloads", "workloads/status"]
    # Kueue's defaulting webhook of the kind whose defaults go beyond its schema
    assert webhooks["mworkload.kb.io"]["clientConfig"]["service"]["path"] == "/mutate-kueue-x-k8s-io-v1beta2-workload"


def test_webhooks_follow_kueues_paths_selectors_and_fail_closed() -> None:
    webhooks = _webhooks(render(install_options(namespace="queues")))
    assert webhooks["mjob.kb.io"]["clientConfig"] == {
        "service": {
            "name": "pykueue-webhook-service",
            "namespace": "queues",
            "path": "/mutate-batch-v1-job",
            "port": 443,
        }
    }
    assert webhooks["mpod.kb.io"]["clientConfig"]["service"]["path"] == "/mutate--v1-pod"
    assert (
        webhooks["vclusterqueue.kb.io"]["clientConfig"]["service"]["path"]
        == "/validate-kueue-x-k8s-io-v1beta2-clusterqueue"
    )
    for name, webhook in webhooks.items():
        assert webhook["failurePolicy"] == "Fail", name
        assert webhook["sideEffects"] == "None", name
        assert webhook["admissionReviewVersions"] == ["v1"], name
        assert "caBundle" not in webhook["clientConfig"], name  # the controller injects it
    skip = {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "queues"]}
        ]
    }
    for job_webhook in ("mjob.kb.io", "vjob.kb.io", "mjobset.kb.io", "vjobset.kb.io", "mpod.kb.io"):
        assert webhooks[job_webhook]["namespaceSelector"] == skip
    assert "namespaceSelector" not in webhooks["vclusterqueue.kb.io"]


def test_integrations_choose_the_job_webhooks() -> None:
    names = set(_webhooks(render(install_options(integrations=["batch/job"]))))
    assert {"mjob.kb.io", "vjob.kb.io"} <= names
    assert not names & {"mjobset.kb.io", "vjobset.kb.io", "mpod.kb.io"}
    config = _config(render(install_options(integrations=["batch/job"])))
    assert config["integrations"]["frameworks"] == ["batch/job"]


def _config(objects: list[JSONDict]) -> JSONDict:
    data: JSONDict = yaml.safe_load(_one(objects, "ConfigMap")["data"]["controller_manager_config.yaml"])
    return data


def test_crds_convert_through_the_controllers_service() -> None:
    crds = {
        c["metadata"]["name"]: c for c in _by_kind(render(install_options(namespace="q")), "CustomResourceDefinition")
    }
    assert "jobsets.jobset.x-k8s.io" not in crds  # JobSet is installed on its own
    workloads = crds["workloads.kueue.x-k8s.io"]["spec"]
    assert [v["name"] for v in workloads["versions"] if v["storage"]] == ["v1beta2"]
    assert workloads["conversion"]["strategy"] == "Webhook"
    assert workloads["conversion"]["webhook"]["clientConfig"] == {
        "service": {"name": "pykueue-webhook-service", "namespace": "q", "path": "/convert", "port": 443}
    }


def test_the_deployment_is_hardened_and_probed() -> None:
    objects = render(install_options(image="registry.example/pykueue:1.2", replicas=3))
    deployment = _one(objects, "Deployment")
    assert deployment["spec"]["replicas"] == 3
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "pykueue-controller-manager"
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["image"] == "registry.example/pykueue:1.2"
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 8081}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 8081}
    assert container["resources"]["requests"]
    assert container["resources"]["limits"]
    assert container["args"][0] == "controller"
    assert "--config=/etc/pykueue/controller_manager_config.yaml" in container["args"]
    services = {s["metadata"]["name"]: s["spec"]["ports"][0] for s in _by_kind(objects, "Service")}
    assert services["pykueue-webhook-service"]["port"] == 443
    assert services["pykueue-webhook-service"]["targetPort"] == 9443
    metrics = services["pykueue-controller-manager-metrics-service"]
    assert (metrics["name"], metrics["port"], metrics["targetPort"]) == ("https", 8443, 8443)  # Kueue's port name
    assert not any(a.startswith("--metrics-cert-dir") for a in container["args"])  # self-signed, as Kueue's


def test_the_metrics_reader_role_is_shipped_unbound() -> None:
    objects = render(install_options())
    roles = {r["metadata"]["name"]: r for r in _by_kind(objects, "ClusterRole")}
    assert roles["pykueue-metrics-reader"]["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    bound = [b["roleRef"]["name"] for b in _by_kind(objects, "ClusterRoleBinding") + _by_kind(objects, "RoleBinding")]
    assert "pykueue-metrics-reader" not in bound
    manager = roles["pykueue-manager-role"]["rules"]
    assert {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]} in manager
    assert {
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["subjectaccessreviews"],
        "verbs": ["create"],
    } in manager


def test_the_configuration_is_the_users_with_the_install_settings() -> None:
    text = (
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nnamespace: elsewhere\n"
        "manageJobsWithoutQueueName: true\nwaitForPodsReady: {enable: false}\n"
    )
    config = _config(render(install_options(namespace="q", config_text=text)))
    assert config["namespace"] == "q"
    assert config["manageJobsWithoutQueueName"] is True
    assert config["waitForPodsReady"] == {"enable": False}
    assert config["internalCertManagement"]["enable"] is True
    assert config["integrations"]["frameworks"] == ["batch/job", "jobset.x-k8s.io/jobset", "pod"]


def test_a_kueue_configuration_cannot_point_the_controller_away_from_the_manifests() -> None:
    text = (
        "leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io, leaseDuration: 20s}\n"
        "internalCertManagement: {webhookServiceName: kueue-webhook-service, webhookSecretName: kueue-cert}\n"
        "webhook: {port: 9999}\nhealth: {healthProbeBindAddress: ':1'}\nmetrics: {bindAddress: ':2'}\n"
    )
    config = _config(render(install_options(namespace="q", config_text=text)))
    assert config["leaderElection"] == {
        "leaderElect": True,
        "resourceName": "pykueue-controller-leader",
        "leaseDuration": "20s",
        "resourceNamespace": "q",
    }
    assert config["internalCertManagement"] == {
        "enable": True,
        "webhookServiceName": "pykueue-webhook-service",
        "webhookSecretName": "pykueue-webhook-server-cert",
    }
    assert config["webhook"] == {"port": 9443}
    assert config["health"] == {"healthProbeBindAddress": ":8081"}
    assert config["metrics"] == {"bindAddress": ":8443"}


def test_cert_manager_mode() -> None:
    objects = render(install_options(namespace="q", cert_manager=True))
    inject = {"cert-manager.io/inject-ca-from": "q/pykueue-serving-cert"}
    assert _one(objects, "ValidatingWebhookConfiguration")["metadata"]["annotations"] == inject
    assert _one(objects, "MutatingWebhookConfiguration")["metadata"]["annotations"] == inject
    converting = [
        c for c in _by_kind(objects, "CustomResourceDefinition") if c["spec"]["conversion"]["strategy"] == "Webhook"
    ]
    assert converting
    assert all(c["metadata"]["annotations"] == inject for c in converting)
    certificates = {c["metadata"]["name"]: c["spec"] for c in _by_kind(objects, "Certificate")}
    assert certificates["pykueue-serving-cert"]["secretName"] == "pykueue-webhook-server-cert"
    assert certificates["pykueue-serving-cert"]["dnsNames"] == [
        "pykueue-webhook-service.q.svc",
        "pykueue-webhook-service.q.svc.cluster.local",
    ]
    assert certificates["pykueue-metrics-certs"]["secretName"] == "pykueue-metrics-server-cert"
    assert certificates["pykueue-metrics-certs"]["dnsNames"] == [
        "pykueue-controller-manager-metrics-service.q.svc",
        "pykueue-controller-manager-metrics-service.q.svc.cluster.local",
    ]
    assert _one(objects, "Issuer")["spec"] == {"selfSigned": {}}
    pod = _one(objects, "Deployment")["spec"]["template"]["spec"]
    assert {"name": "cert", "secret": {"secretName": "pykueue-webhook-server-cert", "defaultMode": 420}} in pod[
        "volumes"
    ]
    secret = {"secretName": "pykueue-metrics-server-cert", "defaultMode": 420}
    assert {"name": "metrics-cert", "secret": secret} in pod["volumes"]
    (container,) = pod["containers"]
    assert "--metrics-cert-dir=/tmp/k8s-metrics-server/serving-certs" in container["args"]
    mount = {"name": "metrics-cert", "mountPath": "/tmp/k8s-metrics-server/serving-certs", "readOnly": True}
    assert mount in container["volumeMounts"]
    assert _config(objects)["internalCertManagement"]["enable"] is False


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"namespace": "Not_A_Label"}, "--namespace 'Not_A_Label': must be a DNS label"),
        ({"replicas": 0}, "--replicas 0: must be at least 1"),
        ({"integrations": ["kubeflow.org/nope"]}, '--integrations: unsupported framework "kubeflow.org/nope"'),
        (
            {"config_text": "waitForPodsReady: {timeout: soon}"},
            "--config: invalid Configuration: waitForPodsReady.timeout: must be a duration",
        ),
        ({"config_text": "[1, 2"}, "--config: not valid YAML"),
        ({"config_text": "- a list"}, "--config: not a Configuration"),
    ],
)
def test_bad_options_fail_with_the_option_named(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace("[", r"\[")):
        install_options(**kwargs)


def test_the_charts_generated_files_are_current() -> None:
    chart = REPO / "charts" / "pykueue"
    expected = chart_files()
    on_disk = {str(p.relative_to(chart)): p.read_text() for p in (chart / "files").rglob("*.yaml")}
    assert sorted(on_disk) == sorted(expected), "run scripts/update_chart.py"
    stale = [path for path, text in expected.items() if on_disk[path] != text]
    assert stale == [], f"run scripts/update_chart.py: {stale}"
