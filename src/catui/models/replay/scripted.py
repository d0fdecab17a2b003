"""A deterministic provider that replays a script of model turns.

It drives the offline demo and the tests; it never stands in for behaviour a
real provider must show. The same :class:`ScriptEngine` answers requests in
the test servers that speak the Anthropic and OpenAI wire protocols, so one
script format drives them all. The format is described in
``docs/scripted-provider.md``; in short::

    turns:
      - match: {last_user_contains: "list the files"}   # optional; all rules must hold
        content:
          - {type: text, text: "Let me look."}
          - {type: tool_use, name: Glob, input: {pattern: "**/*.py"}}
      - match: {last_is_tool_result: true}
        content: [{type: text, text: "Done."}]
        repeat: true                                      # may be used any number of times

Match rules: ``first_user_contains``, ``last_user_contains``,
``system_contains``, ``model_contains`` (a string, or a list whose strings
must all occur; case-sensitive), ``last_is_tool_result`` (bool),
``tools_include`` / ``tools_exclude`` (tool names that must / must not be
offered). A turn may also give ``stop_reason`` (default ``tool_use`` when it
has a tool_use block, else ``end_turn``), ``usage`` (``input_tokens``,
``output_tokens``, ``cache_read_input_tokens``,
``cache_creation_input_tokens``; estimated from lengths when absent; ``web_search_requests``
becomes ``usage.server_tool_use.web_search_requests``),
``delay_ms`` (wait before answering), ``error: {status, type, message}``
(answer with a provider error instead), ``repeat: true`` and ``name``.
Besides text, tool_use and thinking blocks, a turn may answer with the API's
server tool blocks ``server_tool_use`` {id, name, input} and
``web_search_tool_result`` {tool_use_id, content}, sent whole as the API does.

For each request the first turn that is not used up and whose rules all hold
is taken, atomically, so concurrent sessions can share one engine. tool_use
blocks without an ``id`` get ``toolu_<n>`` from a counter.

The parts: the request as match rules see it (:mod:`catui.models.replay.request`),
the script format (:mod:`catui.models.replay.format`), a turn's stream events
(:mod:`catui.models.replay.events`); this module selects turns and streams them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from catui.errors import ConfigurationError, ProviderError
from catui.models.base import ModelRequest, StreamEvent
from catui.models.replay.events import block_events
from catui.models.replay.format import (
    BLOCK_TYPES,
    MATCH_KEYS,
    RETRYABLE_STATUSES,
    STOP_REASONS,
    TURN_KEYS,
    ScriptTurn,
    load_script_file,
    parse_turn,
    script_error,
)
from catui.models.replay.request import RequestView

__all__ = [
    "BLOCK_TYPES", "MATCH_KEYS", "RETRYABLE_STATUSES", "STOP_REASONS", "TURN_KEYS", "RequestView", "ScriptEngine",
    "ScriptNoMatchError", "ScriptReply", "ScriptTurn", "ScriptedProvider", "load_script_file",
]


@dataclass(frozen=True)
class ScriptReply:
    """The answer to one request: the chosen turn, and either stream events or an error to raise."""

    turn: ScriptTurn
    events: list[StreamEvent]
    error: ProviderError | None = None


class ScriptNoMatchError(ProviderError):
    """No turn of the script fits the request."""


class ScriptEngine:
    """Turn selection and stream-event generation for a script, shared by providers and test servers.

    ``script`` is the parsed document (a mapping with ``turns``, or the list
    of turns itself); ``source`` names it in error messages. All selection
    and id allocation happen under one lock, so any number of asyncio tasks
    or threads may share an engine.
    """

    def __init__(
        self, script: Mapping[str, Any] | Sequence[Any], *, source: str = "<in-memory script>"
    ) -> None:
        self.source = source
        turns_raw = script.get("turns") if isinstance(script, Mapping) else script
        if not isinstance(turns_raw, list):
            raise script_error(source, "top level", "expected a `turns:` list")
        self.turns: tuple[ScriptTurn, ...] = tuple(
            parse_turn(t, i + 1, source) for i, t in enumerate(turns_raw)
        )
        self._used: set[int] = set()
        self._lock = threading.Lock()
        self._tool_counter = 0
        self._message_counter = 0
        self.history: list[tuple[RequestView, ScriptTurn]] = []

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ScriptEngine:
        data = load_script_file(path)
        if data is None:
            raise ConfigurationError(f"invalid script {path}: the file is empty; it needs a `turns:` list")
        return cls(data, source=str(path))

    @property
    def unused_turns(self) -> list[ScriptTurn]:
        """Turns not yet taken (repeatable turns are always listed)."""
        with self._lock:
            return [t for t in self.turns if t.repeat or t.number not in self._used]

    def select(self, view: RequestView) -> ScriptTurn:
        """Take the first turn that is still available and matches ``view``."""
        with self._lock:
            return self._select_locked(view)

    def _select_locked(self, view: RequestView) -> ScriptTurn:
        for turn in self.turns:
            if (turn.repeat or turn.number not in self._used) and turn.matches(view):
                if not turn.repeat:
                    self._used.add(turn.number)
                self.history.append((view, turn))
                return turn
        # The context reminder catui puts before a prompt would fill the snippet; show the user's own words.
        visible = re.sub(r"<system-reminder>.*?</system-reminder>", " ", view.last_user_text, flags=re.S)
        snippet = " ".join(visible.split())[:80]
        raise ScriptNoMatchError(
            f"script {self.source} has no turn left for the request whose last user message is {snippet!r} "
            f"(model {view.model or '?'}, {len(self.turns)} turns, {len(self._used)} used); "
            "add a turn whose `match` rules fit it"
        )

    def respond(self, view: RequestView, *, model: str | None = None) -> ScriptReply:
        """Select a turn for ``view`` and build its events (or its error), ids allocated atomically."""
        with self._lock:
            turn = self._select_locked(view)
            if turn.error is not None:
                status = int(turn.error.get("status", 500))
                message = (
                    f"scripted provider error from {self.source} {turn.label()}: "
                    f"{status} {turn.error.get('type', 'api_error')}: {turn.error.get('message', '')}"
                )
                return ScriptReply(
                    turn, [], ProviderError(message, status=status, retryable=status in RETRYABLE_STATUSES)
                )
            return ScriptReply(turn, self._events_locked(turn, model or view.model, view))

    def _events_locked(self, turn: ScriptTurn, model: str, view: RequestView) -> list[StreamEvent]:
        self._message_counter += 1
        blocks: list[dict[str, Any]] = []
        for block in turn.content:
            if block["type"] == "tool_use" and "id" not in block:
                self._tool_counter += 1
                block = {**block, "id": f"toolu_{self._tool_counter:02d}"}
            blocks.append(dict(block))
        stop_reason = turn.stop_reason or (
            "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        )
        output_chars = sum(
            len(b.get("text", "") or b.get("thinking", "") or json.dumps(b.get("input", {}))) for b in blocks
        )
        usage: dict[str, Any] = {
            "input_tokens": turn.usage.get("input_tokens", max(1, view.size_chars // 4)),
            "cache_creation_input_tokens": turn.usage.get("cache_creation_input_tokens", 0),
            "cache_read_input_tokens": turn.usage.get("cache_read_input_tokens", 0),
            "output_tokens": 1,
        }
        if "web_search_requests" in turn.usage:
            usage["server_tool_use"] = {"web_search_requests": turn.usage["web_search_requests"]}
        output_tokens = turn.usage.get("output_tokens", max(1, output_chars // 4))
        events: list[StreamEvent] = [
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_scripted_{self._message_counter:02d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            }
        ]
        for index, block in enumerate(blocks):
            events.extend(block_events(index, block))
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            }
        )
        events.append({"type": "message_stop"})
        return events


class ScriptedProvider:
    """Replays a script: a YAML or JSON file, an in-memory mapping, or a shared :class:`ScriptEngine`."""

    name = "scripted"

    def __init__(self, script: str | os.PathLike[str] | Mapping[str, Any] | ScriptEngine) -> None:
        if isinstance(script, ScriptEngine):
            self.engine = script
        elif isinstance(script, Mapping):
            self.engine = ScriptEngine(script)
        else:
            self.engine = ScriptEngine.from_file(script)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield the events of the turn chosen for ``request``; raise its error or a no-match error."""
        reply = self.engine.respond(RequestView.from_request(request), model=request.model)
        if reply.turn.delay_ms:
            await asyncio.sleep(reply.turn.delay_ms / 1000.0)
        if reply.error is not None:
            raise reply.error
        for event in reply.events:
            # Hand control back between events, as a network stream would.
            await asyncio.sleep(0)
            yield event

    async def aclose(self) -> None:
        """Nothing to release."""
