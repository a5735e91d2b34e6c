"""The image's ingredients: ``make wheel`` builds a wheel that installs into a fresh virtualenv and runs,
and the Dockerfile is pinned, non-root, and refers only to paths that exist. (No Docker engine here:
the image itself is built by ``make image`` where there is one.)"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import yaml

from tests.e2e.harness import REPO

DOCKERFILE = REPO / "Dockerfile"


def _fresh_venv_with_wheel(tmp_path: Path) -> Path:
    subprocess.run(["make", "wheel"], cwd=REPO, check=True, capture_output=True)
    (wheel,) = (REPO / "dist").glob("pykueue-*.whl")
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # the wheel itself goes into the fresh venv; its dependencies are the pinned ones already installed
    # for the tests (a path appended after the venv's own: the editable checkout is never imported)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def test_the_wheel_installs_into_a_fresh_venv_and_runs_and_the_dockerfiles_sources_exist(tmp_path: Path) -> None:
    venv = _fresh_venv_with_wheel(tmp_path)
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import pykueue; print(pykueue.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(venv)), where
    version = subprocess.run([str(venv / "bin" / "pykueue"), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "pykueue 0.1.0"
    rendered = subprocess.run([str(venv / "bin" / "pykueue"), "install"], capture_output=True, text=True, check=True)
    kinds = [d["kind"] for d in yaml.safe_load_all(rendered.stdout)]
    assert "Deployment" in kinds
    # package data travels in the wheel (the demo's quickstart, the benchmark's configurations)
    listed = subprocess.run(
        [sys.executable, "-m", "zipfile", "-l", str(next((REPO / "dist").glob("*.whl")))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "pykueue/examples/quickstart/" in listed
    assert "pykueue/bench/configs/baseline/generator.yaml" in listed
    # what the Dockerfile copies exists once the wheel is built (one test: make wheel starts from rm -rf dist)
    for op, arg in _instructions():
        if op in ("COPY", "ADD"):
            *sources, _ = arg.split()
            for source in sources:
                assert list(REPO.glob(source.rstrip("/"))), f"{op} {source}: nothing at that path"


def _instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1].strip())
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_the_dockerfile_is_pinned_non_root_and_installs_the_wheel() -> None:
    instructions = _instructions()
    bases = [arg for op, arg in instructions if op == "FROM"]
    assert len(bases) == 1
    assert re.fullmatch(r"[\w./-]+(:\d+\.\d+\.\d+[\w.-]*|@sha256:[0-9a-f]{64})", bases[0]), bases[0]
    users = [arg for op, arg in instructions if op == "USER"]
    assert users, "no USER: the image would run as root"
    uid = users[-1].split(":")[0]
    assert uid.isdigit(), "a numeric user, so the pod's runAsNonRoot can be verified"
    assert int(uid) != 0
    runs = " ".join(arg for op, arg in instructions if op == "RUN")
    assert "-c /opt/pykueue-build/constraints.txt" in runs
    assert "dist/pykueue-*.whl" in runs
    assert [arg for op, arg in instructions if op == "ENTRYPOINT"] == ['["pykueue"]']
