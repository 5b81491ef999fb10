"""``python -m mwperf``."""

import sys

from mwperf.cli.main import main

sys.exit(main())
