"""How a turn's failures read: bad tool arguments, a withdrawn stream, an overloaded model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catui.errors import ProviderError
from catui.messages import Message

if TYPE_CHECKING:
    from pydantic import ValidationError


def stream_retry_data(event: dict[str, Any], partial: Message) -> dict[str, Any]:
    """The ``stream_retry`` system event's fields: the provider's retry notice and the text it withdraws."""
    withdrawn = "".join(
        str(block.get("text", "")) for block in partial.get("content") or [] if block.get("type") == "text"
    )
    return {
        "attempt": event.get("attempt"),
        "max_retries": event.get("max_retries"),
        "retry_delay_ms": event.get("retry_delay_ms"),
        "error": event.get("error", ""),
        "withdrawn_text": withdrawn,
    }


def is_overloaded(exc: ProviderError) -> bool:
    """Whether a provider error means the model is overloaded (HTTP 529 or an overloaded_error)."""
    return exc.status == 529 or "overloaded" in str(exc).lower()


def format_validation_error(tool_name: str, exc: ValidationError) -> str:
    """The tool_result text for arguments that do not fit the tool's schema."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "input"
        kind = err.get("type", "")
        if kind == "missing":
            lines.append(f"The required parameter `{where}` is missing")
        elif kind == "extra_forbidden":
            lines.append(f"An unexpected parameter `{where}` was provided")
        else:
            lines.append(f"The parameter `{where}` is invalid: {err.get('msg', '')}")
    return (
        f"<tool_use_error>InputValidationError: {tool_name} failed due to the following "
        f"issue{'s' if len(lines) > 1 else ''}:\n" + "\n".join(lines) + "</tool_use_error>"
    )
