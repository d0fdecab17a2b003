"""The permission context: the immutable object that decides whether a tool call runs.

A sub-agent receives a context derived from its parent's (same rules and
working directories, a mode never more permissive than the parent's), so
deriving one must be cheap: ``with_mode``, ``with_rules`` and
``with_working_directories`` return new objects and share the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from catui.permissions.decide import decide
from catui.permissions.model import (
    MODE_PERMISSIVENESS,
    PERMISSION_MODES,
    Behavior,
    PermissionDecision,
    PermissionMode,
    PermissionRequest,
    PermissionRule,
    ToolConfinement,
)

# The value types live in catui.permissions.model; most callers import them from here with the context.
__all__ = [
    "MODE_PERMISSIVENESS",
    "PERMISSION_MODES",
    "Behavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionMode",
    "PermissionRequest",
    "PermissionRule",
    "ToolConfinement",
]


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
    confinements: tuple[ToolConfinement, ...] = ()
    """Tools usable only inside one folder each (checked after deny rules; see permissions.decide)."""
    sandboxed_bash: bool = False
    """Bash commands run in the OS sandbox and may be approved because of it (``autoAllowBashIfSandboxed``)."""
    sandbox_excluded_commands: tuple[str, ...] = ()
    """``sandbox.excludedCommands``: these run outside the sandbox, so the sandbox approves nothing for them."""
    isolated_worktree: Path | None = None
    """Set for an isolated agent (its worktree): its file tools refuse to change configuration there
    (tools/protected_config.py)."""

    def with_mode(self, mode: PermissionMode) -> PermissionContext:
        return replace(self, mode=mode)

    def with_rules(self, *rules: PermissionRule) -> PermissionContext:
        return replace(self, rules=self.rules + tuple(rules))

    def without_rules(self, rules: tuple[PermissionRule, ...] | list[PermissionRule]) -> PermissionContext:
        """These very rule objects removed (by identity: an equal rule from elsewhere stays)."""
        gone = {id(rule) for rule in rules}
        return replace(self, rules=tuple(r for r in self.rules if id(r) not in gone))

    def with_confinements(self, *confinements: ToolConfinement) -> PermissionContext:
        return replace(self, confinements=self.confinements + tuple(confinements))

    def with_plan_file(self, path: Path | None) -> PermissionContext:
        return replace(self, plan_file=path)

    def with_sandboxed_bash(self, excluded_commands: tuple[str, ...]) -> PermissionContext:
        """A copy in which sandboxed Bash commands are approved as docs/sandbox.md describes."""
        return replace(self, sandboxed_bash=True, sandbox_excluded_commands=excluded_commands)

    def isolated_in(self, worktree: Path) -> PermissionContext:
        """A copy for an agent isolated in ``worktree`` (and for the agents it starts)."""
        return replace(self, isolated_worktree=worktree)

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
        return decide(self, request)
