"""Spans, metrics and log events over OpenTelemetry, named and shaped as Claude Code's (docs/telemetry.md).

:class:`OtelTelemetry` implements :class:`catui.telemetry.hooks.RunTelemetry`.
Imported only when telemetry is on. Traces: one per turn of the main session
(``claude_code.interaction``), an agent's runs as ``catui.agent`` spans under
the tool call that started them, each model request a ``claude_code.llm_request``
span and each tool call a ``claude_code.tool`` span, with the GenAI semantic
conventions' ``gen_ai.*`` attributes. Metrics and events carry Claude Code's
names (``claude_code.token.usage``, ``api_request``, …) with ``session.id``,
``prompt.id`` and catui's ``catui.agent.id`` / ``catui.agent.type``.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import json
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.trace import NoOpTracer, Span, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from catui import __version__
from catui.models.pricing import cost_usd
from catui.telemetry.hooks import SpawnContext
from catui.telemetry.otel_config import OtelSettings
from catui.telemetry.otel_exporters import Providers, build_providers
from catui.telemetry.otel_metrics import ClaudeCodeMetrics, code_changes, edit_language

MAIN_AGENT = "main"
REDACTED = "<REDACTED>"
EDIT_TOOLS = ("Edit", "Write", "NotebookEdit")
_PROPAGATOR = TraceContextTextMapPropagator()


@dataclass(frozen=True)
class _Scope:
    """The ids every record of the current run carries."""

    session_id: str
    prompt_id: str
    agent_id: str | None
    agent_type: str
    parent_agent_id: str | None = None


@dataclass(frozen=True)
class _Spawn:
    """Where a child agent hangs: the parent's context (its tool call's span) and ids, and span attributes."""

    context: otel_context.Context
    scope: _Scope | None
    attributes: Mapping[str, Any] = field(default_factory=dict)


_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("catui_telemetry_scope", default=None)
_TOOL: contextvars.ContextVar[_ToolCall | None] = contextvars.ContextVar("catui_telemetry_tool",
                                                                                     default=None)


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """OpenTelemetry takes no None values, and only primitives (or lists of them)."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, bool | int | float | str):
            out[key] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            out[key] = json.dumps(value, ensure_ascii=False, default=str)
    return out


def prompt_text(prompt: Any) -> str:
    """What the user wrote: a prompt's text (a string, content blocks or a user message) without catui's
    ``<system-reminder>`` blocks (the context block the first prompt carries)."""
    if isinstance(prompt, dict):
        prompt = prompt.get("content", "")
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        texts = [str(b.get("text", "")) for b in prompt if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(t for t in texts if not t.lstrip().startswith("<system-reminder>"))
    return ""


class OtelTelemetry:
    """See the module docstring; one per process and exporter settings (``catui.telemetry.switch``)."""

    def __init__(self, settings: OtelSettings, providers: Providers | None = None) -> None:
        self.settings = settings
        self.providers = providers if providers is not None else build_providers(settings)
        tracer_provider = self.providers.tracer
        self.tracer: Any = tracer_provider.get_tracer("catui", __version__) if tracer_provider else NoOpTracer()
        meter = self.providers.meter.get_meter("catui", __version__) if self.providers.meter else None
        self.metrics = ClaudeCodeMetrics(meter)
        self.logger: Any = self.providers.logger.get_logger("catui", __version__) if self.providers.logger else None
        self._sequence = itertools.count()
        self._counted_sessions: set[str] = set()

    # -- records -------------------------------------------------------------------------------

    def standard(self, scope: _Scope | None = None) -> dict[str, Any]:
        """``session.id``, ``prompt.id``, catui's agent id and type (and Claude Code's ``agent_id``)."""
        scope = scope if scope is not None else _SCOPE.get()
        if scope is None:
            return {}
        return _clean({
            "session.id": scope.session_id, "prompt.id": scope.prompt_id,
            "catui.agent.id": scope.agent_id or MAIN_AGENT, "catui.agent.type": scope.agent_type,
            "agent_id": scope.agent_id, "parent_agent_id": scope.parent_agent_id,
        })

    def event(self, name: str, attributes: Mapping[str, Any]) -> None:
        """One Claude Code log event: body ``claude_code.<name>``, attribute ``event.name`` = ``name``."""
        if self.logger is None:
            return
        record = {
            **self.standard(), "event.name": name,
            "event.timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "event.sequence": next(self._sequence), **_clean(attributes),
        }
        self.logger.emit(body=f"claude_code.{name}", attributes=record, event_name=f"claude_code.{name}")

    # -- runs ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def run(self, *, session_id: str, agent_id: str | None, agent_type: str | None, prompt: Any, model: str,
            spawned_from: SpawnContext | None) -> Iterator[_Run]:
        if agent_id is None:
            scope = _Scope(session_id, str(uuid.uuid4()), None, agent_type or MAIN_AGENT)
            parent = otel_context.Context()  # a new trace for every turn of the main session
            name = "claude_code.interaction"
            text = prompt_text(prompt)
            attributes: dict[str, Any] = {
                "gen_ai.conversation.id": session_id, "user_prompt_length": len(text),
                "user_prompt": text if self.settings.log_user_prompts else REDACTED,
            }
        else:
            spawn = spawned_from if isinstance(spawned_from, _Spawn) else self.spawn_context()
            outer = spawn.scope
            scope = _Scope(session_id, outer.prompt_id if outer is not None else str(uuid.uuid4()),
                           agent_id, agent_type or "", outer.agent_id if outer is not None else None)
            parent = spawn.context
            name = "catui.agent"
            attributes = {
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": agent_id,
                "gen_ai.agent.name": agent_type, "gen_ai.conversation.id": session_id,
                "catui.agent.model": model, **spawn.attributes,
            }
        token = _SCOPE.set(scope)
        try:
            with self.tracer.start_as_current_span(name, context=parent,
                                                   attributes=_clean({**self.standard(scope), **attributes})) as span:
                if agent_id is None:
                    if session_id not in self._counted_sessions:
                        self._counted_sessions.add(session_id)
                        self.metrics.session_count.add(1, self.standard(scope))
                    self.event("user_prompt", {"prompt_length": len(text),
                                               "prompt": text if self.settings.log_user_prompts else REDACTED})
                yield _Run(self, span, scope)
        finally:
            _SCOPE.reset(token)

    def spawn_context(self, **attributes: Any) -> _Spawn:
        return _Spawn(otel_context.get_current(), _SCOPE.get(), _clean(attributes))

    def carrier(self, spawned_from: SpawnContext | None) -> dict[str, str]:
        spawn = spawned_from if isinstance(spawned_from, _Spawn) else self.spawn_context()
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, context=spawn.context)
        if spawn.scope is not None:
            carrier["catui-session-id"] = spawn.scope.session_id
            carrier["catui-prompt-id"] = spawn.scope.prompt_id
            carrier["catui-agent-id"] = spawn.scope.agent_id or ""
            carrier["catui-agent-type"] = spawn.scope.agent_type
        carrier["catui-attributes"] = json.dumps(dict(spawn.attributes))
        return carrier

    def from_carrier(self, carrier: Mapping[str, str]) -> _Spawn:
        context = _PROPAGATOR.extract(dict(carrier), context=otel_context.Context())
        scope = None
        if carrier.get("catui-prompt-id"):
            scope = _Scope(carrier.get("catui-session-id", ""), carrier["catui-prompt-id"],
                           carrier.get("catui-agent-id") or None, carrier.get("catui-agent-type", ""))
        try:
            attributes = json.loads(carrier.get("catui-attributes") or "{}")
        except json.JSONDecodeError:
            attributes = {}
        return _Spawn(context, scope, attributes if isinstance(attributes, dict) else {})

    # -- model requests and tool calls --------------------------------------------------------

    def model_request(self, *, model: str, query_source: str, effort: str | None, system: str) -> _Request:
        attributes = {"gen_ai.system": system, "gen_ai.provider.name": system, "gen_ai.operation.name": "chat",
                      "gen_ai.request.model": model, "model": model, "query_source": query_source, "effort": effort}
        span = self.tracer.start_span("claude_code.llm_request", attributes=_clean({**self.standard(), **attributes}))
        return _Request(self, span, model, query_source, effort)

    @contextlib.contextmanager
    def tool_call(self, *, name: str, tool_use_id: str, tool_input: Mapping[str, Any]) -> Iterator[_ToolCall]:
        attributes: dict[str, Any] = {
            "tool_name": name, "tool_use_id": tool_use_id, "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name, "gen_ai.tool.call.id": tool_use_id,
        }
        if self.settings.log_tool_details:
            attributes["tool_input"] = json.dumps(dict(tool_input), ensure_ascii=False, default=str)
        with self.tracer.start_as_current_span("claude_code.tool",
                                               attributes=_clean({**self.standard(), **attributes})) as span:
            call = _ToolCall(self, span, name, tool_use_id, dict(tool_input))
            token = _TOOL.set(call)
            try:
                yield call
            finally:
                _TOOL.reset(token)

    def tool_decision(self, *, name: str, tool_use_id: str, decision: str, source: str,
                      tool_input: Mapping[str, Any]) -> None:
        call = _TOOL.get()
        if call is not None and call.tool_use_id == tool_use_id:
            call.decision, call.source = decision, source
            call.span.set_attribute("decision", decision)
            call.span.set_attribute("decision_source", source)
        self.event("tool_decision", {"tool_name": name, "decision": decision, "source": source,
                                     "tool_use_id": tool_use_id})
        if name in EDIT_TOOLS:
            language = edit_language(str(tool_input.get("file_path") or tool_input.get("notebook_path") or ""))
            self.metrics.code_edit_decision.add(1, {**self.standard(), "tool_name": name, "decision": decision,
                                                    "source": source, "language": language})

    def subagent_completed(self, *, agent_id: str, agent_type: str, status: str, duration_ms: int,
                           total_tokens: int, tool_uses: int, is_async: bool) -> None:
        self.event("subagent_completed", {
            "subagent_id": agent_id, "subagent_type": agent_type, "status": status, "duration_ms": duration_ms,
            "total_tokens": total_tokens, "tool_use_count": tool_uses, "is_async": is_async,
        })

    def flush(self) -> None:
        self.providers.flush()


class _Run:
    def __init__(self, telemetry: OtelTelemetry, span: Span, scope: _Scope) -> None:
        self.telemetry, self.span, self.scope = telemetry, span, scope

    def finished(self, *, subtype: str, is_error: bool, num_turns: int, duration_ms: int) -> None:
        self.span.set_attribute("catui.run.subtype", subtype)
        self.span.set_attribute("catui.run.num_turns", num_turns)
        if is_error:
            self.span.set_status(Status(StatusCode.ERROR, subtype))
        if self.scope.agent_id is None:  # the time the CLI worked for the user on this prompt
            self.telemetry.metrics.active_time.add(duration_ms / 1000, {**self.telemetry.standard(self.scope),
                                                                        "type": "cli"})


class _Request:
    def __init__(self, telemetry: OtelTelemetry, span: Span, model: str, query_source: str, effort: str | None) -> None:
        self.telemetry, self.span, self.model = telemetry, span, model
        self.query_source, self.effort = query_source, effort
        self.started = time.monotonic()
        self.first_at: float | None = None
        self.ended = False

    def first_event(self) -> None:
        if self.first_at is None:
            self.first_at = time.monotonic()

    def _ms(self, at: float | None = None) -> int:
        return int(((at if at is not None else time.monotonic()) - self.started) * 1000)

    def finished(self, *, model: str, message: Mapping[str, Any]) -> None:
        tel = self.telemetry
        self.ended = True
        usage = message.get("usage") or {}
        tokens = {"input": int(usage.get("input_tokens") or 0), "output": int(usage.get("output_tokens") or 0),
                  "cacheRead": int(usage.get("cache_read_input_tokens") or 0),
                  "cacheCreation": int(usage.get("cache_creation_input_tokens") or 0)}
        cost = cost_usd(model, usage)
        duration_ms, ttft_ms = self._ms(), self._ms(self.first_at) if self.first_at is not None else None
        stop_reason = message.get("stop_reason")
        self.span.set_attributes(_clean({
            "gen_ai.response.model": model, "gen_ai.response.id": message.get("id"),
            "gen_ai.response.finish_reasons": [stop_reason] if stop_reason else None,
            "gen_ai.usage.input_tokens": tokens["input"], "gen_ai.usage.output_tokens": tokens["output"],
            "gen_ai.usage.cache_read.input_tokens": tokens["cacheRead"],
            "gen_ai.usage.cache_creation.input_tokens": tokens["cacheCreation"],
            "input_tokens": tokens["input"], "output_tokens": tokens["output"],
            "cache_read_tokens": tokens["cacheRead"], "cache_creation_tokens": tokens["cacheCreation"],
            "cost_usd": cost, "duration_ms": duration_ms, "ttft_ms": ttft_ms, "success": True,
        }))
        self.span.end()
        labels = {**tel.standard(), "model": model, "query_source": self.query_source, "effort": self.effort}
        labels = _clean(labels)
        for kind, count in tokens.items():
            if count:
                tel.metrics.token_usage.add(count, {**labels, "type": kind})
        tel.metrics.cost_usage.add(cost, labels)
        tel.event("api_request", {
            "model": model, "cost_usd": cost, "duration_ms": duration_ms, "ttft_ms": ttft_ms,
            "input_tokens": tokens["input"], "output_tokens": tokens["output"],
            "cache_read_tokens": tokens["cacheRead"], "cache_creation_tokens": tokens["cacheCreation"],
            "query_source": self.query_source, "effort": self.effort, "stop_reason": stop_reason,
        })
        content = message.get("content") or []
        text = "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
        tel.event("assistant_response", {
            "model": model, "message_id": message.get("id"), "stop_reason": stop_reason,
            "response_length": len(text),
            "tool_use_count": sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use"),
        })

    def failed(self, error: BaseException) -> None:
        if self.ended:  # the request had succeeded; what failed after it is not the API's
            return
        self.ended = True
        duration_ms = self._ms()
        if isinstance(error, Exception):
            status = getattr(error, "status", None)
            self.span.record_exception(error)
            self.span.set_status(Status(StatusCode.ERROR, str(error)[:200]))
            self.span.set_attributes(_clean({"duration_ms": duration_ms, "success": False, "status_code": status}))
            self.telemetry.event("api_error", {"model": self.model, "error": str(error), "status_code": status,
                                               "duration_ms": duration_ms, "query_source": self.query_source})
        else:  # cancelled (an abort, a stopped agent): not an API error
            self.span.set_attribute("catui.cancelled", True)
        self.span.end()


class _ToolCall:
    def __init__(self, telemetry: OtelTelemetry, span: Span, name: str, tool_use_id: str,
                 tool_input: dict[str, Any]) -> None:
        self.telemetry, self.span, self.name, self.tool_use_id = telemetry, span, name, tool_use_id
        self.tool_input = tool_input
        self.decision: str | None = None
        self.source: str | None = None
        self.started = time.monotonic()

    def finished(self, *, is_error: bool, content: Any, data: Any) -> None:
        tel = self.telemetry
        duration_ms = int((time.monotonic() - self.started) * 1000)
        size = len(content.encode("utf-8")) if isinstance(content, str) else len(json.dumps(content, default=str))
        self.span.set_attributes({"success": not is_error, "duration_ms": duration_ms, "tool_result_size_bytes": size})
        if is_error:
            self.span.set_status(Status(StatusCode.ERROR, content[:200] if isinstance(content, str) else "error"))
        attributes: dict[str, Any] = {
            "tool_name": self.name, "tool_use_id": self.tool_use_id, "success": not is_error,
            "duration_ms": duration_ms, "decision_type": self.decision, "decision_source": self.source,
            "tool_result_size_bytes": size, "error": content[:2000] if is_error and isinstance(content, str) else None,
        }
        if tel.settings.log_tool_details:
            attributes["tool_parameters"] = json.dumps(self.tool_input, ensure_ascii=False, default=str)
        tel.event("tool_result", attributes)
        if is_error:
            return
        changes = code_changes(self.name, self.tool_input, data)
        labels = tel.standard()
        for kind, count in (("added", changes.added), ("removed", changes.removed)):
            if count:
                tel.metrics.lines_of_code.add(count, {**labels, "type": kind})
        if changes.commits:
            tel.metrics.commit_count.add(changes.commits, labels)
        if changes.pull_requests:
            tel.metrics.pull_request_count.add(changes.pull_requests, labels)
