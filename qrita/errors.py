"""The error family.  Every message names the argument, the constraint and the
value received, e.g. ``k must have shape [B]=[8], got (7,)``."""

from __future__ import annotations


class QritaError(Exception):
    """Base class of every error qrita raises on purpose."""


class QritaValueError(QritaError, ValueError):
    """An argument has the right type but a bad value or shape."""


class QritaTypeError(QritaError, TypeError):
    """An argument has the wrong type or dtype."""


class UnknownBackendError(QritaValueError):
    """``backend=`` names no registered backend."""


class BackendUnavailableError(QritaError, RuntimeError):
    """A backend named explicitly cannot run this request here (the message says why and how to fix it)."""


class CheckFailedError(QritaValueError):
    """``check=True`` found a bad value inside an array, or a result that breaks the contract."""
