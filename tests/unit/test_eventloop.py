"""The event loop choice: the stdlib loop by default, uvloop on request, bad choices refused."""

from __future__ import annotations

import asyncio
import inspect

import pytest
import uvloop
from typer.testing import CliRunner

from pykueue.cli.main import app
from pykueue.eventloop import ENV, EventLoopError, loop_name, run


async def _loop_type() -> type[asyncio.AbstractEventLoop]:
    return type(asyncio.get_running_loop())


@pytest.mark.parametrize("choice", ["uvloop", "auto", " UVLOOP "])
def test_uvloop_and_auto_choose_uvloop_where_installed(monkeypatch: pytest.MonkeyPatch, choice: str) -> None:
    monkeypatch.setenv(ENV, choice)
    assert loop_name() == "uvloop"
    assert issubclass(run(_loop_type()), uvloop.Loop)


@pytest.mark.parametrize("choice", [None, "", "asyncio"])
def test_the_default_and_asyncio_choose_the_stdlib_loop(monkeypatch: pytest.MonkeyPatch, choice: str | None) -> None:
    if choice is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, choice)
    assert loop_name() == "asyncio"
    loop_type = run(_loop_type())
    assert not issubclass(loop_type, uvloop.Loop)
    assert issubclass(loop_type, asyncio.BaseEventLoop)


def test_an_unknown_choice_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "tokio")
    coroutine = _loop_type()
    with pytest.raises(EventLoopError, match="PYKUEUE_LOOP='tokio': expected one of asyncio, uvloop, auto"):
        run(coroutine)
    assert inspect.getcoroutinestate(coroutine) == "CORO_CLOSED"  # closed, not left un-awaited


def test_pykueue_up_reports_a_bad_choice_in_one_line(tmp_path: object) -> None:
    result = CliRunner().invoke(app, ["up", "--data-dir", f"{tmp_path}/data", "--port", "0"], env={ENV: "tokio"})
    assert result.exit_code == 2
    assert "error: PYKUEUE_LOOP='tokio': expected one of asyncio, uvloop, auto" in result.output
    assert "Traceback" not in result.output
