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

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 api_message: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.api_message = api_message
        """The API's own error message (its error body's ``message``), when it sent one."""


class ToolError(CatuiError):
    """A tool refused or failed; the session turns it into an error tool_result."""


class CancelledError(CatuiError):
    """The run was interrupted (Ctrl-C, ``interrupt()``, an aborted parent)."""


# -- claude-agent-sdk's names ----------------------------------------------------------------------
# Code written for claude-agent-sdk catches these; in catui they are CatuiErrors too, so one
# ``except catui.CatuiError`` still catches everything. catui runs the agent in-process, so the
# CLI-process errors mean "the in-process agent" here (see docs/sdk.md, "Errors").

ClaudeSDKError = CatuiError
"""claude-agent-sdk's base class: the same class as :class:`CatuiError`."""


class CLIConnectionError(CatuiError):
    """The agent is not reachable: the client is not connected, or was used after ``disconnect()``."""


class CLINotFoundError(CLIConnectionError):
    """Kept for ``except`` clauses written for claude-agent-sdk; catui starts no CLI, so never raises it."""

    def __init__(self, message: str = "catui's agent was not found", cli_path: str | None = None) -> None:
        super().__init__(f"{message}: {cli_path}" if cli_path else message)
        self.cli_path = cli_path


class ProcessError(CatuiError):
    """The run failed; ``exit_code`` is what the CLI would exit with (1) and ``stderr`` what it would print."""

    def __init__(self, message: str, exit_code: int | None = None, stderr: str | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


class ResultError(ProcessError):
    """A one-shot ``query()`` ended with an error result (max turns, an API failure, an interrupted run).

    Raised after the :class:`ResultMessage` was yielded, as claude-agent-sdk raises it; its fields
    repeat the result's (``subtype``, ``errors``, ``result``, ``api_error_status``,
    ``terminal_reason``, ``session_id``) and ``data`` is the whole result as a dict.
    """

    def __init__(self, message: str, data: dict[str, object] | None = None, exit_code: int | None = 1) -> None:
        super().__init__(message, exit_code=exit_code)
        self.data: dict[str, object] = dict(data or {})
        subtype, result, status, reason, session_id = (
            self.data.get(k) for k in ("subtype", "result", "api_error_status", "terminal_reason", "session_id")
        )
        errors = self.data.get("errors")
        self.subtype = subtype if isinstance(subtype, str) else None
        self.errors = [e for e in errors if isinstance(e, str) and e.strip()] if isinstance(errors, list) else []
        self.result = result if isinstance(result, str) else None
        self.api_error_status = status if isinstance(status, int) else None
        self.terminal_reason = reason if isinstance(reason, str) else None
        self.session_id = session_id if isinstance(session_id, str) else None


class CLIJSONDecodeError(CatuiError):
    """A JSON value catui had to read was not JSON (``line`` is the text, ``original_error`` the cause)."""

    def __init__(self, line: str, original_error: Exception) -> None:
        super().__init__(f"not valid JSON ({original_error}): {line[:100]}")
        self.line = line
        self.original_error = original_error


class MessageParseError(CatuiError):
    """A message had a shape catui could not read (``data`` is the message)."""

    def __init__(self, message: str, data: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.data = data


class UnsupportedEventLoopError(CatuiError):
    """catui's SDK was called from an event loop other than asyncio (trio, curio)."""
