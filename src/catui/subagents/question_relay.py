"""Questions from sub-agents to the user (catui's own, opt-in per definition).

Claude Code removes AskUserQuestion from every child (observed §2), and so does catui by default. A
definition that lists ``AskUserQuestion`` in its ``tools`` gets it, and its questions are relayed:

- interactive terminal: to the session's question prompt, each question marked with the asking agent
  (``askingAgent``: name, colour, id), foreground or background; the answer goes back to that child;
- the SDK (no terminal, a ``can_use_tool`` callback): through ``can_use_tool("AskUserQuestion",
  {"questions": …}, context)`` whose context carries the child's ``agent_id``; the host answers with
  ``PermissionResultAllow(updated_input={…, "answers": {question: answer}})`` or declines with a Deny;
- print mode (nobody to ask): the tool answers with a refusal the child can act on.

:func:`question_relay` builds the child's ``ToolContext.ask_user`` for these cases.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from catui.agents.definition import AgentDefinition
from catui.permissions.context import PermissionDecision, PermissionRequest
from catui.tools.ask_user_question import AskUserQuestionTool, QuestionNotAnswered
from catui.tools.base import Tool, ToolContext

ASK_USER_QUESTION = AskUserQuestionTool.name

AskUser = Callable[[list[dict[str, Any]]], Awaitable[dict[str, str]]]
PermissionHook = Callable[[Tool, dict[str, Any], PermissionRequest, ToolContext], Awaitable[PermissionDecision]]


def asks_the_user(definition: AgentDefinition) -> bool:
    """Whether the definition names AskUserQuestion in its ``tools`` (``*`` does not count: it must be asked for)."""
    return any(entry.strip().split("(", 1)[0].strip() == ASK_USER_QUESTION for entry in definition.tools or [])


def question_relay(
    definition: AgentDefinition,
    child_ctx: ToolContext,
    *,
    parent_ask: AskUser | None,
    permission_hook: PermissionHook | None,
) -> AskUser | None:
    """The child's ``ask_user``: relayed to the terminal, to the SDK host, or None (print mode: refused)."""
    if not asks_the_user(definition):
        return None
    asking = {"name": definition.agent_type, "color": definition.color, "agentId": child_ctx.agent_id}
    if parent_ask is not None:
        ask = parent_ask

        async def to_terminal(questions: list[dict[str, Any]]) -> dict[str, str]:
            # The innermost agent is the one asking: an ancestor's relay keeps its mark.
            return await ask([{**q, "askingAgent": q.get("askingAgent") or asking} for q in questions])

        return to_terminal
    if permission_hook is not None and not child_ctx.interactive:
        hook = permission_hook

        async def to_host(questions: list[dict[str, Any]]) -> dict[str, str]:
            tool = AskUserQuestionTool()
            raw = {"questions": questions}
            request = PermissionRequest(tool_name=ASK_USER_QUESTION, tool_input=raw, read_only=True)
            decision = await hook(tool, raw, request, child_ctx)
            if decision.behavior != "allow":
                raise QuestionNotAnswered(decision.reason or "The user declined to answer.")
            return _answers_of(decision.updated_input)

        return to_host
    return None


def _answers_of(updated: Mapping[str, Any] | None) -> dict[str, str]:
    answers = (updated or {}).get("answers")
    if not isinstance(answers, Mapping) or not answers:
        raise QuestionNotAnswered(
            "The host allowed the question but gave no answers (return updated_input with an 'answers' mapping of "
            "question text to answer).")
    return {str(k): str(v) for k, v in answers.items()}
