"""The checker: a run's ``summary.yaml`` against a Kueue ``rangespec.yaml``.

Owns the range rules of Kueue's checker: ``cmd.maxWallMs`` ≥ wallMs;
``clusterQueueClassesMinUsage.<class>`` ≤ ΣcpuUsed·100 / (ΣnominalQuota·(last − first));
``wlClassesMaxAvgTimeToAdmissionMs.<class>`` ≥ averageTimeToAdmissionMs. As in Kueue, a class in
the summary without a range is a violation ("unexpected class"), and so is a ranged class the
summary lacks.

Who calls it: the CLI (``--check``), the Makefile's ``bench-check``, the tests.
Invariant: every violated range yields one message naming it; an empty list means pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pykueue.bench.scheduler.config import ConfigError

__all__ = ["RangeSpec", "check_summary", "load_rangespec", "load_summary"]

RangeSpec = dict[str, Any]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def load_rangespec(path: str | Path) -> RangeSpec:
    """Read and validate a rangespec; raises :class:`ConfigError` naming each bad field."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except OSError as exc:
        raise ConfigError(str(p), [f"cannot read: {exc.strerror or exc}"], "rangespec") from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(p), [f"not valid YAML: {exc}"], "rangespec") from None
    problems: list[str] = []
    if not isinstance(data, dict):
        raise ConfigError(str(p), ["rangespec: must be a mapping"], "rangespec")
    known = {"cmd", "clusterQueueClassesMinUsage", "wlClassesMaxAvgTimeToAdmissionMs"}
    problems += [f"{k}: unknown field (expected one of {', '.join(sorted(known))})" for k in data if k not in known]
    for section in sorted(known):
        value = data.get(section, {})
        if value is None:
            data[section] = value = {}
        if not isinstance(value, dict):
            problems.append(f"{section}: must be a mapping")
            continue
        for key, limit in value.items():
            if section == "cmd" and key not in ("maxWallMs", "maxUserMs", "maxSysMs", "maxrss"):
                problems.append(f"cmd.{key}: unknown field")
            elif not _number(limit):
                problems.append(f"{section}.{key}: must be a non-negative number")
    if problems:
        raise ConfigError(str(p), problems, "rangespec")
    return data


def load_summary(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(str(p), [f"cannot read: {exc}"], "summary") from None
    if not isinstance(data, dict):
        raise ConfigError(str(p), ["summary: must be a mapping"], "summary")
    return data


def check_summary(summary: dict[str, Any], spec: RangeSpec) -> list[str]:
    """Messages for every violated range (empty: the run is within its ranges)."""
    out: list[str] = []
    cmd = spec.get("cmd") or {}
    if "maxWallMs" in cmd:
        wall = summary.get("wallMs")
        if not _number(wall):
            out.append("cmd.maxWallMs: the summary has no wallMs")
        elif wall > cmd["maxWallMs"]:
            out.append(f"cmd.maxWallMs: wall time {wall:.0f} ms is more than the allowed {cmd['maxWallMs']} ms")
    usage_ranges = spec.get("clusterQueueClassesMinUsage") or {}
    cq_classes = summary.get("clusterQueueClasses") or {}
    for cls, s in sorted(cq_classes.items()):
        if cls not in usage_ranges:
            out.append(f"clusterQueueClassesMinUsage.{cls}: unexpected ClusterQueue class (no range for it)")
            continue
        span = s.get("lastEventMs", 0) - s.get("firstEventMs", 0)
        quota = s.get("nominalQuota", 0)
        usage = s.get("cpuUsed", 0) * 100 / (quota * span) if span > 0 and quota else 0.0
        if usage < usage_ranges[cls]:
            out.append(
                f"clusterQueueClassesMinUsage.{cls}: usage {usage:.2f}% is less than the expected {usage_ranges[cls]}%"
            )
    out += [
        f"clusterQueueClassesMinUsage.{cls}: class missing from the summary"
        for cls in sorted(usage_ranges)
        if cls not in cq_classes
    ]
    wait_ranges = spec.get("wlClassesMaxAvgTimeToAdmissionMs") or {}
    wl_classes = summary.get("workloadClasses") or {}
    for cls, s in sorted(wl_classes.items()):
        if cls not in wait_ranges:
            out.append(f"wlClassesMaxAvgTimeToAdmissionMs.{cls}: unexpected workload class (no range for it)")
            continue
        avg = s.get("averageTimeToAdmissionMs", 0)
        if avg > wait_ranges[cls]:
            out.append(
                f"wlClassesMaxAvgTimeToAdmissionMs.{cls}: average wait for admission {avg} ms is more than "
                f"the expected {wait_ranges[cls]} ms"
            )
    out += [
        f"wlClassesMaxAvgTimeToAdmissionMs.{cls}: class missing from the summary"
        for cls in sorted(wait_ranges)
        if cls not in wl_classes
    ]
    return out
