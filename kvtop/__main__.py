"""`python -m kvtop` runs the same command as the `kvtop` script."""

from kvtop.cli import main

raise SystemExit(main())
