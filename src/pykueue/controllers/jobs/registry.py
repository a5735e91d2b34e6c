"""The literal registry of job integrations, keyed by Kueue's framework name.

Adding an integration = one module implementing :class:`~pykueue.controllers.jobs.framework.GenericJob`
plus one line here. ``integrations.frameworks`` in the configuration picks which ones run.
"""

from __future__ import annotations

from pykueue.controllers.jobs import job, jobset, pod
from pykueue.controllers.jobs.framework import Integration

__all__ = ["INTEGRATIONS", "enabled"]

INTEGRATIONS: dict[str, Integration] = {
    job.INTEGRATION.name: job.INTEGRATION,
    jobset.INTEGRATION.name: jobset.INTEGRATION,
    pod.INTEGRATION.name: pod.INTEGRATION,
}


def enabled(frameworks: tuple[str, ...]) -> list[Integration]:
    return [INTEGRATIONS[name] for name in frameworks if name in INTEGRATIONS]
