"""Reading hook configuration: settings files and agent definitions, in Claude Code's format.

The shape is the one Claude Code users already have in ``.claude/settings.json``::

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Write",
                               "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}}

Each event holds a list of matcher groups; each group holds a list of
hooks. Only ``command`` hooks run in catui; other types (``prompt``,
``agent``, ``http``, ``mcp_tool``) are skipped with a warning. A malformed
entry never stops catui: it is left out and a one-line warning names the
file, the place inside it and what to write instead.

Hooks from every settings level apply together (user, project, local and
``--settings`` are concatenated, not replaced), as in Claude Code. An agent
definition's ``hooks`` apply only while that sub-agent runs; its ``Stop``
hooks become ``SubagentStop`` hooks, because for a sub-agent "stop" means the
sub-agent finishing.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from catui.config.settings import json_type_name

if TYPE_CHECKING:
    from catui.agents.definition import AgentDefinition
    from catui.config.settings import Settings

# Claude Code 2.1.92 gives command hooks ten minutes unless they say otherwise.
DEFAULT_TIMEOUT_S = 600.0

# Events whose hooks catui runs through HookRunner.
RUN_EVENTS: frozenset[str] = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "UserPromptSubmit",
        "Stop",
        "SubagentStart",
        "SubagentStop",
        "SessionStart",
        "SessionEnd",
        "PreCompact",
        "PostCompact",
    }
)
# Events Claude Code knows that catui either runs elsewhere (WorktreeCreate/Remove in catui.worktree)
# or does not have a moment for; configuring them is not a mistake, so they get no warning.
OTHER_KNOWN_EVENTS: frozenset[str] = frozenset(
    {
        "WorktreeCreate",
        "WorktreeRemove",
        "Notification",
        "PermissionRequest",
        "PermissionDenied",
        "Setup",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
        "ConfigChange",
        "InstructionsLoaded",
        "Elicitation",
        "ElicitationResult",
        "StopFailure",
        "CwdChanged",
        "FileChanged",
    }
)
KNOWN_EVENTS: frozenset[str] = RUN_EVENTS | OTHER_KNOWN_EVENTS

# What each event's matcher is compared with; events not listed ignore their matcher.
MATCHER_SUBJECT: dict[str, str] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
}

# A matcher made only of these characters is a name or a `|`-separated list of names, compared exactly;
# anything else is a regular expression searched in the subject (so `mcp__github__.*` works).
_PLAIN_MATCHER = re.compile(r"[A-Za-z0-9_|]+")


@dataclass(frozen=True)
class CommandHook:
    """One shell command to run for an event; ``where`` says where it was configured (for messages)."""

    command: str
    timeout: float = DEFAULT_TIMEOUT_S
    where: str = ""
    run_async: bool = False


HookCallbackFunction = Callable[[dict[str, Any], str | None, dict[str, Any]], Awaitable[Any]]
"""``async def hook(input_data, tool_use_id, context) -> dict`` (claude-agent-sdk's HookCallback)."""


@dataclass(frozen=True)
class CallbackHook:
    """A Python coroutine function run for an event instead of a shell command.

    It gets the event's input (the JSON a command hook reads on stdin), the
    tool call's id for tool events, and a context dict; it returns the JSON
    answer a command hook would print (``{}`` for no opinion). Used by the
    SDK's ``hooks=`` option and by the CLI's control protocol, where the
    function forwards the call to the program driving catui.
    """

    callback: HookCallbackFunction
    timeout: float = DEFAULT_TIMEOUT_S
    where: str = ""
    name: str = ""
    run_async: bool = False  # never: a callback's answer is always read

    @property
    def command(self) -> str:
        """How messages name the hook (a command hook shows its command)."""
        return self.name or getattr(self.callback, "__qualname__", "callback")


Hook = CommandHook | CallbackHook


@dataclass(frozen=True)
class HookMatcher:
    """A matcher group: the hooks that run when ``matcher`` accepts the event's subject."""

    matcher: str | None
    hooks: tuple[Hook, ...]
    pattern: re.Pattern[str] | None = None

    def matches(self, subject: str | None) -> bool:
        """Whether this group applies; an empty matcher or ``*`` applies to everything."""
        matcher = self.matcher
        if not matcher or matcher == "*":
            return True
        if subject is None:
            return False
        if self.pattern is None:
            return subject in matcher.split("|")
        return self.pattern.search(subject) is not None


@dataclass
class HooksConfig:
    """Hooks by event name, plus the warnings met while reading them."""

    events: dict[str, list[HookMatcher]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not any(group.hooks for groups in self.events.values() for group in groups)

    def has(self, event: str) -> bool:
        """Whether any hook is configured for ``event`` (lets callers skip building a payload)."""
        return any(group.hooks for group in self.events.get(event, ()))

    def hooks_for(self, event: str, subject: str | None = None, *, also: Sequence[str] = ()) -> list[Hook]:
        """The hooks to run for ``event``, in configuration order, each distinct command once.

        ``also`` are other names of the subject (a tool's legacy names: ``Task`` for ``Agent``).
        """
        uses_matcher = event in MATCHER_SUBJECT
        seen: set[object] = set()
        found: list[Hook] = []
        for group in self.events.get(event, ()):
            if uses_matcher and not (group.matches(subject) or any(group.matches(name) for name in also)):
                continue
            for hook in group.hooks:
                # the same command configured twice runs once; a callback is one hook per registration
                key: object = hook.command if isinstance(hook, CommandHook) else id(hook)
                if key not in seen:
                    seen.add(key)
                    found.append(hook)
        return found

    def merged_with(self, other: HooksConfig) -> HooksConfig:
        """A new config with ``other``'s groups after this one's."""
        events = {name: list(groups) for name, groups in self.events.items()}
        for name, groups in other.events.items():
            events.setdefault(name, []).extend(groups)
        return HooksConfig(events, [*self.warnings, *other.warnings])


def parse_hooks(raw: Any, *, source: str, rename: Mapping[str, str] | None = None) -> HooksConfig:
    """Read one ``hooks`` object (from a settings file or an agent definition).

    ``source`` names where it came from in warnings. ``rename`` maps event
    names to the ones they stand for (an agent's ``Stop`` → ``SubagentStop``).
    Never raises: every problem becomes a warning and the faulty part is left out.
    """
    config = HooksConfig()
    if raw is None:
        return config
    if not isinstance(raw, Mapping):
        config.warnings.append(
            f"{source}: 'hooks' must be an object of event names, like "
            f'{{"PreToolUse": [...]}}, not {json_type_name(raw)}; all its hooks are ignored'
        )
        return config
    for event, groups in raw.items():
        event_name = str(event)
        if event_name not in KNOWN_EVENTS:
            close = _closest_event(event_name)
            hint = f" (did you mean '{close}'?)" if close else ""
            config.warnings.append(f"{source}: 'hooks.{event_name}' is not a hook event{hint}; it is ignored")
            continue
        parsed = _parse_groups(groups, event_name, source, config.warnings)
        if parsed:
            target = (rename or {}).get(event_name, event_name)
            config.events.setdefault(target, []).extend(parsed)
    return config


def hooks_from_settings(settings: Settings | Mapping[str, Any]) -> HooksConfig:
    """The hooks of a :class:`~catui.config.settings.Settings` (every file, concatenated) or of a plain dict.

    ``disableAllHooks: true`` in the merged settings turns every hook off.
    """
    merged = getattr(settings, "merged", settings)
    if isinstance(merged, Mapping) and merged.get("disableAllHooks") is True:
        return HooksConfig()
    files = getattr(settings, "files", None)
    if files is None:
        return parse_hooks(merged.get("hooks") if isinstance(merged, Mapping) else None, source="settings")
    config = HooksConfig()
    for loaded in files:
        data = getattr(loaded, "data", {})
        if isinstance(data, Mapping) and "hooks" in data:
            config = config.merged_with(parse_hooks(data["hooks"], source=str(getattr(loaded, "label", "settings"))))
    return config


def hooks_from_agent(definition: AgentDefinition) -> HooksConfig:
    """The hooks an agent definition declares (active only while it runs); ``Stop`` means ``SubagentStop``.

    Plugin agents never get here with hooks: their loader drops the field, so
    that installing a plugin cannot run commands on the user's machine.
    """
    raw = getattr(definition, "hooks", None)
    if not raw:
        return HooksConfig()
    where = getattr(definition, "filename", None) or getattr(definition, "agent_type", "agent")
    return parse_hooks(raw, source=f"agent '{getattr(definition, 'agent_type', '?')}' ({where})",
                       rename={"Stop": "SubagentStop"})


def matcher_pattern(matcher: str | None) -> re.Pattern[str] | None:
    """The regular expression of a matcher, or None for a plain name list (``Bash|Write``), ``*`` or none.

    Raises ``re.error`` for a pattern that does not compile.
    """
    if matcher and matcher != "*" and not _PLAIN_MATCHER.fullmatch(matcher):
        return re.compile(matcher)
    return None


def _parse_groups(groups: Any, event: str, source: str, warnings: list[str]) -> list[HookMatcher]:
    example = '[{"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}]'
    if not isinstance(groups, list):
        warnings.append(f"{source}: 'hooks.{event}' must be a list like {example}; it is ignored")
        return []
    parsed: list[HookMatcher] = []
    for index, group in enumerate(groups):
        where = f"hooks.{event}[{index}]"
        if not isinstance(group, Mapping):
            warnings.append(f"{source}: '{where}' must be an object with 'matcher' and 'hooks'; it is ignored")
            continue
        matcher = group.get("matcher")
        if matcher is not None and not isinstance(matcher, str):
            warnings.append(f"{source}: '{where}.matcher' must be a string (a tool name or pattern); "
                            "the group is ignored")
            continue
        try:
            pattern = matcher_pattern(matcher)
        except re.error as exc:
            warnings.append(f"{source}: '{where}.matcher' {matcher!r} is not a valid regular expression "
                            f"({exc}); the group is ignored")
            continue
        entries = group.get("hooks")
        if not isinstance(entries, list):
            warnings.append(f"{source}: '{where}' needs a 'hooks' list of commands, like "
                            '[{"type": "command", "command": "..."}]; the group is ignored')
            continue
        hooks = tuple(h for i, e in enumerate(entries) if (h := _parse_hook(e, f"{where}.hooks[{i}]", source,
                                                                              warnings)) is not None)
        if hooks:
            parsed.append(HookMatcher(matcher or None, hooks, pattern))
    return parsed


def _parse_hook(entry: Any, where: str, source: str, warnings: list[str]) -> CommandHook | None:
    if not isinstance(entry, Mapping):
        warnings.append(f"{source}: '{where}' must be an object like "
                        '{"type": "command", "command": "..."}; it is ignored')
        return None
    kind = entry.get("type", "command")
    if kind != "command":
        warnings.append(f"{source}: '{where}' has type {kind!r}; catui runs only \"command\" hooks, "
                        "so it is skipped")
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        warnings.append(f"{source}: '{where}.command' must be a non-empty string; the hook is ignored")
        return None
    timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        warnings.append(f"{source}: '{where}.timeout' must be a positive number of seconds; "
                        f"using {DEFAULT_TIMEOUT_S:g}")
        timeout = DEFAULT_TIMEOUT_S
    return CommandHook(command=command, timeout=float(timeout), where=f"{source}: {where}",
                       run_async=entry.get("async") is True)


def _closest_event(name: str) -> str | None:
    lowered = name.lower().replace("_", "").replace("-", "")
    for known in sorted(KNOWN_EVENTS):
        if known.lower() == lowered:
            return known

    close = difflib.get_close_matches(name, sorted(KNOWN_EVENTS), n=1, cutoff=0.75)
    return close[0] if close else None


def event_names(config: HooksConfig) -> Iterable[str]:
    """The events that have at least one hook (for status lines and ``catui`` diagnostics)."""
    return [name for name in config.events if config.has(name)]
