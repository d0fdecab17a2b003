"""stream-json output: one JSON object per line, in Claude Code's event shapes.

``system``/``init`` first (tools, model, agents), then ``assistant`` and
``user`` messages (a sub-agent's carry ``parent_tool_use_id``), ``system``
task events, optional ``stream_event`` partials, and a final ``result``.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any, TextIO

from catui import __version__
from catui.commands.listing import init_skill_names, plugin_entries, session_plugin_dirs, slash_command_names
from catui.session.events import (
    AssistantMessageEvent,
    Event,
    ResultEvent,
    StreamEventRaw,
    SystemEvent,
    UserMessageEvent,
)
from catui.styles.active import reported_style

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.cli.stream.turn_results import TurnResults


def event_to_json(event: Event, session_id: str) -> dict[str, Any] | None:
    """The stream-json object for one event, or None for events stream-json does not show."""
    base = {"parent_tool_use_id": event.parent_tool_use_id, "session_id": session_id}
    if isinstance(event, AssistantMessageEvent):
        message = {
            "id": event.message_id or f"msg_{event.uuid.replace('-', '')[:24]}",
            "type": "message",
            "role": "assistant",
            "model": event.model,
            **event.message,
            "stop_reason": event.stop_reason,
            "stop_sequence": None,
            "usage": event.usage,
        }
        return {"type": "assistant", "message": message, **base, "uuid": event.uuid or str(uuid.uuid4())}
    if isinstance(event, UserMessageEvent):
        return {"type": "user", "message": event.message, **base, "uuid": event.uuid or str(uuid.uuid4())}
    if isinstance(event, SystemEvent):
        return {"type": "system", "subtype": event.subtype, **event.data, "session_id": session_id,
                "uuid": str(uuid.uuid4())}
    if isinstance(event, StreamEventRaw):
        return {"type": "stream_event", "event": event.event, **base, "uuid": str(uuid.uuid4())}
    if isinstance(event, ResultEvent):
        if event.agent_id is not None:
            return None
        return {**result_json(event), "uuid": str(uuid.uuid4())}
    return None


def result_json(event: ResultEvent) -> dict[str, Any]:
    """The result object of print mode's json output, in Claude Code's shape (stream-json ends with it too).

    An error result (``error_max_turns``, ``error_max_budget_usd``, ``error_during_execution``) also lists
    what went wrong in ``errors``, as Claude Code's does; catui keeps the text in ``result`` as well. A run
    ended by a failed API call is reported as Claude Code reports it: subtype ``success`` (the loop did not
    fail), ``is_error``, "API Error: …" with the API's message as ``result``, ``api_error_status`` and
    ``terminal_reason: "api_error"``.
    """
    shown = {"structured_output": event.structured_output} if event.structured_output is not None else {}
    api_failure = event.terminal_reason == "api_error"
    text = f"API Error: {event.result}" if api_failure and not event.result.startswith("API Error") else event.result
    obj: dict[str, Any] = {
        "type": "result",
        "subtype": "success" if api_failure else event.subtype,
        "is_error": event.is_error,
        "duration_ms": event.duration_ms,
        "duration_api_ms": event.duration_api_ms,
        "num_turns": event.num_turns,
        "result": text,
        "stop_reason": event.stop_reason,
        "session_id": event.session_id,
        "total_cost_usd": event.total_cost_usd,
        "usage": event.usage,
        "modelUsage": event.model_usage,
        "permission_denials": event.permission_denials,
        **shown,
        "terminal_reason": event.terminal_reason,
        "uuid": str(uuid.uuid4()),
    }
    if event.api_error_status is not None:
        obj["api_error_status"] = event.api_error_status
    if event.is_error:
        # Claude Code leaves errors empty for an API failure: the prose is in result
        obj["errors"] = [] if api_failure else [event.result] if event.result else []
    return obj


def with_subagent_stats(obj: dict[str, Any], app: AgentApp) -> dict[str, Any]:
    """A result object with ``subagent_stats`` before its uuid, in the current contract (catui.config.compat)."""
    system = app.services.subagents
    if not app.services.compat.current or system is None:
        return obj
    stats = system.runtime.stats.snapshot()
    return {**{k: v for k, v in obj.items() if k != "uuid"}, "subagent_stats": stats, "uuid": obj.get("uuid")}


class StreamJsonWriter:
    """Writes events of an app's run to a text stream as JSON lines, flushing each."""

    def __init__(self, app: AgentApp, stream: TextIO, *, replay_user_messages: bool = False,
                 forward_subagent_text: bool = False) -> None:
        self.app = app
        self.stream = stream
        self.replay_user_messages = replay_user_messages
        self.forward_subagent_text = forward_subagent_text
        self.turn_results: TurnResults | None = None
        """Numbers the main agent's results (current contract: ``result_index`` and the other per-turn keys)."""
        if app.services.compat.current:
            from catui.cli.stream.turn_results import TurnResults  # lazy: the 2.1.92 profile numbers none

            self.turn_results = TurnResults(app)
        self.origin: dict[str, Any] | None = None
        """What started the running turn (the prompt line's ``origin``, or a task notification); the main
        agent's result carries it, as Claude Code's."""
        """Show a sub-agent's text and thinking too; by default, as Claude Code, its assistant messages carry
        only their tool calls (its prompt and tool results are always shown)."""
        """Echo the main agent's own input too (``--replay-user-messages``): the SDK reads prompts' uuids there."""

    def notification_turn(self) -> None:
        """Print mode starts a turn with a background task's notification: the current contract opens it with
        an init event, as a team turn, and its result says so (``origin``); the 2.1.92 profile's print mode
        shows none of this."""
        if self.app.services.compat.current:
            from catui.cli.stream.turn_results import notification_turn_origin

            self.init()
            self.origin = notification_turn_origin(self.app)

    def _emit(self, obj: dict[str, Any]) -> None:
        self.stream.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.stream.flush()

    def init(self) -> None:
        session = self.app.session
        mcp = self.app.services.mcp
        tools = [t.name for t in session.tools]
        if "Agent" in tools and "Task" not in tools:
            tools.append("Task")
        self._emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(session.ctx.cwd),
                "session_id": session.session_id,
                "tools": tools,
                "mcp_servers": mcp.server_statuses() if mcp is not None else [],
                "model": session.config.model,
                "permissionMode": session.ctx.permissions.mode,
                "slash_commands": slash_command_names(self.app.skills),
                "apiKeySource": api_key_source(self.app.services.env),
                "claude_code_version": __version__,
                "output_style": reported_style(self.app.services.output_style)[0],
                "agents": [a.agent_type for a in self.app.registry.active],
                "skills": init_skill_names(self.app.skills),
                "plugins": plugin_entries(session_plugin_dirs(self.app.options.plugin_dirs, self.app.settings.merged)),
                "unavailable_tools": [
                    {"name": name, "reason": reason} for name, reason in self.app.services.unavailable_tools.items()
                ],
                # catui's own key: the Claude Code contract this session follows (catui.config.compat).
                "compat": self.app.services.compat.name,
                "uuid": str(uuid.uuid4()),
            }
        )

    def write(self, event: Event) -> None:
        if isinstance(event, UserMessageEvent) and len(tool_results(event)) > 0:
            for part in split_tool_results(event, self.app.session.session_id):
                self._emit(part)
            return
        if isinstance(event, UserMessageEvent) and event.parent_tool_use_id is None and not self.replay_user_messages:
            # The main agent's own input (the prompt, a task notification, stop-hook feedback): Claude Code
            # echoes it only with --replay-user-messages. A sub-agent's prompt is shown, as in Claude Code.
            return
        obj = event_to_json(event, self.app.session.session_id)
        if obj is not None and isinstance(event, ResultEvent):
            obj = with_subagent_stats(obj, self.app)
            if self.origin is not None:
                obj["origin"] = self.origin
            if self.turn_results is not None:
                obj = self.turn_results.stamp(obj, event.request_timings)
        if obj is not None and isinstance(event, AssistantMessageEvent):
            for part in split_assistant_blocks(obj):
                if event.parent_tool_use_id is not None and not self.forward_subagent_text and not any(
                        block.get("type") in CALL_BLOCK_TYPES for block in part["message"].get("content") or []):
                    continue  # a sub-agent's text or thinking
                self._emit(part)
        elif obj is not None:
            self._emit(obj)


CALL_BLOCK_TYPES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


def api_key_source(env: Any) -> str:
    """Where the Anthropic credential came from, in the init event's terms ("none" without one)."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        if env.get(name):
            return name
    return "none"


def split_assistant_blocks(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``assistant`` event per content block, sharing the message id, as Claude Code streams them."""
    content = obj["message"].get("content")
    if not isinstance(content, list) or len(content) < 2:
        return [obj]
    return [
        {**obj, "message": {**obj["message"], "content": [block]}, "uuid": obj["uuid"] if index == 0 else
         str(uuid.uuid4())}
        for index, block in enumerate(content)
    ]


def tool_results(event: UserMessageEvent) -> list[dict[str, Any]]:
    content = event.message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def split_tool_results(event: UserMessageEvent, session_id: str) -> list[dict[str, Any]]:
    """One ``user`` event per tool_result, each with its ``tool_use_result``, as Claude Code streams them.

    The transcript and the API keep them in one message; any text blocks that
    follow the results (queued messages) ride along with the last event.
    """
    content = event.message["content"]
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    others = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    out: list[dict[str, Any]] = []
    for index, block in enumerate(results):
        blocks = [block, *others] if index == len(results) - 1 else [block]
        obj: dict[str, Any] = {
            "type": "user",
            "message": {"role": "user", "content": blocks},
            "parent_tool_use_id": event.parent_tool_use_id,
            "session_id": session_id,
            "uuid": event.uuid if index == 0 and event.uuid else str(uuid.uuid4()),
        }
        data = event.tool_use_results.get(block.get("tool_use_id", ""))
        if data is not None:
            obj["tool_use_result"] = data
        out.append(obj)
    return out
