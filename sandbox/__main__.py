"""`python -m sandbox ...`: the same command line as `platform-sync sandbox ...`."""

from sandbox.cli import main

raise SystemExit(main())
