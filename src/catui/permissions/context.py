"""The permission context: the immutable object that decides whether a tool call runs.

A sub-agent receives a context derived from its parent's (same rules and
working directories, a mode never more permissive than the parent's), so
deriving one must be cheap: ``with_mode``, ``with_rules`` and
``with_working_directories`` return new objects and share the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
PERMISSION_MODES: tuple[str, ...] = ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan")

# From least to most permissive; a child's mode is capped at its parent's position here.
MODE_PERMISSIVENESS: tuple[str, ...] = ("plan", "dontAsk", "default", "acceptEdits", "auto", "bypassPermissions")

Behavior = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class PermissionRule:
    """One rule such as ``Bash(git status:*)`` with its behaviour and where it came from.

    ``source`` is one of userSettings, projectSettings, localSettings,
    flagSettings, cliArg, session, sdk. ``base`` is the folder that ``/…``
    path patterns are relative to (the project for project settings; None
    means the primary working directory). ``origin`` says where the text
    was written (a settings file path, ``--allowedTools``) for messages.
    Neither takes part in equality.
    """

    tool_name: str
    content: str | None
    behavior: Behavior
    source: str
    base: Path | None = field(default=None, compare=False)
    origin: str | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.tool_name}({self.content})" if self.content is not None else self.tool_name

    def describe_source(self) -> str:
        """Where the rule came from, for messages: ``projectSettings (/p/.catui/settings.json)``."""
        return f"{self.source} ({self.origin})" if self.origin else self.source


@dataclass(frozen=True)
class PermissionRequest:
    """What a tool call asks for, in the terms rules are written in.

    ``subject`` is what a rule's content matches: the Bash command, the file
    path, ``domain:<host>`` for WebFetch, the agent type for Agent.
    ``file_path`` is the absolute path a file tool touches; ``is_edit`` marks
    calls that change files (acceptEdits allows those inside the working
    directories).
    """

    tool_name: str
    tool_input: Mapping[str, Any] = field(default_factory=dict)
    read_only: bool = False
    subject: str | None = None
    file_path: Path | None = None
    is_edit: bool = False


@dataclass(frozen=True)
class PermissionDecision:
    behavior: Behavior
    reason: str = ""
    rule: PermissionRule | None = None


@dataclass(frozen=True)
class PermissionContext:
    """Mode, rules (with their sources) and the working directories file tools may touch.

    ``plan_file`` is the session's plan file: in plan mode, Write and Edit may
    change it (and nothing else); see :mod:`catui.tools.plan_file`.
    """

    mode: PermissionMode = "default"
    rules: tuple[PermissionRule, ...] = ()
    working_directories: tuple[Path, ...] = ()
    plan_file: Path | None = None

    def with_mode(self, mode: PermissionMode) -> PermissionContext:
        return replace(self, mode=mode)

    def with_rules(self, *rules: PermissionRule) -> PermissionContext:
        return replace(self, rules=self.rules + tuple(rules))

    def with_plan_file(self, path: Path | None) -> PermissionContext:
        return replace(self, plan_file=path)

    def with_working_directories(self, *dirs: Path) -> PermissionContext:
        return replace(self, working_directories=tuple(dirs))

    @property
    def primary_directory(self) -> Path:
        """The folder relative path rules are read from: the first working directory, else the process cwd."""
        return self.working_directories[0] if self.working_directories else Path.cwd()

    def rules_for(self, behavior: Behavior) -> tuple[PermissionRule, ...]:
        """The rules of one behaviour, in order."""
        return tuple(r for r in self.rules if r.behavior == behavior)

    def without_rules_from(self, *sources: str) -> PermissionContext:
        """A copy without the rules of the given sources (e.g. drop ``session`` rules for a fresh child)."""
        return replace(self, rules=tuple(r for r in self.rules if r.source not in sources))

    def decide(self, request: PermissionRequest) -> PermissionDecision:
        """Deny beats ask beats allow; then the mode decides what no rule settled."""
        from catui.permissions.decide import decide

        return decide(self, request)
