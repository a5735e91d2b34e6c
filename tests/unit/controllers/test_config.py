"""KueueConfig: Kueue's defaults, YAML loading, and validation errors with field paths."""

from __future__ import annotations

import pytest

from pykueue.controllers.config import ConfigError, KueueConfig, load_config


def test_defaults_match_kueue_v1beta2() -> None:
    cfg = KueueConfig()
    assert cfg.manage_jobs_without_queue_name is False
    assert cfg.wait_for_pods_ready.enable is True
    assert cfg.wait_for_pods_ready.timeout_seconds == 1800
    assert cfg.wait_for_pods_ready.recovery_timeout == 1800
    assert cfg.wait_for_pods_ready.requeuing_strategy.backoff_base_seconds == 60
    assert cfg.wait_for_pods_ready.requeuing_strategy.backoff_max_seconds == 3600
    assert cfg.wait_for_pods_ready.requeuing_strategy.backoff_limit_count is None
    assert cfg.fair_sharing is None
    assert cfg.integrations.frameworks == ("batch/job",)
    sel = cfg.managed_jobs_namespace_selector
    assert not sel.matches({"kubernetes.io/metadata.name": "kube-system"})
    assert not sel.matches({"kubernetes.io/metadata.name": "kueue-system"})
    assert sel.matches({"kubernetes.io/metadata.name": "team-a"})


def test_empty_document_is_the_default() -> None:
    assert load_config("") == KueueConfig()


def test_full_document() -> None:
    cfg = load_config("""
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: queues
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {team: a}
waitForPodsReady:
  timeout: 5m
  recoveryTimeout: 90s
  blockAdmission: true
  requeuingStrategy: {timestamp: Creation, backoffBaseSeconds: 10, backoffMaxSeconds: 100, backoffLimitCount: 3}
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
admissionFairSharing: {usageHalfLifeTime: 1h, usageSamplingInterval: 1m, resourceWeights: {cpu: 2}}
integrations:
  frameworks: [batch/job, jobset.x-k8s.io/jobset, pod]
""")
    assert cfg.namespace == "queues"
    assert cfg.manage_jobs_without_queue_name
    assert cfg.managed_jobs_namespace_selector.matches({"team": "a"})
    assert not cfg.managed_jobs_namespace_selector.matches({"team": "b"})
    w = cfg.wait_for_pods_ready
    assert (w.timeout_seconds, w.recovery_timeout, w.block_admission) == (300, 90, True)
    assert w.requeuing_strategy.timestamp == "Creation"
    assert w.requeuing_strategy.backoff_limit_count == 3
    assert cfg.fair_sharing is not None
    assert cfg.fair_sharing.preemption_strategies == ("LessThanInitialShare",)
    assert cfg.admission_fair_sharing is not None
    assert cfg.admission_fair_sharing.usage_half_life_seconds == 3600
    assert cfg.admission_fair_sharing.resource_weights == {"cpu": 2.0}
    assert cfg.integrations.frameworks == ("batch/job", "jobset.x-k8s.io/jobset", "pod")
    assert cfg.scheduler_config().pods_ready_requeue_by_eviction is False


def test_wait_for_pods_ready_can_be_disabled() -> None:
    assert load_config("waitForPodsReady: {enable: false}").wait_for_pods_ready.enable is False


@pytest.mark.parametrize(
    ("text", "path", "fragment"),
    [
        ("kind: Deployment", "kind", "must be Configuration"),
        ("waitForPodsReady: {timeout: soon}", "waitForPodsReady.timeout", "duration"),
        (
            "waitForPodsReady: {requeuingStrategy: {backoffLimitCount: -1}}",
            "waitForPodsReady.requeuingStrategy.backoffLimitCount",
            ">= 0",
        ),
        (
            "waitForPodsReady: {requeuingStrategy: {timestamp: Later}}",
            "waitForPodsReady.requeuingStrategy.timestamp",
            "Eviction",
        ),
        ("fairSharing: {preemptionStrategies: [Whatever]}", "fairSharing.preemptionStrategies", "must be one of"),
        ("integrations: {frameworks: [example.com/notakind]}", "integrations.frameworks[0]", "unsupported framework"),
        ("tls: {minVersion: VersionTLS99}", "tls.minVersion", "unsupported TLS version"),
        ("tls: {cipherSuites: [TLS_NOT_A_SUITE]}", "tls.cipherSuites[0]", "unsupported cipher suite"),
        ("tls: {minVersion: VersionTLS12, maxVersion: VersionTLS13}", "tls.maxVersion", "unknown field"),
        ("manageJobsWithoutQueueName: yes-please", "manageJobsWithoutQueueName", "true or false"),
        (
            "managedJobsNamespaceSelector: {matchExpressions: [{key: a, operator: Near}]}",
            "managedJobsNamespaceSelector.matchExpressions[0].operator",
            "must be one of",
        ),
        ("surprise: 1", "surprise", "unknown field"),
        ("[1, 2]", "<root>", "mapping"),
        ("a: [", "<root>", "not valid YAML"),
    ],
)
def test_errors_name_the_field(text: str, path: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(text)
    assert any(p == path and fragment in msg for p, msg in info.value.errors), info.value.errors
    assert path in str(info.value)


def test_all_errors_are_reported_together() -> None:
    with pytest.raises(ConfigError) as info:
        load_config("kind: X\nwaitForPodsReady: {timeout: never}\n")
    assert {p for p, _ in info.value.errors} == {"kind", "waitForPodsReady.timeout"}


def test_v1beta1_documents_need_explicit_enable() -> None:
    old = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
    assert load_config(old).wait_for_pods_ready.enable is False
    assert load_config(old + "waitForPodsReady: {enable: true, timeout: 1m}").wait_for_pods_ready.enable is True
    assert load_config(old + "fairSharing: {}").fair_sharing is None
    assert load_config(old + "fairSharing: {enable: true}").fair_sharing is not None
    assert load_config("fairSharing: {}").fair_sharing is not None


def test_object_retention_after_finished() -> None:
    cfg = load_config("objectRetentionPolicies: {workloads: {afterFinished: 1h}}")
    assert cfg.retain_finished_workloads_seconds == 3600
    assert KueueConfig().retain_finished_workloads_seconds is None
    with pytest.raises(ConfigError) as info:
        load_config("objectRetentionPolicies: {workloads: {afterFinished: later}}")
    assert info.value.errors[0][0] == "objectRetentionPolicies.workloads.afterFinished"


KUEUE_SHIPPED = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health: {healthProbeBindAddress: ":8081"}
metrics: {bindAddress: ":8443"}
webhook: {port: 9443}
leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io}
controller: {groupKindConcurrency: {Job.batch: 5}}
clientConnection: {qps: 50, burst: 100}
pprofBindAddress: ":8083"
integrations:
  frameworks:
  - "batch/job"
  - "kubeflow.org/mpijob"
  - "ray.io/rayjob"
  - "ray.io/rayservice"
  - "ray.io/raycluster"
  - "jobset.x-k8s.io/jobset"
  - "workload.codeflare.dev/appwrapper"
  - "trainer.kubeflow.org/trainjob"
  - "pod"
  - "deployment"
  - "statefulset"
  - "leaderworkerset.x-k8s.io/leaderworkerset"
  - "kubeflow.org/paddlejob"
  - "kubeflow.org/pytorchjob"
  - "kubeflow.org/tfjob"
  - "kubeflow.org/xgboostjob"
  - "kubeflow.org/jaxjob"
  - "sparkoperator.k8s.io/sparkapplication"
tls:
  minVersion: VersionTLS13
  cipherSuites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]
"""


def test_kueues_shipped_configuration_loads_and_names_what_pykueue_does_not_implement() -> None:
    cfg = load_config(KUEUE_SHIPPED)
    assert cfg.integrations.frameworks == ("batch/job", "jobset.x-k8s.io/jobset", "pod")
    assert cfg.integrations.not_implemented == (
        "kubeflow.org/mpijob",
        "ray.io/rayjob",
        "ray.io/rayservice",
        "ray.io/raycluster",
        "workload.codeflare.dev/appwrapper",
        "trainer.kubeflow.org/trainjob",
        "deployment",
        "statefulset",
        "leaderworkerset.x-k8s.io/leaderworkerset",
        "kubeflow.org/paddlejob",
        "kubeflow.org/pytorchjob",
        "kubeflow.org/tfjob",
        "kubeflow.org/xgboostjob",
        "kubeflow.org/jaxjob",
        "sparkoperator.k8s.io/sparkapplication",
    )
    assert cfg.tls.min_version == "VersionTLS13"
    assert cfg.tls.cipher_suites == ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256")


def test_tls_options_restrict_the_server_context() -> None:
    import ssl

    from pykueue.apiserver.tls_options import TLSOptions

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    TLSOptions(min_version="VersionTLS12", cipher_suites=("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",)).apply(context)
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    tls12 = [c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"]
    assert tls12 == ["ECDHE-ECDSA-AES256-GCM-SHA384"]


def test_up_without_config_queues_jobs_jobsets_and_pod_groups() -> None:
    from pykueue.controllers.config import embedded_default

    assert embedded_default().integrations.frameworks == ("batch/job", "jobset.x-k8s.io/jobset", "pod")
    assert KueueConfig().integrations.frameworks == ("batch/job",)  # Kueue's code default, unchanged


def test_cipher_suites_this_openssl_lacks_fail_at_load_not_at_start() -> None:
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).set_ciphers("DES-CBC3-SHA")
    except ssl.SSLError:
        pass
    else:
        pytest.skip("this OpenSSL still offers 3DES")
    with pytest.raises(ConfigError) as info:
        load_config("tls: {cipherSuites: [TLS_RSA_WITH_3DES_EDE_CBC_SHA]}")
    assert info.value.errors == [
        ("tls.cipherSuites", "none of these cipher suites is available in this Python's OpenSSL")
    ]
