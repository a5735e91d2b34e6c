"""Benchmarks of pykueue's own parts, measured in process (``pykueue bench ...``).

``core``: the scheduler engine's admission decisions per second as queues grow, and Kueue's
baseline performance shape driven in virtual time.
"""

from pykueue.bench.core import BaselineResult, ScaleResult, run_baseline, run_core, run_scale

__all__ = ["BaselineResult", "ScaleResult", "run_baseline", "run_core", "run_scale"]
