"""``pykueue bench scheduler``: Kueue's scheduler performance test, run on pykueue.

Modules, one job each: ``config`` (Kueue's generator format -> an expanded plan), ``bound`` (the
theoretical lower bound of the wall time), ``objects`` (the API objects the generator creates),
``recorder`` (Kueue's measured quantities), ``virtual`` (the engine driven in virtual time),
``realtime`` (a real ``pykueue up`` driven over HTTP, with the runner), ``report``
(``summary.yaml``), ``check`` (Kueue's rangespec checker), ``growth`` (cost at 1x/2x/4x).
"""

from pykueue.bench.scheduler.bound import Bound, theoretical_bound
from pykueue.bench.scheduler.check import check_summary, load_rangespec, load_summary
from pykueue.bench.scheduler.config import ConfigError, GeneratorConfig, Plan, expand, load_config, parse_config
from pykueue.bench.scheduler.recorder import CQSample, Recorder
from pykueue.bench.scheduler.virtual import SimResult, simulate

__all__ = [
    "Bound",
    "CQSample",
    "ConfigError",
    "GeneratorConfig",
    "Plan",
    "Recorder",
    "SimResult",
    "check_summary",
    "expand",
    "load_config",
    "load_rangespec",
    "load_summary",
    "parse_config",
    "simulate",
    "theoretical_bound",
]
