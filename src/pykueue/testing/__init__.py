"""Public test helpers: object builders and the scheduling-scenario runner.

``make_cluster_queue("cq").cohort("team").quota("default", "cpu", 4).obj()`` returns the dict a user
would ``kubectl apply``; ``load_scenario_file`` + ``run_scenario`` check a YAML scenario (objects in,
expected admissions / pending reasons / preemptions out) against the scheduler engine.
"""

from pykueue.testing.builders import (
    ClusterQueueBuilder,
    CohortBuilder,
    FlavorBuilder,
    LocalQueueBuilder,
    WorkloadBuilder,
    make_cluster_queue,
    make_cohort,
    make_flavor,
    make_local_queue,
    make_namespace,
    make_workload,
)
from pykueue.testing.scenario_checks import run_scenario
from pykueue.testing.scenario_driver import ScenarioDriver, workload_state
from pykueue.testing.scenario_format import (
    Scenario,
    ScenarioFormatError,
    load_scenario_dir,
    load_scenario_file,
)

__all__ = [
    "ClusterQueueBuilder",
    "CohortBuilder",
    "FlavorBuilder",
    "LocalQueueBuilder",
    "Scenario",
    "ScenarioDriver",
    "ScenarioFormatError",
    "WorkloadBuilder",
    "load_scenario_dir",
    "load_scenario_file",
    "make_cluster_queue",
    "make_cohort",
    "make_flavor",
    "make_local_queue",
    "make_namespace",
    "make_workload",
    "run_scenario",
    "workload_state",
]
