"""pytest plugin for device runs: set the Numba backend's option defaults (``qrita.backends.numba.launch``
constants) from the environment before any test runs, so that the GPU suites can run a candidate set of defaults
on an unchanged tree:

    QRITA_NUMBA_DEFAULTS='{"SCAN_PREFETCH": true}' PYTHONPATH=.:benchmarks python3 -m pytest -p numba_defaults ...

Only names that already exist in ``launch`` are accepted (a typo fails at once)."""

import json
import os


def pytest_configure(config):
    wanted = json.loads(os.environ.get("QRITA_NUMBA_DEFAULTS", "{}"))
    if not wanted:
        return
    from qrita.backends.numba import launch

    for name, value in wanted.items():
        if not hasattr(launch, name):
            raise ValueError(f"QRITA_NUMBA_DEFAULTS: qrita.backends.numba.launch has no {name}")
        setattr(launch, name, value)
