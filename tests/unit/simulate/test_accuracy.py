"""ETA accuracy measured on a replay: with exact runtimes and no later arrival jumping the queue, each
prediction made at a submission equals the replayed admission; with runtimes from history it need not."""

from __future__ import annotations

from pathlib import Path

from pykueue.simulate.accuracy import measure
from pykueue.simulate.generic import read_jsonl
from pykueue.simulate.objects import load_objects
from pykueue.simulate.replay import replay


def test_exact_runtimes_predict_the_replayed_start(objects_file: Path, ten_task_trace: Path) -> None:
    result = replay(load_objects([objects_file]), read_jsonl(ten_task_trace))
    exact, history = measure(result, samples=100)
    assert (exact.mode, history.mode) == ("exact", "history")
    assert exact.samples == history.samples == 9  # every admitted workload
    assert exact.waited_samples == 5  # t03, t04, t05, t09, t10
    assert (exact.median_abs_error_s, exact.within_25) == (0.0, 1.0)
    # history: t03 is predicted with no finished workload yet (one hour), so it is off
    assert history.within_25 < 1.0
    assert history.as_dict()["mode"] == "history"


def test_waited_only_samples(objects_file: Path, ten_task_trace: Path) -> None:
    result = replay(load_objects([objects_file]), read_jsonl(ten_task_trace))
    [exact] = measure(result, samples=100, modes=("exact",), waited_only=True)
    assert exact.samples == exact.waited_samples == 5
