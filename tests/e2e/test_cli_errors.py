"""``pykueue up`` refuses bad input with one line and a non-zero exit, before serving anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.harness import Pykueue


def _up(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pykueue", "up", "--port", "0", *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("file_name", "content", "option", "message"),
    [
        (
            "config.yaml",
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady:\n  timeout: banana\n",
            "--config",
            'waitForPodsReady.timeout: must be a duration like "5m"',
        ),
        (
            "nodes.yaml",
            "nodes:\n  - name: x\n    kind: weird\n",
            "--nodes",
            "nodes[0].kind: must be 'process' or 'simulated'",
        ),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, file_name: str, content: str, option: str, message: str) -> None:
    path = tmp_path / file_name
    path.write_text(content)
    result = _up(option, str(path), "--kubeconfig", str(tmp_path / "kc"))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "kc").exists()


def test_a_data_dir_serves_one_pykueue_at_a_time(tmp_path: Path) -> None:
    first = Pykueue(tmp_path / "data", tmp_path / "kc", ["--no-kueue"]).start()
    try:
        second = _up("--data-dir", str(tmp_path / "data"), "--kubeconfig", str(tmp_path / "kc2"), "--no-kueue")
        assert second.returncode == 1
        assert "in use by another store" in second.stderr
        assert "Traceback" not in second.stderr
        assert not (tmp_path / "kc2").exists()
        first.kubectl("get", "ns", "default")  # the first one is unharmed
    finally:
        first.stop()


def test_an_unknown_controllers_mode_is_a_one_line_error(tmp_path: Path) -> None:
    result = _up("--controllers", "elsewhere", "--kubeconfig", str(tmp_path / "kc"))
    assert result.returncode == 2
    assert "--controllers 'elsewhere': use 'in-process' or 'process'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "kc").exists()
