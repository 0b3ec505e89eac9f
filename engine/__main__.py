"""``python -m engine`` runs the command line."""

from engine.cli import main

main()
