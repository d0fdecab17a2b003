"""Hooks that are Python coroutine functions: building their configuration and running one.

Two callers give catui such hooks: the SDK's ``hooks=`` option
(claude-agent-sdk's ``HookMatcher(matcher=..., hooks=[fn])``) and the CLI's
control protocol, where each hook forwards the event to the program driving
catui (``hook_callback`` requests). Both end up as
:class:`~catui.hooks.config.CallbackHook` entries in a
:class:`~catui.hooks.config.HooksConfig`, so the runner fires them exactly
where it fires command hooks, sub-agents included. A callback's answer is read
as a command hook's JSON stdout is (``permissionDecision``, ``decision:
"block"``, ``additionalContext``, ``continue: false``, ...).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from catui.errors import ConfigurationError
from catui.hooks.config import (
    DEFAULT_TIMEOUT_S,
    KNOWN_EVENTS,
    RUN_EVENTS,
    CallbackHook,
    HookCallbackFunction,
    HookMatcher,
    HooksConfig,
    matcher_pattern,
)
from catui.hooks.output import HookResponse, read_json_answer

# claude-agent-sdk spells these two keys with a trailing underscore (Python keywords); the wire has none.
_PYTHON_SAFE_KEYS = {"async_": "async", "continue_": "continue"}


@dataclass(frozen=True)
class CallbackGroup:
    """One matcher group of callbacks, before checking: what an SDK ``HookMatcher`` or an initialize entry says."""

    matcher: str | None
    callbacks: Sequence[HookCallbackFunction]
    timeout: float | None = None
    names: Sequence[str] = ()
    """How messages name each callback (the control protocol's callback ids); defaults to the function's name."""


def callback_hooks_config(groups: Mapping[str, Sequence[CallbackGroup]], *, source: str) -> HooksConfig:
    """A :class:`HooksConfig` of callback hooks. Raises ConfigurationError naming ``source`` for bad entries.

    Events catui knows but has no moment for (``Notification``, ``PreCompact``,
    ``PermissionRequest``, ...) are kept out with a warning in the result.
    """
    config = HooksConfig()
    for event, entries in groups.items():
        where = f"{source}[{event!r}]"
        if event not in KNOWN_EVENTS:
            raise ConfigurationError(
                f"{where}: {event!r} is not a hook event; use one of {', '.join(sorted(RUN_EVENTS))}"
            )
        if event not in RUN_EVENTS:
            config.warnings.append(f"{where}: catui has no {event} moment, so these hooks never run")
            continue
        for index, group in enumerate(entries):
            matcher = _checked_matcher(group.matcher, f"{where}[{index}].matcher")
            timeout = _checked_timeout(group.timeout, f"{where}[{index}].timeout")
            hooks = []
            for position, callback in enumerate(group.callbacks):
                if not callable(callback):
                    raise ConfigurationError(
                        f"{where}[{index}].hooks[{position}] is {type(callback).__name__}, not a function; "
                        "pass async functions (input_data, tool_use_id, context) -> dict"
                    )
                name = group.names[position] if position < len(group.names) else ""
                hooks.append(CallbackHook(callback, timeout=timeout, where=f"{where}[{index}]", name=name))
            if hooks:
                config.events.setdefault(event, []).append(
                    HookMatcher(matcher, tuple(hooks), matcher_pattern(matcher))
                )
    return config


def _checked_matcher(matcher: Any, where: str) -> str | None:
    if matcher is None or matcher == "":
        return None
    if not isinstance(matcher, str):
        raise ConfigurationError(f"{where} must be a string such as \"Bash\" or \"Write|Edit\", not {matcher!r}")
    try:
        matcher_pattern(matcher)
    except re.error as exc:
        raise ConfigurationError(f"{where} {matcher!r} is not a valid regular expression ({exc})") from None
    return matcher


def _checked_timeout(timeout: Any, where: str) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT_S
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigurationError(f"{where} must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


async def run_callback_hook(hook: CallbackHook, payload: Mapping[str, Any], event: str) -> HookResponse:
    """Call ``hook`` with the event's input and interpret its answer; never raises for the callback's failures.

    A callback that raises, times out or returns something other than a dict
    is a non-blocking error shown to the user, as a failing command hook is.
    An answer with ``async: true`` carries no decision.
    """
    response = HookResponse(event=event, command=hook.command)
    label = f"{event} hook {hook.command}"
    tool_use_id = payload.get("tool_use_id")
    try:
        answer = await asyncio.wait_for(
            hook.callback(dict(payload), tool_use_id if isinstance(tool_use_id, str) else None, {"signal": None}),
            timeout=hook.timeout,
        )
    except TimeoutError:
        response.error = f"{label} did not answer within {hook.timeout:g}s ({hook.where})"
        return response
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the callback is the caller's code: its failure is reported, not raised
        response.error = f"{label} raised {type(exc).__name__}: {exc} ({hook.where})"
        return response
    if answer is None:
        return response
    if not isinstance(answer, Mapping):
        response.error = f"{label} returned {type(answer).__name__}; return a dict such as {{}} ({hook.where})"
        return response
    data = {_PYTHON_SAFE_KEYS.get(str(key), str(key)): value for key, value in answer.items()}
    if data.get("async") is True:
        return response
    read_json_answer(data, response, label)
    return response
