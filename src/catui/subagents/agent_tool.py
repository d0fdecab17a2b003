"""The ``Agent`` tool (alias ``Task``): the model's way to start a sub-agent (spec 3, observed section 1).

The tool itself is thin: it validates the call against the observed schema
and hands it to the sub-agent runtime found in ``ctx.services.subagents``.
Its description lists the active agent types and is rebuilt whenever the
agent registry changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from catui.config.compat import CompatProfile
from catui.config.flags import agent_teams_enabled, background_tasks_disabled
from catui.permissions.context import PermissionContext, PermissionRequest
from catui.permissions.subagent_limits import is_agent_type_denied
from catui.subagents.tool_filter import tool_summary
from catui.tools.base import AgentCatalogue, Tool, ToolContext, ToolResult

if TYPE_CHECKING:  # the request's module loads with the first Agent call (catui.lazy)
    from catui.agents.definition import AgentDefinition
    from catui.subagents.run import SpawnRequest

AGENT_TOOL_NAME = "Agent"
LEGACY_AGENT_TOOL_NAME = "Task"


TEAM_PROPERTIES = ("name", "team_name", "mode")
INTERNAL_PROPERTIES = ("cwd",)

INTRO = """Start a sub-agent: a separate agent with its own conversation and tools that carries out one \
task on its own and reports back to you. Use it for broad searches, independent investigations and \
multi-step work whose details would otherwise fill this conversation.

Agent types and the tools each one has:"""

GUIDANCE = """Pick the type with subagent_type; when it is left out, general-purpose runs.

When not to use it: reading a file whose path you know (use Read), looking for a specific class or \
function name (use Glob or Grep), or searching two or three known files (use Read). Those are faster done \
directly.

How to use it:
- The agent does not see this conversation. Give it a complete prompt: the goal, what you already know, \
the files involved, and exactly what it should report back.
- Say whether it should change code or only research; it cannot tell your intent otherwise.
- Start several agents in one message when their tasks are independent: they run at the same time.
- The agent's answer comes back to you, not to the user. Tell the user what matters in it.
- Treat its findings as well-founded leads; check what you rely on before acting on it."""

BACKGROUND_GUIDANCE = """- Set run_in_background to true to keep working while the agent runs. You are \
notified when it finishes, so do not poll, sleep or check on it in the meantime."""

FORK_TYPE_LINE = """Pick the type with subagent_type. Leave it out to fork yourself: the fork is a copy of \
you that sees this whole conversation, carries out the prompt you give it and reports back to you; it \
cannot fork again. A fork suits a side task that needs what you already know."""

WORKTREE_GUIDANCE = """- isolation: "worktree" gives the agent its own git worktree (a copy of the \
repository on a new branch). If the agent changes nothing, the worktree is removed automatically; \
otherwise its path and branch come back with the result."""


TEAM_GUIDANCE = """- Teams: once you have created a team with TeamCreate, an Agent call with a name (and the \
team_name) starts a teammate instead: a long-lived member of your team that works alongside you and talks \
with SendMessage; the call returns at once and its messages reach you when your turn ends. mode: "plan" \
makes the teammate send you its plan for approval first. Teammates cannot start teammates."""


CURRENT_BACKGROUND_GUIDANCE = """- Agents you start run in the background unless you set run_in_background \
to false: you are notified when each finishes, so do not poll, sleep or check on them in the meantime. Set \
false when you need the answer before you can go on."""

CURRENT_FORK_GUIDANCE = """- subagent_type "fork" starts a copy of you that sees this whole conversation and \
carries out the prompt on its own; a fork does not start agents of its own. Use it for a side task that \
needs what you already know."""


def agent_line(definition: AgentDefinition) -> str:
    """One line of the description: ``- <type>: <when to use> (Tools: <tools>)``."""
    return f"- {definition.agent_type}: {definition.get_when_to_use()} (Tools: {tool_summary(definition)})"


def build_agent_tool_description(
    agents: list[AgentDefinition], *, background_enabled: bool, fork_enabled: bool = False, teams_enabled: bool = False,
    current: bool = False,
) -> str:
    """The Agent tool's description for a list of active agent definitions (``fork_enabled``: fork mode is on;
    ``teams_enabled``: agent teams are on; ``current``: the current contract, catui.config.compat)."""
    if current:
        extra = [WORKTREE_GUIDANCE]
        if background_enabled:
            extra.insert(0, CURRENT_BACKGROUND_GUIDANCE)
        if fork_enabled:
            extra.append(CURRENT_FORK_GUIDANCE)
        return "\n\n".join([INTRO, "\n".join(agent_line(a) for a in agents), GUIDANCE + "\n" + "\n".join(extra)])
    guidance = GUIDANCE
    if fork_enabled:
        guidance = guidance.replace(GUIDANCE.split("\n", 1)[0], FORK_TYPE_LINE).replace(
            "- The agent does not see this conversation.", "- A typed agent does not see this conversation.")
    parts = [INTRO, "\n".join(agent_line(a) for a in agents), guidance]
    extra = [WORKTREE_GUIDANCE]
    if background_enabled:
        extra.insert(0, BACKGROUND_GUIDANCE)
    if teams_enabled and background_enabled:
        extra.append(TEAM_GUIDANCE)
    parts[-1] = parts[-1] + "\n" + "\n".join(extra)
    return "\n\n".join(parts)


class AgentTool(Tool):
    """Starts a sub-agent. ``registry`` is the agent registry (``active``, ``version``)."""

    name: ClassVar[str] = AGENT_TOOL_NAME
    aliases: ClassVar[tuple[str, ...]] = (LEGACY_AGENT_TOOL_NAME,)
    input_model_ref: ClassVar[str] = "catui.subagents.agent_tool_input:AgentInput"
    read_only: ClassVar[bool] = False

    def __init__(
        self,
        registry: AgentCatalogue,
        *,
        env: Mapping[str, str] | None = None,
        permissions: Callable[[], PermissionContext] | None = None,
        fork_enabled: bool = False,
        compat: CompatProfile | None = None,
    ) -> None:
        self.registry = registry
        self.permissions = permissions
        self.compat = compat or CompatProfile(env=dict(env or {}))
        self.background_enabled = not background_tasks_disabled(env or {})
        self.teams_enabled = agent_teams_enabled(env or {})
        self.fork_enabled = fork_enabled
        self._description_cache: tuple[Any, str] | None = None

    @property
    def description(self) -> str:
        """The agent list and guidance; rebuilt when the registry's version or the deny rules change."""
        # The session reads this once per model turn: the registry's cheap mtime check here is what
        # makes an agent file added or edited mid-session visible before the next turn.
        self.registry.reload_if_changed()
        permissions = self.permissions() if self.permissions is not None else None
        key = (self.registry.version, permissions.rules if permissions is not None else ())
        cached = self._description_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        agents = list(self.registry.active)
        if permissions is not None:
            # Types a rule denies are left out, so the model is not offered what it may not use.
            agents = [a for a in agents if is_agent_type_denied(permissions, a.agent_type) is None]
        text = build_agent_tool_description(agents, background_enabled=self.background_enabled,
                                            fork_enabled=self.fork_enabled, teams_enabled=self.teams_enabled,
                                            current=self.compat.current)
        self._description_cache = (key, text)
        return text

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        schema.pop("description", None)  # the model's docstring is for readers of this code, not the model
        hidden = set(INTERNAL_PROPERTIES)
        if not self.background_enabled or not self.compat.offers_run_in_background():
            hidden.add("run_in_background")
        if not self.teams_enabled:
            hidden.update(TEAM_PROPERTIES)
        properties = {}
        for key, prop in schema["properties"].items():
            if key in hidden:
                continue
            if "const" in prop:  # a one-value Literal: sent as an enum, as observed (isolation)
                prop = {("enum" if k == "const" else k): ([v] if k == "const" else v) for k, v in prop.items()}
            properties[key] = prop
        schema["properties"] = properties
        return schema

    def is_concurrency_safe(self, args: Any) -> bool:
        # Sub-agents of one assistant message run side by side; each has its own context.
        return True

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        # The subject is the agent type, so allow and ask rules such as Agent(Explore) apply. A type that
        # a deny rule forbids gets an empty subject here: the runtime refuses it with Claude Code's words.
        agent_type = args.subagent_type or (
            "fork" if self.fork_enabled and not self.compat.fork_by_type() else "general-purpose")
        subject = "" if is_agent_type_denied(ctx.permissions, agent_type) is not None else agent_type
        return PermissionRequest(
            tool_name=self.name, tool_input=args.model_dump(exclude_none=True), read_only=True, subject=subject
        )

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        runtime = ctx.services.subagents
        if runtime is None:
            return ToolResult("Sub-agents are not available in this session.", is_error=True)
        if self.compat.current:
            return await runtime.spawn(self._current_request(args, ctx), ctx)
        from catui.subagents.run import SpawnRequest  # lazy (catui.lazy): the first Agent call

        request = SpawnRequest(
            description=args.description,
            prompt=args.prompt,
            subagent_type=args.subagent_type,
            model=args.model,
            run_in_background=bool(args.run_in_background) and self.background_enabled,
            name=args.name if self.teams_enabled else None,
            team_name=args.team_name if self.teams_enabled else None,
            mode=args.mode if self.teams_enabled else None,
            isolation=args.isolation,
            cwd=args.cwd,
            tool_use_id=ctx.tool_use_id,
        )
        result: ToolResult = await runtime.spawn(request, ctx)
        return result

    def _current_request(self, args: Any, ctx: ToolContext) -> SpawnRequest:
        """The current contract's request: background by default for the main agent, ``effort``, ``name`` as an
        ordinary agent's name, ``isolation: "remote"`` (catui.config.compat)."""
        asked = args.run_in_background if self.background_enabled else False
        background = self.background_enabled and self.compat.spawns_in_background(asked, depth=ctx.agent_depth)
        isolation = args.isolation
        if isolation == "remote":
            # No remote service here: the configured distributed executor runs background agents (Ray gives
            # each its own copy of the repository); in this process it is a background agent in a worktree.
            background = self.background_enabled
            isolation = None if self.remote_executor else "worktree"
        from catui.subagents.run import SpawnRequest  # lazy (catui.lazy): the first Agent call

        return SpawnRequest(
            description=args.description, prompt=args.prompt, subagent_type=args.subagent_type,
            model=args.model, run_in_background=background, name=args.name, isolation=isolation, cwd=args.cwd,
            tool_use_id=ctx.tool_use_id, effort=args.effort,
            requested=None if args.run_in_background is None else ("background" if args.run_in_background
                                                                   else "foreground"),
        )

    remote_executor: bool = False
    """Whether a distributed executor (Ray) runs this session's background agents (``isolation: "remote"``)."""


class CurrentAgentTool(AgentTool):
    """The Agent tool of the current contract: :class:`CurrentAgentInput`'s schema; its calls are not held back
    by the tool-call window (the running-agents cap limits them, catui.subagents.running_cap)."""

    input_model_ref: ClassVar[str] = "catui.subagents.agent_tool_input:CurrentAgentInput"
    outside_window: ClassVar[bool] = True
