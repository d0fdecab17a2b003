"""The values permission checks are made of: modes, rules, requests, decisions.

They live apart from :class:`~catui.permissions.context.PermissionContext` so
that the rule syntax (``rules.py``) and the decision logic (``decide.py``)
can use them without importing the context, which itself calls ``decide``.
:class:`PermissionState` is what ``decide`` reads from a context.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

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
class ToolConfinement:
    """A tool an agent may use only on files inside ``folder`` (a memory agent's added Write, say).

    ``why`` completes the refusal: "<tool> was given to this agent <why>".
    """

    tool_name: str
    folder: Path
    why: str


@dataclass(frozen=True)
class PermissionDecision:
    behavior: Behavior
    reason: str = ""
    rule: PermissionRule | None = None
    updated_input: dict[str, Any] | None = None
    """An approver's rewrite of the call's input (can_use_tool's ``updated_input``; for AskUserQuestion, an SDK
    host's answers); the tool runs with it."""


class PermissionState(Protocol):
    """What the decision logic reads from a permission context (:class:`PermissionContext` provides it)."""

    @property
    def mode(self) -> PermissionMode: ...

    @property
    def rules(self) -> tuple[PermissionRule, ...]: ...

    @property
    def confinements(self) -> tuple[ToolConfinement, ...]: ...

    @property
    def working_directories(self) -> tuple[Path, ...]: ...

    @property
    def plan_file(self) -> Path | None: ...

    @property
    def sandboxed_bash(self) -> bool: ...

    @property
    def sandbox_excluded_commands(self) -> tuple[str, ...]: ...

    @property
    def primary_directory(self) -> Path: ...
