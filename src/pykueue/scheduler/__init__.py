"""pykueue's scheduler engine: pure, synchronous, driven by events (docs/scheduler-api.md).

Public surface: ``Scheduler`` and its settings and decision records. Everything else in this
package is private and may change.
"""

from pykueue.api.meta.clock import Clock, ManualClock, SystemClock

from .engine import Scheduler
from .types import (
    AdmissionFairSharingConfig,
    Admit,
    CycleResult,
    FairSharingConfig,
    InvalidObject,
    Pending,
    PendingInfo,
    Preempt,
    QueueUsage,
    ResourceTransformation,
    SchedulerConfig,
    SchedulerStats,
)

__all__ = [
    "AdmissionFairSharingConfig",
    "Admit",
    "Clock",
    "CycleResult",
    "FairSharingConfig",
    "InvalidObject",
    "ManualClock",
    "Pending",
    "PendingInfo",
    "Preempt",
    "QueueUsage",
    "ResourceTransformation",
    "Scheduler",
    "SchedulerConfig",
    "SchedulerStats",
    "SystemClock",
]
