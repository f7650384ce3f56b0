"""``python -m qrita``: the same command as the ``qrita`` console script."""

import sys

from .cli import main

sys.exit(main())
