"""``python -m qrita.bench [options]``."""

import sys

from . import main

sys.exit(main())
