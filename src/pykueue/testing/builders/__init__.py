"""The builder library for tests: Kueue and core objects as plain dicts, valid or on purpose not.

Three modules, one per way a test states its objects:

- :mod:`pykueue.testing.builders.fluent`: typed fluent builders that only build valid objects
  (``make_cluster_queue("cq").cohort("team").quota("default", "cpu", 4).obj()``); re-exported here.
- :mod:`pykueue.testing.builders.scheduler_shortcuts`: one-call dict shortcuts and ``make_scheduler``
  for the scheduler engine's table tests.
- :mod:`pykueue.testing.builders.raw_specs`: raw-spec dicts for validation tests, which must be able
  to build invalid objects, and ``check`` (default then validate, as a write does).
"""

from pykueue.testing.builders.fluent import (
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

__all__ = [
    "ClusterQueueBuilder",
    "CohortBuilder",
    "FlavorBuilder",
    "LocalQueueBuilder",
    "WorkloadBuilder",
    "make_cluster_queue",
    "make_cohort",
    "make_flavor",
    "make_local_queue",
    "make_namespace",
    "make_workload",
]
