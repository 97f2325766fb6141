"""`python -m pipelines.cli ...`: the same command line as `platform-sync ...`."""

import sys

from pipelines.cli.main import main

sys.exit(main())
