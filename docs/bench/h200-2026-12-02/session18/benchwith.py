"""``qrita.bench`` with Triton options injected into every request (session 11's ``opt.py``).

    python3 benchwith.py '{"mask_reverse": false}' [qrita.bench arguments]

Run from the repository root.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "h200-2026-12-01",
                                "session11"))
import opt  # noqa: E402  (installs the option injection; opt.OPTS)

import qrita.bench  # noqa: E402

opt.OPTS.update(json.loads(sys.argv[1]))
sys.exit(qrita.bench.main(sys.argv[2:]))
