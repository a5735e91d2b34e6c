"""Running a command's work under cProfile on the CPU clock, for ``--profile`` options.

Why the CPU clock: the machine pykueue is measured on is shared, so wall time would charge each
function for the time other processes held the core; the process's own CPU time does not.

Who calls it: ``pykueue up --profile`` (the whole server: API server, store and in-process
controllers) and ``pykueue bench scheduler --virtual-time --profile`` (the simulation). The stats
file is written even when the run ends by an exception or Ctrl-C, so an interrupted server still
leaves its profile.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

__all__ = ["profiled"]

_T = TypeVar("_T")


def profiled(path: Path, run: Callable[[], _T], echo: Callable[[str], None] | None = None, top: int = 25) -> _T:
    """``run()`` under cProfile; its stats go to ``path`` (``python -m pstats path`` reads them), and
    with ``echo`` the ``top`` functions by cumulative time are printed through it."""
    import cProfile
    import io
    import pstats
    import time

    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    try:
        return run()
    finally:
        profiler.disable()
        profiler.dump_stats(str(path))
        if echo is not None:
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(top)
            echo(text.getvalue().rstrip())
            echo(f"cProfile stats: {path} (python -m pstats {path})")
