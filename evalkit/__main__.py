"""``python -m evalkit`` runs the command line."""

from .cli import main

main()
