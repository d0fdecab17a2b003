"""The exception hierarchy that catui lets escape to its callers.

Every error a user can cause (bad settings, an unknown model, an unreachable
endpoint) is a :class:`CatuiError` subclass whose message says what went wrong,
where, and how to fix it. The CLI prints ``str(error)`` on one line and exits
non-zero; it shows a traceback only with ``--verbose``.
"""

from __future__ import annotations


class CatuiError(Exception):
    """Base class of every error catui raises on purpose."""


class ConfigurationError(CatuiError):
    """A settings file, an agent definition, an option or an environment variable is wrong."""


class ProviderError(CatuiError):
    """The model provider failed: unreachable, refused the key, or answered with an error.

    ``status`` is the HTTP status when there was one; ``retryable`` says whether
    the failure was of a kind that a retry could cure (it is set after retries
    are exhausted, so the caller knows the error was transient in nature).
    """

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class ToolError(CatuiError):
    """A tool refused or failed; the session turns it into an error tool_result."""


class CancelledError(CatuiError):
    """The run was interrupted (Ctrl-C, ``interrupt()``, an aborted parent)."""
