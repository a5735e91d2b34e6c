"""The command line as people expect it: --version, environment variables, log levels and formats, progress."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from pykueue import __version__
from pykueue.bench.scheduler.progress import ProgressLine, render, wanted
from pykueue.cli.logsetup import configure_logging
from pykueue.cli.main import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_version_flag_prints_the_version_and_exits() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"pykueue {__version__}"


def test_help_shows_environment_variables_and_completion() -> None:
    top = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert "PYKUEUE_LOG_LEVEL" in top.output
    assert "PYKUEUE_LOG_FORMAT" in top.output
    assert "--install-completion" in top.output
    up = runner.invoke(app, ["up", "--help"], env={"COLUMNS": "200"})
    for name in (
        "PYKUEUE_DATA_DIR",
        "PYKUEUE_PORT",
        "PYKUEUE_ADDRESS",
        "PYKUEUE_KUBECONFIG",
        "PYKUEUE_CONFIG",
        "PYKUEUE_NODES",
        "PYKUEUE_CONTROLLERS",
        "PYKUEUE_ACCESS_LOG",
    ):
        assert name in up.output, name


def test_options_are_read_from_the_environment() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pykueue", "up"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYKUEUE_CONTROLLERS": "elsewhere", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 2
    assert "--controllers 'elsewhere': use 'in-process' or 'process'" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "pykueue", "up"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYKUEUE_PORT": "not-a-port", "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )
    assert result.returncode == 2
    assert "Invalid value for '--port' (env var: 'PYKUEUE_PORT')" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_log_options_are_one_line_errors() -> None:
    result = runner.invoke(app, ["--log-level", "loud", "version"])
    assert result.exit_code == 2
    assert "--log-level 'loud': use one of debug, info, warning, error" in result.output
    result = runner.invoke(app, ["version"], env={"PYKUEUE_LOG_FORMAT": "xml"})
    assert result.exit_code == 2
    assert "--log-format 'xml': use 'text' or 'json'" in result.output


def test_json_log_format_is_one_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "json", component="server")
    log = logging.getLogger("pykueue.admission")
    log.info("admitted %s", "default/a", extra={"workload": "default/a", "clusterQueue": "cq"})
    log.debug("not shown at info")
    log.warning("two\nlines in one record")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["msg"] == "admitted default/a"
    assert first["level"] == "info"
    assert first["logger"] == "pykueue.admission"
    assert first["workload"] == "default/a"
    assert first["clusterQueue"] == "cq"
    assert first["component"] == "server"
    assert first["time"].endswith("Z")
    assert second["msg"] == "two\nlines in one record"


def test_text_log_format_and_level(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("warning", "text", component="controllers")
    logging.getLogger("pykueue.admission").info("hidden")
    logging.getLogger("pykueue.admission").warning("shown")
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith(" WARNING controllers: pykueue.admission: shown")


def test_progress_line_is_on_for_a_terminal_or_when_asked() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wanted(None, Tty()) is True
    assert wanted(None, io.StringIO()) is False
    assert wanted(True, io.StringIO()) is True
    assert wanted(False, Tty()) is False
    assert render((12, 30, 4), 5.25) == "admitted 12 · pending 30 · finished 4 · elapsed 5.2 s"


async def test_progress_line_redraws_until_stopped_then_clears() -> None:
    stream = io.StringIO()
    calls: list[int] = []
    drawn_three = asyncio.Event()

    def counts() -> tuple[int, int, int]:
        calls.append(1)
        if len(calls) >= 3:
            drawn_three.set()
        admitted = min(len(calls) - 1, 5)
        return admitted, 5 - admitted, 0

    line = ProgressLine(stream, counts, interval=0.001)
    line.start()
    await asyncio.wait_for(drawn_three.wait(), 10)
    await line.stop()
    out = stream.getvalue()
    assert out.startswith("\r\x1b[Kadmitted 0 · pending 5 · finished 0 · elapsed ")
    assert "\r\x1b[Kadmitted 2 · pending 3 · finished 0" in out
    assert out.endswith("\r\x1b[K")  # erased: the report that follows starts on a clean line


def test_controller_help_shows_the_ports_defaults_and_the_metrics_options() -> None:
    # rich reads "[...]" as markup and drops it: defaults are written in parentheses
    text = " ".join(runner.invoke(app, ["controller", "--help"], env={"COLUMNS": "200"}).output.split())
    for shown in ("(default: 9443)", "(default: 8081; 0 = any free port)", "(default: 8443, or metrics.bindAddress's"):
        assert shown in text
    assert "--metrics-authentication" in text
    assert "(default: a self-signed certificate made at start)" in text
