"""pytest plugin (``-p plain_combine``, this folder on PYTHONPATH): the CuPy split path's plain
combine (one block a row) as the default, as it was before the twenty-first session's clusters."""


def pytest_configure(config):
    from qrita.backends.cupy import _launch

    _launch.CLUSTERS = False
