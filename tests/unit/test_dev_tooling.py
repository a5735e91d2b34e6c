"""The developer tooling says what it does: `make lint` runs the formatter check, mypy (over src and
tests) and the layer contracts; the pre-commit hook runs exactly `make lint`; `make unit` lists skipped
tests with their reasons; `make test` prints a coverage figure."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def recipe(target: str) -> list[str]:
    """The command lines of a Makefile target."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert match is not None, f"no target {target}"
    return [line.strip() for line in match.group(1).splitlines()]


def test_lint_runs_the_linter_the_formatter_check_mypy_and_the_contracts() -> None:
    commands = recipe("lint")
    assert {
        "$(BIN)/ruff check src tests scripts",
        "$(BIN)/ruff format --check src tests scripts",
        "$(BIN)/mypy",
        "$(BIN)/lint-imports",
    } <= set(commands)


def test_mypy_checks_the_tests_too() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert set(config["packages"]) == {"pykueue", "tests"}
    assert config["strict"] is True


def test_the_pre_commit_hook_runs_make_lint() -> None:
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert [(h["entry"], h["pass_filenames"], h["always_run"]) for h in hooks] == [("make lint", False, True)]


def test_unit_lists_skips_and_test_prints_coverage() -> None:
    [unit] = [c for c in recipe("unit") if "pytest" in c]
    assert "-rs" in unit.split()
    test = recipe("test")
    assert any("--cov=pykueue" in c for c in test)
    assert any("coverage report --format=total" in c for c in test)


def test_a_failing_hypothesis_test_prints_its_example(tmp_path: Path) -> None:
    """schemathesis's pytest plugin (loaded by its entry point in every session) replaces Hypothesis's
    printer with one that prints nothing, which blanked the failing example of every property test;
    the fuzz test drives schemathesis itself and needs no plugin, so pyproject disables it."""
    import subprocess
    import sys

    (tmp_path / "test_prop.py").write_text(
        "from hypothesis import given, strategies as st\n\n"
        "@given(st.integers())\n"
        "def test_small(x):\n"
        "    assert x < 5\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(REPO / "pyproject.toml"),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "x=5," in done.stdout, done.stdout
