"""qrita: exact, deterministic Top-k / Top-p selection over LLM logits.

``import qrita`` loads numpy only; GPU libraries and torch are imported when a
backend or an array of theirs needs them.
"""

from ._version import __version__
from .api import select, top_k, top_k_top_p, top_p
from .backends import available_backends
from .errors import (
    BackendUnavailableError,
    CheckFailedError,
    QritaError,
    QritaTypeError,
    QritaValueError,
    UnknownBackendError,
)
from .sampling import sample
from .selection import Selection

__all__ = [
    "BackendUnavailableError",
    "CheckFailedError",
    "QritaError",
    "QritaTypeError",
    "QritaValueError",
    "Selection",
    "UnknownBackendError",
    "__version__",
    "available_backends",
    "sample",
    "select",
    "top_k",
    "top_k_top_p",
    "top_p",
]
