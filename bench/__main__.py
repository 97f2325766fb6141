"""`python -m bench` (what `make bench` runs): see `bench/cli.py` and `python -m bench --help`."""

import sys

from bench.cli import main

sys.exit(main())
