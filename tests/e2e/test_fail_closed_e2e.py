"""``pykueue up`` fails closed: weak tokens are replaced, bad arguments are one line, readiness is real."""

from __future__ import annotations

import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.harness import Pykueue


def _get(server: Pykueue, path: str, *, token: str | None) -> tuple[int, str]:
    context = ssl.create_default_context(cafile=str(server.data_dir / "ca.crt"))
    request = urllib.request.Request(server.url + path)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_an_empty_token_file_never_turns_authentication_off(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "token").write_text("")  # what a crash between create and write used to leave
    server = Pykueue(data, tmp_path / "kc", ["--no-kueue"]).start()
    try:
        assert _get(server, "/api/v1/namespaces", token=None)[0] == 401
        assert _get(server, "/api/v1/namespaces", token="")[0] == 401
        assert len(server.token) >= 32
        assert (data / "token").read_text() == server.token
        assert "default" in server.kubectl("get", "namespaces", "-o", "name").stdout
        assert any("writing a new token" in line for line in server.output)
    finally:
        server.stop()


def test_an_existing_data_dir_keeps_its_mode(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    server = Pykueue(data, tmp_path / "kc", ["--no-kueue"]).start()
    try:
        assert data.stat().st_mode & 0o777 == 0o755
        assert (data / "token").stat().st_mode & 0o777 == 0o600
        assert (data / "server.key").stat().st_mode & 0o777 == 0o600
    finally:
        server.stop()


def test_readyz_reports_the_store_and_the_controllers(pykueue: Pykueue) -> None:
    status, body = _get(pykueue, "/readyz?verbose", token=None)
    assert status == 200
    for line in ("[+]ping ok", "[+]shutdown ok", "[+]store ok", "[+]controllers ok", "readyz check passed"):
        assert line in body.splitlines()
    assert _get(pykueue, "/readyz/controllers", token=None) == (200, "ok")
    assert _get(pykueue, "/readyz/nonsense", token=None)[0] == 404
    assert pykueue.kubectl("get", "--raw", "/readyz").stdout == "ok"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "99999"], "--port 99999: must be between 0 and 65535"),
        (["--port", "-1"], "--port -1: must be between 0 and 65535"),
        (["--port", "abc"], "Invalid value for '--port'"),
        (["--durability", "sometimes"], "--durability 'sometimes': use 'fsync' or 'os'"),
        (["--no-such-option"], "No such option: --no-such-option"),
    ],
)
def test_argument_errors_are_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pykueue", "up", "--kubeconfig", str(tmp_path / "kc"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert message in lines[0]
    assert not (tmp_path / "kc").exists()
