"""SDK message objects to JSON and back, exactly: how a background session hands its messages to an attached
:class:`catui.CatuiClient` (one JSON object per line in ``<session folder>/events.jsonl``).

Every dataclass of :mod:`catui.sdk.types` is written as ``{"__type__": "<class name>", <its fields>}``, nested
blocks too, so the reader rebuilds the same classes (``AssistantMessage`` with ``TextBlock`` s …). Only the classes
named in :data:`CLASSES` are rebuilt: a file cannot make the reader construct anything else.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from catui.sdk import types

CLASSES: dict[str, type] = {
    cls.__name__: cls for cls in (
        types.TextBlock, types.ThinkingBlock, types.ToolUseBlock, types.ToolResultBlock, types.ServerToolUseBlock,
        types.ServerToolResultBlock, types.UserMessage, types.AssistantMessage, types.SystemMessage,
        types.TaskStartedMessage, types.TaskProgressMessage, types.TaskNotificationMessage, types.ResultMessage,
        types.StreamEvent, types.TaskUpdatedMessage, types.HookEventMessage, types.RateLimitInfo,
        types.RateLimitEvent)
}

TAG = "__type__"


def encode(value: Any) -> Any:
    """``value`` as plain JSON data (dataclasses tagged with their class name)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        body: dict[str, Any] = {TAG: type(value).__name__}
        for item in dataclasses.fields(value):
            body[item.name] = encode(getattr(value, item.name))
        return body
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # nothing else appears in a message; never fail a session over a stray object


def decode(data: Any) -> Any:
    """The inverse of :func:`encode`; a tagged object of an unknown class stays a dict."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    fields = {k: decode(v) for k, v in data.items() if k != TAG}
    cls = CLASSES.get(str(data.get(TAG)))
    if cls is None:
        return fields if TAG in data else {k: decode(v) for k, v in data.items()}
    known = {f.name for f in dataclasses.fields(cls)}
    try:
        return cls(**{k: v for k, v in fields.items() if k in known})
    except TypeError:
        return fields  # written by another catui version with a required field this one lacks
