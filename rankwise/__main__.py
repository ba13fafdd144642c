"""``python -m rankwise`` runs the CLI."""

from .cli import main

raise SystemExit(main())
