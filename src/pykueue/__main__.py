"""``python -m pykueue`` runs the CLI (used by tests to start real processes)."""

from pykueue.cli.main import main

main()
