"""``python -m rankwise`` runs the CLI."""

from .cli import command

raise SystemExit(command())
