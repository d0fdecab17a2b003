"""What the agent loop tells telemetry: the interface, without OpenTelemetry.

A :class:`~catui.session.config.SessionConfig` holds a :class:`RunTelemetry`
(or None when telemetry is off, the default: then the loop makes no call at
all). The one implementation, :class:`catui.telemetry.otel_telemetry.OtelTelemetry`,
imports the OpenTelemetry SDK. The session modules import this one for the
type checker only, so telemetry costs nothing at start-up when it is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol


class SpawnContext(Protocol):
    """Where a child agent hangs in the trace (its parent's span, prompt id and agent), taken by the call that
    starts it (:meth:`RunTelemetry.spawn_context`). Opaque to the loop, which hands it back to
    :meth:`RunTelemetry.run`; the implementation reads its own fields."""

    @property
    def attributes(self) -> Mapping[str, Any]:
        """Attributes for the child agent's span."""
        ...


class RunObservation(Protocol):
    def finished(self, *, subtype: str, is_error: bool, num_turns: int, duration_ms: int) -> None:
        """How the run ended (its ResultEvent's fields)."""
        ...


class ModelRequestObservation(Protocol):
    """One model request in flight: its span, its timings."""

    def first_event(self) -> None:
        """The stream's first event arrived (time to first token)."""
        ...

    def finished(self, *, model: str, message: Mapping[str, Any]) -> None:
        """The request ended with this assistant message (its usage, stop reason, id)."""
        ...

    def failed(self, error: BaseException) -> None: ...


class ToolCallObservation(Protocol):
    def finished(self, *, is_error: bool, content: Any, data: Any) -> None: ...


class RunTelemetry(Protocol):
    """Spans, metrics and events of a process's runs (see the module docstring)."""

    def run(self, *, session_id: str, agent_id: str | None, agent_type: str | None, prompt: Any, model: str,
            spawned_from: SpawnContext | None) -> AbstractContextManager[RunObservation]:
        """One run of a session: the turn's root span (the main session: ``agent_id`` None) or the agent's
        span (a sub-agent), current while the run lasts. ``spawned_from``: :meth:`spawn_context` of the call
        that started the agent (None for the main session)."""
        ...

    def spawn_context(self, **attributes: Any) -> SpawnContext:
        """Where a child agent being built now hangs (the current span, prompt id and agent), with
        attributes for its span. Opaque; give it back to :meth:`run` as ``spawned_from``."""
        ...

    def carrier(self, spawned_from: SpawnContext | None) -> dict[str, str]:
        """A spawn context as strings (W3C ``traceparent`` and catui's ids), for a remote worker (None: the
        current one)."""
        ...

    def from_carrier(self, carrier: Mapping[str, str]) -> SpawnContext:
        """The spawn context a :meth:`carrier` describes (on the worker)."""
        ...

    def model_request(self, *, model: str, query_source: str, effort: str | None,
                      system: str) -> ModelRequestObservation:
        """A model request starting now (``system``: the provider, GenAI's ``gen_ai.system``)."""
        ...

    def tool_call(self, *, name: str, tool_use_id: str,
                  tool_input: Mapping[str, Any]) -> AbstractContextManager[ToolCallObservation]: ...

    def tool_decision(self, *, name: str, tool_use_id: str, decision: str, source: str,
                      tool_input: Mapping[str, Any]) -> None:
        """A permission decision (``accept``/``reject``) and where it came from (Claude Code's ``source``)."""
        ...

    def subagent_completed(self, *, agent_id: str, agent_type: str, status: str, duration_ms: int,
                           total_tokens: int, tool_uses: int, is_async: bool) -> None: ...

    def flush(self) -> None:
        """Export what is buffered now (the end of a CLI run, a worker's finished job)."""
        ...
