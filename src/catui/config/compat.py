"""The compatibility profile: which Claude Code sub-agent contract a session follows.

catui keeps Claude Code 2.1.92's contract (``../shared/spec/observed-cc-2.1.92.md``)
as its default and offers the current one (2.1.332, ``observed-cc-now.md``)
behind one switch, read in this order (the first that says something wins):

1. the SDK's ``compat=`` option (``RunOptions.compat``);
2. the ``CATUI_COMPAT`` environment variable (settings' ``env`` block included);
3. the ``compat`` setting.

``"2.1.92"`` is the default; ``"2.1.332"`` (or ``"current"`` / ``"latest"``)
selects the current contract. A :class:`CompatProfile` answers every question
the sub-agent system asks about behaviour that differs between the two, and
takes Claude Code's own knobs into account (``CLAUDE_CODE_DISABLE_BACKGROUND_TASKS``,
``CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH``, ``CLAUDE_CODE_FORK_SUBAGENT``,
``CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS``), so that users can mix: the current
profile with its background default turned off, the 2.1.92 profile with
nesting on, and so on. Every knob keeps its 2.1.92-profile meaning there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from catui.config.concurrency import Limit, max_concurrent_subagents
from catui.config.flags import (
    background_tasks_disabled,
    fork_subagent_enabled,
    is_falsy,
    is_truthy,
    max_subagent_spawn_depth,
)
from catui.errors import ConfigurationError

PROFILE_2_1_92 = "2.1.92"
PROFILE_CURRENT = "2.1.332"
PROFILE_NAMES: tuple[str, ...] = (PROFILE_2_1_92, PROFILE_CURRENT)
_SPELLINGS = {PROFILE_2_1_92: PROFILE_2_1_92, PROFILE_CURRENT: PROFILE_CURRENT,
              "current": PROFILE_CURRENT, "latest": PROFILE_CURRENT}

COMPAT_ENV = "CATUI_COMPAT"
COMPAT_SETTING = "compat"

CURRENT_SPAWN_DEPTH_DEFAULT = 3
"""Claude Code 2.1.332's nesting limit: the main agent is depth 0; the depth-3 agent has no Agent tool."""

CURRENT_MODEL_ALIASES: dict[str, str] = {
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
    "haiku": "claude-haiku-5-5",
    "fable": "claude-fable-5-2",
}
"""The aliases 2.1.332 resolves (observed-cc-now.md, placeholders); ``modelAliases`` still overrides them."""

CURRENT_AGENT_MODELS: tuple[str, ...] = ("sonnet", "opus", "haiku", "fable")
"""The Agent tool's ``model`` enum in the current profile, in the observed order."""

OVERFLOW_SETTING = "subagentOverflow"
"""``"queue"`` (2.1.92 profile default: background spawns over the cap wait) or ``"refuse"`` (current)."""

MESSAGING_SETTING = "messaging"
"""``true`` offers SendMessage/ListAgents/TaskStop-by-name in the 2.1.92 profile (always on in the current one)."""

SCAN_SETTING = "scanSubagentOutput"
SCAN_ENV = "CATUI_SCAN_SUBAGENT_OUTPUT"

Overflow = Literal["queue", "refuse"]
Source = Literal["default", "setting", "environment", "option"]


def _profile_name(value: object, where: str) -> str:
    text = str(value).strip().lower() if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    name = _SPELLINGS.get(text or "")
    if name is None:
        raise ConfigurationError(
            f"{where}={value!r} is not a known compatibility profile; use one of "
            f"{', '.join(repr(n) for n in PROFILE_NAMES)} (or 'current')"
        )
    return name


@dataclass(frozen=True)
class CompatProfile:
    """The active profile, its origin, and the environment and settings its answers read.

    Build it with :func:`resolve_compat`; a bare ``CompatProfile()`` is the 2.1.92 default with an empty
    environment (what tests and library code get when nobody configured anything).
    """

    name: str = PROFILE_2_1_92
    source: Source = "default"
    env: Mapping[str, str] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)

    # -- identity ---------------------------------------------------------------------------------

    @property
    def current(self) -> bool:
        """Whether this is the current (2.1.332) contract."""
        return self.name == PROFILE_CURRENT

    def describe(self) -> str:
        """One line for ``catui agents show`` and the init message: the name and where it was chosen."""
        where = {
            "default": "default",
            "setting": f"the `{COMPAT_SETTING}` setting",
            "environment": COMPAT_ENV,
            "option": "the SDK's compat= option",
        }[self.source]
        return f"{self.name} ({where})"

    # -- background (point 1) -----------------------------------------------------------------------

    def background_disabled(self) -> bool:
        """``CLAUDE_CODE_DISABLE_BACKGROUND_TASKS``: every spawn runs in the foreground, ``run_in_background`` gone."""
        return background_tasks_disabled(self.env)

    def fork_forces_background(self) -> bool:
        """Current profile, ``CLAUDE_CODE_FORK_SUBAGENT=1``: every spawn runs in the background."""
        return self.current and not self.background_disabled() and self._fork_env() is True

    def offers_run_in_background(self) -> bool:
        """Whether the Agent schema has ``run_in_background``."""
        return not self.background_disabled() and not self.fork_forces_background()

    def spawns_in_background(self, asked: bool | None, *, depth: int) -> bool:
        """Whether a spawn by an agent at ``depth`` (main = 0) runs in the background.

        ``asked`` is the call's ``run_in_background`` (None when left out). The current profile runs the main
        agent's spawns in the background unless they say ``false``; a sub-agent's spawns stay in the
        foreground unless they ask.
        """
        if self.background_disabled():
            return False
        if self.fork_forces_background():
            return True
        if self.current and depth == 0 and asked is None:
            return True
        return bool(asked)

    # -- nesting (point 2) --------------------------------------------------------------------------

    def max_spawn_depth(self) -> int:
        """The nesting limit: children at a depth below it have the Agent tool.

        The knobs (``CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH``, ``CATUI_MAX_SUBAGENT_SPAWN_DEPTH``,
        ``maxSubagentSpawnDepth``) decide in both profiles; without them the current profile nests to 3,
        the 2.1.92 profile not at all.
        """
        configured = any((self.env.get(n) or "").strip() for n in
                         ("CATUI_MAX_SUBAGENT_SPAWN_DEPTH", "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH"))
        if self.current and not configured and self.settings.get("maxSubagentSpawnDepth") is None:
            return CURRENT_SPAWN_DEPTH_DEFAULT
        return max_subagent_spawn_depth(self.settings, self.env)

    def nesting_by_default(self) -> bool:
        """Whether a child whose definition has all tools (or none listed) keeps Agent below the limit.

        Current profile: yes (general-purpose, claude and custom agents without ``tools`` nest). 2.1.92 profile:
        only definitions that name ``Agent`` or ``*`` (catui's opt-in extension).
        """
        return self.current

    # -- fork (point 3) -----------------------------------------------------------------------------

    def _fork_env(self) -> bool | None:
        for name in ("CATUI_FORK_SUBAGENT", "CLAUDE_CODE_FORK_SUBAGENT"):
            value = self.env.get(name)
            if is_truthy(value):
                return True
            if is_falsy(value):
                return False
        return None

    def fork_enabled(self) -> bool:
        """Whether forking exists: current profile unless ``CLAUDE_CODE_FORK_SUBAGENT=0``; 2.1.92 when turned on."""
        if self.current:
            chosen = self._fork_env()
            if chosen is None:
                return self.settings.get("forkSubagent") is not False
            return chosen
        return fork_subagent_enabled(self.settings, self.env)

    def fork_by_type(self) -> bool:
        """Current profile: a fork is ``subagent_type: "fork"`` and an omitted type is general-purpose.
        2.1.92 profile (catui's fork mode): an omitted type forks."""
        return self.current

    # -- types and parameters (point 4) -------------------------------------------------------------

    def has_claude_type(self) -> bool:
        """The ``claude`` built-in agent type."""
        return self.current

    def explore_plan_inherit(self) -> bool:
        """Explore and Plan run on the parent's model (2.1.92: Explore on haiku)."""
        return self.current

    def effort_parameter(self) -> bool:
        """The Agent call's ``effort`` parameter."""
        return self.current

    def sorted_type_list(self) -> bool:
        """The agent types listed by name, case-insensitively, built-ins and custom mixed."""
        return self.current

    def remote_isolation(self) -> bool:
        """``isolation: "remote"`` accepted."""
        return self.current

    def worktree_full_id(self) -> bool:
        """A sub-agent's worktree named after its whole id, ``agent-<id>`` on ``worktree-agent-<id>`` (2.1.92:
        the first 8 characters)."""
        return self.current

    def model_aliases(self) -> dict[str, str]:
        """Default alias targets of this profile ({} keeps catui's own)."""
        return dict(CURRENT_MODEL_ALIASES) if self.current else {}

    def agent_model_enum(self) -> tuple[str, ...]:
        return CURRENT_AGENT_MODELS if self.current else ("sonnet", "opus", "haiku")

    # -- the running-agents cap (point 5) ----------------------------------------------------------

    def running_cap(self) -> Limit:
        """How many sub-agents may run at once (default 20). The current profile counts foreground and
        background together and honours ``CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS``; the 2.1.92 profile caps
        background agents only (``CATUI_MAX_CONCURRENT_SUBAGENTS`` / ``maxConcurrentSubagents``)."""
        env = self.env
        if self.current and not (env.get("CATUI_MAX_CONCURRENT_SUBAGENTS") or "").strip():
            cc = (env.get("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS") or "").strip()
            if cc:
                env = {**env, "CATUI_MAX_CONCURRENT_SUBAGENTS": cc}
        return max_concurrent_subagents(env, self.settings)

    def overflow(self) -> Overflow:
        """What a spawn over the cap gets: ``refuse`` (current default) or ``queue`` (2.1.92 default);
        the ``subagentOverflow`` setting chooses in both."""
        configured = self.settings.get(OVERFLOW_SETTING)
        if configured in ("queue", "refuse"):
            return configured
        return "refuse" if self.current else "queue"

    def cap_counts_foreground(self) -> bool:
        """Whether foreground agents count toward the cap (and are refused over it)."""
        return self.overflow() == "refuse"

    # -- results, scanning, messaging (points 6-8) --------------------------------------------------

    def hand_back_framing(self) -> bool:
        """The current hand-back frame, launch text and notification shape (point 6)."""
        return self.current

    def scans_output(self) -> bool:
        """Output scanning of sub-agent reports (both profiles, on unless ``scanSubagentOutput: false`` or
        ``CATUI_SCAN_SUBAGENT_OUTPUT=0``)."""
        value = self.env.get(SCAN_ENV)
        if is_falsy(value):
            return False
        if is_truthy(value):
            return True
        return self.settings.get(SCAN_SETTING) is not False

    def messaging(self) -> bool:
        """SendMessage without teams, ListAgents, TaskStop by name: current profile always, 2.1.92 with
        ``"messaging": true``."""
        return self.current or self.settings.get(MESSAGING_SETTING) is True

    def teams_tools(self) -> bool:
        """TeamCreate/TeamDelete and teammates (2.1.92 profile with the teams flag); gone in the current one."""
        return not self.current


def resolve_compat(
    settings: Mapping[str, Any] | None, env: Mapping[str, str] | None, option: str | None = None
) -> CompatProfile:
    """The active profile from the SDK option, then ``CATUI_COMPAT``, then the ``compat`` setting.

    Raises ConfigurationError (one line, naming where the value came from) for an unknown profile.
    """
    settings = settings or {}
    env = env or {}
    if option is not None and str(option).strip():
        return CompatProfile(_profile_name(option, "CatuiOptions.compat"), "option", env, settings)
    raw = (env.get(COMPAT_ENV) or "").strip()
    if raw:
        return CompatProfile(_profile_name(raw, COMPAT_ENV), "environment", env, settings)
    configured = settings.get(COMPAT_SETTING)
    if configured is not None:
        return CompatProfile(_profile_name(configured, f"the `{COMPAT_SETTING}` setting"), "setting", env, settings)
    return CompatProfile(PROFILE_2_1_92, "default", env, settings)
