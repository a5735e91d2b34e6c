"""Write the Helm chart's generated data files (``charts/pykueue/files/``) from pykueue's code.

Run after changing Kueue's CRDs, the admission hooks or the RBAC rules (``make chart``); a test
fails while the committed files differ from what this writes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pykueue.install.chart_files import chart_files

CHART = Path(__file__).resolve().parents[1] / "charts" / "pykueue"


def main() -> None:
    shutil.rmtree(CHART / "files", ignore_errors=True)
    for relative, text in chart_files().items():
        path = CHART / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    print(f"wrote {len(chart_files())} files under {CHART / 'files'}")


if __name__ == "__main__":
    main()
