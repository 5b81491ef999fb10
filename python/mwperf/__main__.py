"""``python -m mwperf``."""

import sys

from mwperf.cli import main

sys.exit(main())
