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
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError, ProviderError
from catui.models.base import ModelRequest, StreamEvent

TURN_KEYS = frozenset({"match", "content", "stop_reason", "usage", "delay_ms", "error", "repeat", "name"})
MATCH_KEYS = frozenset(
    {
        "first_user_contains",
        "last_user_contains",
        "last_is_tool_result",
        "tools_include",
        "tools_exclude",
        "model_contains",
        "system_contains",
    }
)
BLOCK_TYPES = frozenset({"text", "tool_use", "thinking", "server_tool_use", "web_search_tool_result"})
STOP_REASONS = frozenset({"end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"})
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def _block_text(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return content
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return ""


def _message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(t for t in (_block_text(b) for b in content if isinstance(b, Mapping)) if t)


@dataclass(frozen=True)
class RequestView:
    """What turn selection looks at in a request, whatever wire format it came in."""

    model: str = ""
    system_text: str = ""
    first_user_text: str = ""
    last_user_text: str = ""
    last_is_tool_result: bool = False
    tool_names: tuple[str, ...] = ()
    size_chars: int = 0

    @classmethod
    def from_anthropic(cls, body: Mapping[str, Any]) -> RequestView:
        """From an Anthropic Messages request body (``model``, ``system``, ``messages``, ``tools``).

        The text of a user message includes the text inside its tool_result blocks.
        """
        system = body.get("system") or []
        system_text = system if isinstance(system, str) else "\n".join(_block_text(b) for b in system)
        messages: Sequence[Mapping[str, Any]] = body.get("messages") or []
        users = [m for m in messages if m.get("role") == "user"]
        last = messages[-1] if messages else {}
        last_content = last.get("content", "")
        last_is_tool_result = (
            last.get("role") == "user"
            and not isinstance(last_content, str)
            and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in last_content)
        )
        return cls(
            model=str(body.get("model", "")),
            system_text=system_text,
            first_user_text=_message_text(users[0]) if users else "",
            last_user_text=_message_text(users[-1]) if users else "",
            last_is_tool_result=bool(last_is_tool_result),
            tool_names=tuple(str(t.get("name", "")) for t in body.get("tools") or []),
            size_chars=len(json.dumps([system, list(messages), body.get("tools") or []], default=str)),
        )

    @classmethod
    def from_request(cls, request: ModelRequest) -> RequestView:
        return cls.from_anthropic(
            {
                "model": request.model,
                "system": request.system,
                "messages": request.messages,
                "tools": request.tools,
            }
        )


@dataclass(frozen=True)
class ScriptTurn:
    """One validated turn of a script (``number`` is 1-based, as people count)."""

    number: int
    match: Mapping[str, Any]
    content: tuple[Mapping[str, Any], ...]
    stop_reason: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)
    delay_ms: int = 0
    error: Mapping[str, Any] | None = None
    repeat: bool = False
    name: str | None = None

    def label(self) -> str:
        return f"turn {self.number}" + (f" ({self.name})" if self.name else "")

    def matches(self, view: RequestView) -> bool:
        """Whether every rule of this turn holds for ``view``."""
        rules = self.match

        def contains(haystack: str, wanted: Any) -> bool:
            needles = [wanted] if isinstance(wanted, str) else list(wanted)
            return all(str(n) in haystack for n in needles)

        checks = {
            "first_user_contains": lambda v: contains(view.first_user_text, v),
            "last_user_contains": lambda v: contains(view.last_user_text, v),
            "system_contains": lambda v: contains(view.system_text, v),
            "model_contains": lambda v: contains(view.model, v),
            "last_is_tool_result": lambda v: view.last_is_tool_result == bool(v),
            "tools_include": lambda v: all(name in view.tool_names for name in v),
            "tools_exclude": lambda v: not any(name in view.tool_names for name in v),
        }
        return all(checks[key](value) for key, value in rules.items())


@dataclass(frozen=True)
class ScriptReply:
    """The answer to one request: the chosen turn, and either stream events or an error to raise."""

    turn: ScriptTurn
    events: list[StreamEvent]
    error: ProviderError | None = None


class ScriptNoMatchError(ProviderError):
    """No turn of the script fits the request."""


def _fail(source: str, where: str, problem: str) -> ConfigurationError:
    return ConfigurationError(f"invalid script {source}: {where}: {problem}")


def _string_list(value: Any, source: str, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise _fail(source, where, "expected a string or a list of strings")


def _parse_match(raw: Any, source: str, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _fail(source, where, "`match` must be a mapping of rules")
    unknown = sorted(set(raw) - MATCH_KEYS)
    if unknown:
        raise _fail(
            source, where, f"unknown match rule {unknown[0]!r} (known: {', '.join(sorted(MATCH_KEYS))})"
        )
    rules: dict[str, Any] = {}
    for key, value in raw.items():
        rule_where = f"{where}: match.{key}"
        if key == "last_is_tool_result":
            if not isinstance(value, bool):
                raise _fail(source, rule_where, "expected true or false")
            rules[key] = value
        else:
            rules[key] = tuple(_string_list(value, source, rule_where))
    return rules


def _parse_block(raw: Any, source: str, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping) or raw.get("type") not in BLOCK_TYPES:
        raise _fail(source, where, f"a content block needs `type` one of {', '.join(sorted(BLOCK_TYPES))}")
    kind = raw["type"]
    if kind == "text":
        if not isinstance(raw.get("text"), str):
            raise _fail(source, where, "a text block needs a string `text`")
        return {"type": "text", "text": raw["text"]}
    if kind == "thinking":
        if not isinstance(raw.get("thinking"), str):
            raise _fail(source, where, "a thinking block needs a string `thinking`")
        return {
            "type": "thinking",
            "thinking": raw["thinking"],
            "signature": str(raw.get("signature", "scripted")),
        }
    if kind == "web_search_tool_result":
        if not isinstance(raw.get("tool_use_id"), str) or not isinstance(raw.get("content"), (list, Mapping)):
            raise _fail(source, where, "a web_search_tool_result block needs `tool_use_id` and `content`")
        return {"type": kind, "tool_use_id": raw["tool_use_id"], "content": raw["content"]}
    if kind == "server_tool_use":
        if not isinstance(raw.get("id"), str) or not isinstance(raw.get("name"), str):
            raise _fail(source, where, "a server_tool_use block needs a string `id` and `name`")
        return {"type": kind, "id": raw["id"], "name": raw["name"], "input": dict(raw.get("input") or {})}
    if not isinstance(raw.get("name"), str) or not raw["name"]:
        raise _fail(source, where, "a tool_use block needs a `name`")
    tool_input = raw.get("input", {})
    if not isinstance(tool_input, Mapping):
        raise _fail(source, where, "a tool_use block's `input` must be a mapping")
    block: dict[str, Any] = {"type": "tool_use", "name": raw["name"], "input": dict(tool_input)}
    if raw.get("id") is not None:
        block["id"] = str(raw["id"])
    return block


def _parse_turn(raw: Any, number: int, source: str) -> ScriptTurn:
    where = f"turn {number}"
    if not isinstance(raw, Mapping):
        raise _fail(source, where, "each turn must be a mapping")
    unknown = sorted(set(raw) - TURN_KEYS)
    if unknown:
        raise _fail(source, where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(TURN_KEYS))})")
    content_raw = raw.get("content", [])
    if not isinstance(content_raw, list):
        raise _fail(source, where, "`content` must be a list of blocks")
    if not content_raw and raw.get("error") is None:
        raise _fail(source, where, "a turn needs `content` blocks or an `error`")
    content = tuple(_parse_block(b, source, f"{where}: content[{i}]") for i, b in enumerate(content_raw))
    stop_reason = raw.get("stop_reason")
    if stop_reason is not None and stop_reason not in STOP_REASONS:
        raise _fail(
            source, where, f"unknown stop_reason {stop_reason!r} (known: {', '.join(sorted(STOP_REASONS))})"
        )
    usage = raw.get("usage") or {}
    if not isinstance(usage, Mapping) or not all(isinstance(v, int) for v in usage.values()):
        raise _fail(source, where, "`usage` must map token counts to integers")
    error = raw.get("error")
    if error is not None and (
        not isinstance(error, Mapping) or not isinstance(error.get("status", 500), int)
    ):
        raise _fail(source, where, "`error` must be a mapping {status: int, type: str, message: str}")
    delay = raw.get("delay_ms", 0)
    if not isinstance(delay, (int, float)) or delay < 0:
        raise _fail(source, where, "`delay_ms` must be a number of milliseconds")
    return ScriptTurn(
        number=number,
        match=_parse_match(raw.get("match"), source, where),
        content=content,
        stop_reason=stop_reason,
        usage=dict(usage),
        delay_ms=int(delay),
        error=dict(error) if error is not None else None,
        repeat=bool(raw.get("repeat", False)),
        name=str(raw["name"]) if raw.get("name") is not None else None,
    )


def load_script_file(path: str | os.PathLike[str]) -> Any:
    """Read a YAML or JSON script file; errors name the file (and the line for YAML)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigurationError(f"cannot read script {file}: {err.strerror or err}") from err
    if file.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise ConfigurationError(f"invalid script {file}: line {err.lineno}: {err.msg}") from err
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f"line {mark.line + 1}: " if mark is not None else ""
        raise ConfigurationError(
            f"invalid script {file}: {line}{getattr(err, 'problem', None) or err}"
        ) from err


def _chunks(text: str, pieces: int = 3) -> list[str]:
    """Split text into up to ``pieces`` parts so that a stream carries several deltas, as real ones do."""
    if len(text) < 2 * pieces:
        return [text]
    size = -(-len(text) // pieces)
    return [text[i : i + size] for i in range(0, len(text), size)]


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
            raise _fail(source, "top level", "expected a `turns:` list")
        self.turns: tuple[ScriptTurn, ...] = tuple(
            _parse_turn(t, i + 1, source) for i, t in enumerate(turns_raw)
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
            events.extend(_block_events(index, block))
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            }
        )
        events.append({"type": "message_stop"})
        return events


def _block_events(index: int, block: Mapping[str, Any]) -> Iterable[StreamEvent]:
    kind = block["type"]
    if kind == "text":
        yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        for part in _chunks(block["text"]):
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": part},
            }
    elif kind == "thinking":
        opening = {"type": "thinking", "thinking": "", "signature": ""}
        yield {"type": "content_block_start", "index": index, "content_block": opening}
        for part in _chunks(block["thinking"]):
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "thinking_delta", "thinking": part},
            }
        yield {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "signature_delta", "signature": block.get("signature", "scripted")},
        }
    elif kind == "web_search_tool_result":
        yield {"type": "content_block_start", "index": index, "content_block": dict(block)}
    else:
        start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
        yield {"type": "content_block_start", "index": index, "content_block": start}
        # The API opens with an empty fragment too; the accumulator must cope with both.
        for part in ["", *_chunks(json.dumps(block["input"]))]:
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
    yield {"type": "content_block_stop", "index": index}


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
