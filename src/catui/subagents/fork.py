"""Fork mode: an Agent call without ``subagent_type`` runs a copy of its parent (spec 6.1 [5] [8] [10], 8.1).

Off by default (``forkSubagent`` setting, ``CATUI_FORK_SUBAGENT`` /
``CLAUDE_CODE_FORK_SUBAGENT``; see :func:`catui.config.flags.fork_subagent_enabled`).
When on, :func:`catui.subagents.install.install_subagents` gives the runtime a
:class:`ForkPlanner` as its fork strategy. A forked worker gets, unchanged, what its parent
sends the model: the parent's rendered system prompt, its exact tool list,
its model and sampling settings, and (per the fork definition's
``forks_parent_context``) the parent's messages. Its first message closes the
parent's pending tool calls with placeholder results and ends with the fork
directive, so the request is valid and its prefix is the parent's own, which
the prompt cache has already seen.

A worker cannot fork again (spec 12.3); an Agent call naming a type still
starts an ordinary sub-agent. ``isolation: "worktree"`` puts the worker in
its own worktree, and its directive says the paths above are the parent's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from catui.agents.definition import AgentDefinition
from catui.messages import (
    Block,
    Message,
    blocks_of,
    is_real_prompt,
    text_block,
    tool_result_block,
    user_message,
)
from catui.permissions.subagent_limits import agent_type_denied_message, is_agent_type_denied
from catui.session.session import Session
from catui.subagents.deps import RuntimeDeps
from catui.subagents.ids import new_agent_id
from catui.subagents.models import ChildModel
from catui.subagents.plan import ChildPlan, confine_to, parent_session, wants_background
from catui.subagents.resolve import AgentSpawnError
from catui.subagents.run import SpawnRequest
from catui.subagents.worktrees import WorktreeLeases
from catui.tools.base import ToolContext

FORK_AGENT_TYPE = "fork"
FORK_QUERY_SOURCE = f"agent:builtin:{FORK_AGENT_TYPE}"
"""The ``query_source`` of a forked worker's requests; also how a worker is recognised (spec 12.3)."""

FORK_RECURSION_ERROR = "Fork is not available inside a forked worker. Complete your task directly using your tools."

FORK_DIRECTIVE_TAG = "fork-directive"
"""Wraps the directive text; a user message starting with it marks a conversation as a forked worker's."""

FORK_MAX_TURNS = 200

AGENT_CALL_PLACEHOLDER = "This call is being handled by forked workers; each reports back to the parent agent."
OTHER_CALL_PLACEHOLDER = "This call is run by the parent agent; its result is not available to forked workers."

ForksParentContext = Literal[True, "turn"] | None


def fork_agent_definition(forks_parent_context: ForksParentContext = True) -> AgentDefinition:
    """The built-in fork agent. Never in the registry: not offered in the Agent tool or active agents.

    Its system prompt, tools and model are its parent's (the fields here only describe it).
    """
    return AgentDefinition.model_validate(
        {
            "agent_type": FORK_AGENT_TYPE,
            "description": "A copy of the calling agent that carries out one task with the caller's context.",
            "when_to_use": "Leave out subagent_type to fork yourself.",
            "tools": ["*"],
            "model": "inherit",
            "max_turns": FORK_MAX_TURNS,
            "forks_parent_context": forks_parent_context,
            "source": "built-in",
            "base_dir": "built-in",
        }
    )


def fork_directive(prompt: str, note: str | None = None) -> str:
    """The text that starts a worker: who it is, what it may not do, and its task (``prompt`` verbatim).

    ``note`` (e.g. :func:`worktree_note`) goes before the task.
    """
    return (
        f"<{FORK_DIRECTIVE_TAG}>\n"
        "You are a forked worker: a copy of the agent whose conversation is above, started to carry out "
        "one task on your own. The tool calls still open above are handled elsewhere; do not repeat them. "
        "Do the task below directly with your tools (you cannot fork again). When you are done, reply with "
        "what you found or changed: that reply goes back to the agent that forked you.\n\n"
        + (f"{note}\n\n" if note else "")
        + f"Task:\n{prompt}\n"
        f"</{FORK_DIRECTIVE_TAG}>"
    )


def worktree_note(parent_cwd: Path, worktree: Path) -> str:
    """What a worker in its own worktree must know: the paths above are its parent's, not its own."""
    return (
        f"You work in an isolated git worktree at {worktree}: the same repository on its own branch, a "
        f"separate copy of the files. The conversation above happened in {parent_cwd}; read paths in it "
        "relative to your worktree instead, and read files again before changing them, since they may "
        "differ. Your changes stay in the worktree and do not touch the parent's files."
    )


def current_turn_start(messages: list[Message]) -> int:
    """Index of the message that started the current turn: the last real user prompt (0 when none)."""
    for index in range(len(messages) - 1, -1, -1):
        if is_real_prompt(messages[index]):
            return index
    return 0


def parent_context_messages(messages: list[Message], forks_parent_context: ForksParentContext) -> list[Message]:
    """The parent messages a fork inherits: all (True), the current turn's ("turn"), or none (None)."""
    if forks_parent_context is True:
        return list(messages)
    if forks_parent_context == "turn":
        return list(messages[current_turn_start(messages):])
    return []


def build_fork_messages(
    parent_messages: list[Message], prompt: str, forks_parent_context: ForksParentContext = True,
    *, note: str | None = None,
) -> tuple[list[Message], Message]:
    """``(inherited, first_message)``: the worker's history, and the user message that starts it.

    When the inherited history ends with an assistant message holding tool calls (the Agent call that
    forks, and any sibling calls), the first message answers each with a placeholder tool_result, so
    the request is valid, then carries the directive. Siblings forked by one message get identical
    placeholders: their requests differ only in the directive.
    """
    inherited = parent_context_messages(parent_messages, forks_parent_context)
    content: list[Block] = []
    if inherited and inherited[-1].get("role") == "assistant":
        for block in blocks_of(inherited[-1]):
            if block.get("type") != "tool_use":
                continue
            text = AGENT_CALL_PLACEHOLDER if block.get("name") in ("Agent", "Task") else OTHER_CALL_PLACEHOLDER
            content.append(tool_result_block(str(block.get("id", "")), [text_block(text)]))
    content.append(text_block(fork_directive(prompt, note)))
    return inherited, user_message(content)


FORK_STARTED_RESULT = "Fork started — that fork is you."
"""The tool_result a current-contract fork sees for the Agent call that made it (observed-cc-now.md §2)."""

FORK_BOILERPLATE_TAG = "fork-boilerplate"


def fork_boilerplate(note: str | None = None) -> str:
    """catui's words for a current-contract fork: one shot, do not start agents (the directive follows)."""
    return (
        f"<{FORK_BOILERPLATE_TAG}>\n"
        "You are a fork: a copy of the agent whose conversation is above, started by the Agent call just "
        "answered. That call's other copy, the parent, carries on without you; this turn is yours alone.\n"
        "- Carry out the directive below yourself, with your tools, in one go. Do not start agents (no Agent "
        "calls, no further forks) and do not ask the user anything: nobody will answer.\n"
        "- Stay within the directive; the parent has the rest of the work in hand.\n"
        "- Your final message goes back to the parent as your report: lead with the result, then what you "
        "changed or found and how you checked it.\n"
        + (f"\n{note}\n" if note else "")
        + f"</{FORK_BOILERPLATE_TAG}>"
    )


def build_current_fork_messages(
    parent_messages: list[Message], tool_use_id: str | None, prompt: str, *, note: str | None = None,
) -> tuple[list[Message], Message]:
    """The current contract's fork: the parent's messages up to the spawning assistant message, that message
    trimmed to the one Agent call, then ``Fork started …`` as its result and the boilerplate with the directive."""
    inherited = list(parent_messages)
    if inherited and inherited[-1].get("role") == "assistant":
        own = [b for b in blocks_of(inherited[-1]) if b.get("type") == "tool_use" and b.get("id") == tool_use_id]
        inherited[-1] = {**inherited[-1], "content": own or blocks_of(inherited[-1])}
    content: list[Block] = []
    if inherited and tool_use_id is not None:
        content.append(tool_result_block(tool_use_id, [text_block(FORK_STARTED_RESULT)]))
    content.append(text_block(f"{fork_boilerplate(note)}\n\nYour directive: {prompt}"))
    return inherited, user_message(content)


def is_fork_worker(session: Session) -> bool:
    """Whether ``session`` is a forked worker: by its query source, or a fork directive in its messages."""
    if session.config.request_metadata.get("query_source") == FORK_QUERY_SOURCE:
        return True
    openings = (f"<{FORK_DIRECTIVE_TAG}>", f"<{FORK_BOILERPLATE_TAG}>")
    for message in session.messages:
        if message.get("role") != "user":
            continue
        for block in blocks_of(message):
            if block.get("type") == "text" and str(block.get("text", "")).startswith(openings):
                return True
    return False


class ForkPlanner:
    """The fork strategy of the runtime: plans a worker that copies its caller (see the module docstring)."""

    def __init__(
        self, deps: RuntimeDeps, worktrees: WorktreeLeases, *, background_available: bool,
        definition: AgentDefinition | None = None,
    ) -> None:
        self.deps = deps
        self.worktrees = worktrees
        self.background_available = background_available
        self.definition = definition or fork_agent_definition()

    async def plan_fork(self, request: SpawnRequest, parent_ctx: ToolContext) -> ChildPlan:
        """The worker's plan. Raises AgentSpawnError (the exact tool_result text).

        ``isolation: "worktree"`` gives the worker its own worktree (settled when it ends), and its
        directive says that the paths above are the parent's.
        """
        parent = parent_session(parent_ctx)
        if is_fork_worker(parent):
            raise AgentSpawnError(FORK_RECURSION_ERROR)
        rule = is_agent_type_denied(parent_ctx.permissions, self.definition.agent_type)
        if rule is not None:  # `Agent(fork)` in a deny rule turns forking off for this session's rules
            raise AgentSpawnError(agent_type_denied_message(self.definition.agent_type, rule))
        if request.cwd:
            # The worker's context describes the parent's folder; another folder would contradict it.
            raise AgentSpawnError(
                "A fork works in its parent's folder (or its own worktree), so it cannot take cwd. Name an "
                "agent type in subagent_type (for example general-purpose) to run a sub-agent in another folder."
            )
        agent_id = new_agent_id()
        worktree = await self.worktrees.create(agent_id, parent.session_id) if request.isolation == "worktree" else None
        definition = self.definition
        cwd, root, permissions, note = Path(parent_ctx.cwd), Path(parent_ctx.project_root), parent_ctx.permissions, None
        if worktree is not None:
            cwd = root = Path(worktree.path)
            permissions = confine_to(permissions, cwd, parent_ctx.project_root, worktree)
            note = worktree_note(Path(parent_ctx.cwd), cwd)
        if self.deps.compat.fork_by_type():
            inherited, first_message = build_current_fork_messages(
                parent.messages, request.tool_use_id, request.prompt, note=note)
        else:
            inherited, first_message = build_fork_messages(
                parent.messages, request.prompt, definition.forks_parent_context, note=note
            )
        return ChildPlan(
            agent_id=agent_id, definition=definition, request=request,
            model=ChildModel(model_id=parent.config.model, reason="parent", requested="inherit",
                             provider=getattr(parent.config.provider, "name", None)),
            provider=parent.config.provider, permissions=permissions,
            tools=list(parent.tools),  # useExactTools: the parent's list as it is, Agent included
            cwd=cwd, project_root=root, system_prompt=list(parent.config.system_prompt),
            first_message=first_message, max_tokens=parent.config.max_tokens, query_source=FORK_QUERY_SOURCE,
            is_async=wants_background(request, definition, self.deps, self.background_available),
            temperature=parent.config.temperature, thinking=parent.config.thinking, inherited=inherited,
            effort=parent.config.effort,
            worktree=worktree, is_fork=True, depth=parent_ctx.agent_depth + 1,
        )
