"""Turning a finished child's messages into what the parent receives (spec 11.2, observed section 3).

:func:`extract_agent_result` takes the child's last assistant text (searching
back when the last message has none), its totals and usage;
:func:`format_agent_tool_result` renders it in the observed shapes: Explore
and Plan send the text alone, every other agent the text plus an
``agentId: … <usage>…</usage>`` trailer; the structured ``tool_use_result``
object goes to programs (stream-json, the SDK) as ``ToolResult.data``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from catui.errors import CatuiError
from catui.messages import Block, Message, blocks_of
from catui.session.usage import USAGE_COUNTERS, empty_usage
from catui.subagents.hand_back import (
    FRAME_HASH,
    continuation_line,
    hand_back_text,
    tools_used_line,
    usage_block,
)
from catui.subagents.output_scan import ScannedReport, scan_report
from catui.tools.base import ToolResult

MAX_RESULT_SIZE_CHARS = 100_000
"""Longest text (in characters) an agent hands back to its parent; longer results are cut with a note."""

ONE_SHOT_AGENT_TYPES: frozenset[str] = frozenset({"Explore", "Plan"})
"""Built-in agents whose result is their text alone: they cannot be continued, so no agentId trailer."""


class NoAssistantMessagesError(CatuiError):
    """The child produced no assistant message at all (it failed before its first answer)."""


@dataclass
class AgentResult:
    """A completed child's result, in the fields of Claude Code's ``AgentOutputCompleted``."""

    agent_id: str
    agent_type: str
    content: list[Block]
    total_duration_ms: int
    total_tokens: int
    total_tool_use_count: int
    usage: dict[str, Any]
    prompt: str
    truncated_chars: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    structured_output: dict[str, Any] | None = None
    """The object of an agent with an ``outputSchema`` (its StructuredOutput call); also the result text."""

    @property
    def text(self) -> str:
        """The result's text (its text blocks joined by blank lines)."""
        return "\n\n".join(str(b.get("text", "")) for b in self.content)

    def to_tool_use_result(self) -> dict[str, Any]:
        """The ``tool_use_result`` object of stream-json, key order as observed."""
        return {
            "status": "completed",
            "prompt": self.prompt,
            "agentId": self.agent_id,
            "agentType": self.agent_type,
            "content": [dict(b) for b in self.content],
            "totalDurationMs": self.total_duration_ms,
            "totalTokens": self.total_tokens,
            "totalToolUseCount": self.total_tool_use_count,
            "usage": self.usage,
            # catui's own key (typed results): absent for agents without an outputSchema.
            **({"structured_output": self.structured_output} if self.structured_output is not None else {}),
            # catui's own key: the model the child ran on and which source decided (subagents/models.py).
            **({"modelResolution": self.extra["modelResolution"]} if "modelResolution" in self.extra else {}),
        }


def _texts(message: Message) -> list[Block]:
    return [{"type": "text", "text": b.get("text", "")} for b in blocks_of(message) if b.get("type") == "text"]


def usage_of(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """A usage record with every field of the Anthropic usage object, filled from ``usage``."""
    out = empty_usage()
    if usage:
        for key in USAGE_COUNTERS:
            out[key] = int(usage.get(key) or 0)
        for nested in ("server_tool_use", "cache_creation"):
            if isinstance(usage.get(nested), Mapping):
                out[nested] = {**out[nested], **usage[nested]}
        if usage.get("service_tier"):
            out["service_tier"] = usage["service_tier"]
    return out


def count_tool_uses(messages: list[Message]) -> int:
    """How many tool calls the child's assistant messages made."""
    return sum(
        1 for m in messages if m.get("role") == "assistant" for b in blocks_of(m) if b.get("type") == "tool_use"
    )


def truncate_content(content: list[Block], limit: int = MAX_RESULT_SIZE_CHARS) -> tuple[list[Block], int]:
    """Cut text blocks to ``limit`` characters in total; returns the blocks and how many characters were cut."""
    total = sum(len(str(b.get("text", ""))) for b in content)
    if total <= limit:
        return content, 0
    cut = total - limit
    kept: list[Block] = []
    budget = limit
    for block in content:
        text = str(block.get("text", ""))
        if budget <= 0:
            break
        kept.append({"type": "text", "text": text[:budget]})
        budget -= len(text)
    note = (
        f"\n\n[Result truncated: the agent's answer was {total:,} characters; the last {cut:,} were cut "
        f"to stay within the {limit:,}-character limit. Ask for a shorter answer or for the details in a file.]"
    )
    kept[-1] = {"type": "text", "text": kept[-1]["text"] + note}
    return kept, cut


def extract_agent_result(
    messages: list[Message],
    agent_id: str,
    *,
    agent_type: str,
    prompt: str,
    duration_ms: int,
    usage: Mapping[str, Any] | None = None,
) -> AgentResult:
    """The result of a finished child (spec 11.2).

    ``messages`` is the child's conversation. The content is the last
    assistant message's text blocks, or, when it has none (it ended on tool
    calls), the nearest earlier assistant message with text. ``total_tokens``
    and ``usage`` describe the last assistant turn (its context size), as
    Claude Code counts them, unless ``usage`` is given. Raises
    :class:`NoAssistantMessagesError` when the child never answered.
    """
    assistants = [m for m in messages if m.get("role") == "assistant"]
    if not assistants:
        raise NoAssistantMessagesError("No assistant messages found")
    content = _texts(assistants[-1])
    if not content:
        for message in reversed(assistants[:-1]):
            content = _texts(message)
            if content:
                break
    last_usage = usage if usage is not None else assistants[-1].get("usage")
    full_usage = usage_of(last_usage)
    content, cut = truncate_content(content)
    return AgentResult(
        agent_id=agent_id,
        agent_type=agent_type,
        content=content,
        total_duration_ms=duration_ms,
        total_tokens=sum(int(full_usage.get(k) or 0) for k in USAGE_COUNTERS),
        total_tool_use_count=count_tool_uses(messages),
        usage=full_usage,
        prompt=prompt,
        truncated_chars=cut,
    )


def merge_back_hint(agent_id: str, *, tool_offered: bool) -> str:
    """The kept-worktree trailer's line telling the parent how the work gets back (catui's own)."""
    hint = (f"mergeBack: the user can review this work with `catui worktrees diff {agent_id}` and bring it into "
            f"the main checkout with `catui worktrees apply {agent_id}` (staged) or "
            f"`catui worktrees merge {agent_id} --commit`")
    if tool_offered:
        hint += f"; you may do it yourself with the WorktreeMerge tool (agent_id: {agent_id})"
    return hint


def continuation_trailer(result: AgentResult, *, worktree_path: str | None = None,
                         worktree_branch: str | None = None, depth: int = 1, merge_hint: str | None = None) -> str:
    """The second text block general-purpose and custom agents return (observed section 3).

    A nested agent (``depth`` 2 or more, a catui extension) has a ``depth:`` line too; a kept worktree may
    be followed by ``merge_hint`` (:func:`merge_back_hint`).
    """
    lines = [f"agentId: {result.agent_id} (use SendMessage with to: '{result.agent_id}' to continue this agent)"]
    if worktree_path:
        lines.append(f"worktreePath: {worktree_path}")
    if worktree_branch:
        lines.append(f"worktreeBranch: {worktree_branch}")
    if worktree_path and merge_hint:
        lines.append(merge_hint)
    if depth > 1:
        lines.append(f"depth: {depth}")
    lines.append(
        f"<usage>total_tokens: {result.total_tokens}\ntool_uses: {result.total_tool_use_count}\n"
        f"duration_ms: {result.total_duration_ms}</usage>"
    )
    return "\n".join(lines)


def format_agent_tool_result(
    result: AgentResult,
    *,
    worktree_path: str | None = None,
    worktree_branch: str | None = None,
    warning: str | None = None,
    depth: int = 1,
    merge_hint: str | None = None,
    current: bool = False,
    scan: bool = False,
    tools: list[str] | None = None,
    resolved_model: str | None = None,
) -> ToolResult:
    """The tool_result the parent receives, with the structured result as ``data``.

    ``warning`` (the handoff review's) goes first, as its own text block. A nested child's ``depth``
    (2 or more) is in the trailer and in ``data``. ``scan``: output scanning (catui.subagents.output_scan).
    ``current``: the current contract's one-block hand-back (catui.subagents.hand_back), with ``tools`` (the
    child's tools in order of use) and ``resolved_model`` in it and its data.
    """
    scanned = scan_report(result.text) if scan else None
    if current:
        return _current_hand_back(result, scanned, worktree_path=worktree_path, worktree_branch=worktree_branch,
                                  warning=warning, depth=depth, merge_hint=merge_hint, tools=tools or [],
                                  resolved_model=resolved_model)
    content: list[Block] = [dict(b) for b in result.content]
    if scanned is not None and scanned.note is not None:
        content = [{"type": "text", "text": f"{scanned.note}\n\n{scanned.text}"}]
    if not content:
        content = [{"type": "text", "text": "(The agent finished without a text answer.)"}]
    if result.agent_type not in ONE_SHOT_AGENT_TYPES:
        trailer = continuation_trailer(result, worktree_path=worktree_path, worktree_branch=worktree_branch,
                                       depth=depth, merge_hint=merge_hint)
        content.append({"type": "text", "text": trailer})
    if warning:
        content.insert(0, {"type": "text", "text": warning})
    data = result.to_tool_use_result()
    if worktree_path:
        data["worktreePath"] = worktree_path
    if worktree_branch:
        data["worktreeBranch"] = worktree_branch
    if depth > 1:
        data["depth"] = depth
    return ToolResult(content, data=data)


def _current_hand_back(
    result: AgentResult, scanned: ScannedReport | None, *, worktree_path: str | None, worktree_branch: str | None,
    warning: str | None, depth: int, merge_hint: str | None, tools: list[str], resolved_model: str | None,
) -> ToolResult:
    report = scanned.text if scanned is not None else result.text
    notes = [tools_used_line(tools)] if tools else []
    if scanned is not None and scanned.note is not None:
        notes.append(scanned.note)
    if warning:
        notes.append(warning)
    trailer: list[str] = []
    one_shot = result.agent_type in ONE_SHOT_AGENT_TYPES
    if not one_shot:
        trailer.append(continuation_line(result.agent_id))
        if worktree_path:
            trailer.append(f"worktreePath: {worktree_path}")
        if worktree_branch:
            trailer.append(f"worktreeBranch: {worktree_branch}")
        if worktree_path and merge_hint:
            trailer.append(merge_hint)
        if depth > 1:
            trailer.append(f"depth: {depth}")
        trailer.append(usage_block(result.total_tokens, result.total_tool_use_count, result.total_duration_ms))
    text = hand_back_text(report, notes=notes, trailer=trailer)
    base = result.to_tool_use_result()
    data: dict[str, Any] = {
        "status": "completed", "prompt": result.prompt, "agentId": result.agent_id, "agentType": result.agent_type,
        "harnessNoteCount": len(notes), "harnessTailCount": sum(line.count("\n") + 1 for line in trailer),
        "harnessSectionHash": FRAME_HASH, "content": base["content"], "resolvedModel": resolved_model,
        "totalDurationMs": result.total_duration_ms, "totalTokens": result.total_tokens,
        "totalToolUseCount": result.total_tool_use_count, "usage": result.usage, "canContinueAgent": not one_shot,
    }
    for key in ("structured_output", "modelResolution"):
        if key in base:
            data[key] = base[key]
    if worktree_path:
        data["worktreePath"] = worktree_path
    if worktree_branch:
        data["worktreeBranch"] = worktree_branch
    if depth > 1:
        data["depth"] = depth
    return ToolResult([{"type": "text", "text": text}], data=data)
