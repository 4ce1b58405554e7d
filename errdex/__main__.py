"""``python -m errdex`` runs the CLI."""

from errdex.cli import main

main()
