"""scripts/import_cycles.py: finds a cycle even behind TYPE_CHECKING or inside a function, and
src/ has none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "import_cycles.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60, check=False)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    "package", ["pykueue", "pykueue.api", "pykueue.scheduler", "pykueue.registry", "pykueue.testing"]
)
def test_src_has_no_import_cycle(package: str) -> None:
    """All of src/ (``make lint`` runs the same), and by name the packages whose layering is checked."""
    done = _run(package, "--src", str(ROOT / "src"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no import cycle among the" in done.stdout


def test_a_cycle_behind_type_checking_is_found(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg.b import B\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\nB = 1\n",
        },
    )
    done = _run("pkg", "--src", str(src))
    assert done.returncode == 1
    assert "import cycle in pkg: pkg.a -> pkg.b -> pkg.a" in done.stdout


def test_a_cycle_through_an_import_inside_a_function_and_a_relative_import_is_found(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "",
            "sub/low.py": "def late():\n    from pkg import high\n    return high\n",
            "high.py": "from .sub import low\n",
        },
    )
    done = _run("pkg", "--src", str(src))
    assert done.returncode == 1
    assert "pkg.high -> pkg.sub.low -> pkg.high" in done.stdout


def test_imports_that_only_point_down_pass(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "import json\n",
            "mid.py": "from pkg import low\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.low\n",
            "high.py": "from pkg.mid import x\nfrom . import low\n",
        },
    )
    done = _run("pkg", "--src", str(src))
    assert done.returncode == 0, done.stdout
    assert "no import cycle among the 4 modules of pkg" in done.stdout


def test_an_unknown_package_is_a_one_line_error(tmp_path: Path) -> None:
    done = _run("nope", "--src", str(tmp_path))
    assert done.returncode != 0
    assert "no package 'nope'" in done.stderr
