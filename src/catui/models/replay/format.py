"""The scripted provider's script format: reading a script file and checking each turn of it.

Described in ``docs/scripted-provider.md`` and in :mod:`catui.models.replay.scripted`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError
from catui.models.replay.request import RequestView

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


def script_error(source: str, where: str, problem: str) -> ConfigurationError:
    """The one-line error for a bad script: which script, where in it, what is wrong."""
    return ConfigurationError(f"invalid script {source}: {where}: {problem}")


def _string_list(value: Any, source: str, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise script_error(source, where, "expected a string or a list of strings")


def _parse_match(raw: Any, source: str, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise script_error(source, where, "`match` must be a mapping of rules")
    unknown = sorted(set(raw) - MATCH_KEYS)
    if unknown:
        raise script_error(
            source, where, f"unknown match rule {unknown[0]!r} (known: {', '.join(sorted(MATCH_KEYS))})"
        )
    rules: dict[str, Any] = {}
    for key, value in raw.items():
        rule_where = f"{where}: match.{key}"
        if key == "last_is_tool_result":
            if not isinstance(value, bool):
                raise script_error(source, rule_where, "expected true or false")
            rules[key] = value
        else:
            rules[key] = tuple(_string_list(value, source, rule_where))
    return rules


def _parse_block(raw: Any, source: str, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping) or raw.get("type") not in BLOCK_TYPES:
        raise script_error(source, where, f"a content block needs `type` one of {', '.join(sorted(BLOCK_TYPES))}")
    kind = raw["type"]
    if kind == "text":
        if not isinstance(raw.get("text"), str):
            raise script_error(source, where, "a text block needs a string `text`")
        return {"type": "text", "text": raw["text"]}
    if kind == "thinking":
        if not isinstance(raw.get("thinking"), str):
            raise script_error(source, where, "a thinking block needs a string `thinking`")
        return {
            "type": "thinking",
            "thinking": raw["thinking"],
            "signature": str(raw.get("signature", "scripted")),
        }
    if kind == "web_search_tool_result":
        if not isinstance(raw.get("tool_use_id"), str) or not isinstance(raw.get("content"), (list, Mapping)):
            raise script_error(source, where, "a web_search_tool_result block needs `tool_use_id` and `content`")
        return {"type": kind, "tool_use_id": raw["tool_use_id"], "content": raw["content"]}
    if kind == "server_tool_use":
        if not isinstance(raw.get("id"), str) or not isinstance(raw.get("name"), str):
            raise script_error(source, where, "a server_tool_use block needs a string `id` and `name`")
        return {"type": kind, "id": raw["id"], "name": raw["name"], "input": dict(raw.get("input") or {})}
    if not isinstance(raw.get("name"), str) or not raw["name"]:
        raise script_error(source, where, "a tool_use block needs a `name`")
    tool_input = raw.get("input", {})
    if not isinstance(tool_input, Mapping):
        raise script_error(source, where, "a tool_use block's `input` must be a mapping")
    block: dict[str, Any] = {"type": "tool_use", "name": raw["name"], "input": dict(tool_input)}
    if raw.get("id") is not None:
        block["id"] = str(raw["id"])
    return block


def parse_turn(raw: Any, number: int, source: str) -> ScriptTurn:
    """Turn number ``number`` of the script, checked; a ConfigurationError names what is wrong."""
    where = f"turn {number}"
    if not isinstance(raw, Mapping):
        raise script_error(source, where, "each turn must be a mapping")
    unknown = sorted(set(raw) - TURN_KEYS)
    if unknown:
        raise script_error(source, where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(TURN_KEYS))})")
    content_raw = raw.get("content", [])
    if not isinstance(content_raw, list):
        raise script_error(source, where, "`content` must be a list of blocks")
    if not content_raw and raw.get("error") is None:
        raise script_error(source, where, "a turn needs `content` blocks or an `error`")
    content = tuple(_parse_block(b, source, f"{where}: content[{i}]") for i, b in enumerate(content_raw))
    stop_reason = raw.get("stop_reason")
    if stop_reason is not None and stop_reason not in STOP_REASONS:
        raise script_error(
            source, where, f"unknown stop_reason {stop_reason!r} (known: {', '.join(sorted(STOP_REASONS))})"
        )
    usage = raw.get("usage") or {}
    if not isinstance(usage, Mapping) or not all(isinstance(v, int) for v in usage.values()):
        raise script_error(source, where, "`usage` must map token counts to integers")
    error = raw.get("error")
    if error is not None and (
        not isinstance(error, Mapping) or not isinstance(error.get("status", 500), int)
    ):
        raise script_error(source, where, "`error` must be a mapping {status: int, type: str, message: str}")
    delay = raw.get("delay_ms", 0)
    if not isinstance(delay, (int, float)) or delay < 0:
        raise script_error(source, where, "`delay_ms` must be a number of milliseconds")
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
