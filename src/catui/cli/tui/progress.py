"""Turns a session's event stream into what the terminal shows during a turn.

The main agent's text streams as it comes. Each tool call is shown as
``● Read(src/app.py)`` with its outcome under it (``  ⎿ Read 42 lines``) once
it ends; while calls run they sit in the screen's live region. An Agent call
that has run for two seconds gets a live line under it (agent type,
description, tool count, tokens, elapsed), and the sub-agents it starts in
turn are nested under that line, so that several agents running at once stay
readable. Without a terminal the same milestones are printed as plain lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.cli.tui.format import (
    MarkdownLineStyler,
    agent_type_of,
    format_duration,
    format_tokens,
    is_agent_call,
    one_line,
    tool_call_label,
    tool_result_lines,
)
from catui.cli.tui.screen import Screen
from catui.session.events import (
    AssistantMessageEvent,
    ErrorEvent,
    Event,
    ResultEvent,
    SystemEvent,
    TextDelta,
    ThinkingDelta,
    ToolEndEvent,
    ToolStartEvent,
    UsageEvent,
)
from catui.session.usage import total_tokens

SUBAGENT_LINE_DELAY_S = 2.0
"""A sub-agent's live line appears once it has run this long (Claude Code's threshold)."""

BULLET = "●"
ELBOW = "⎿"


@dataclass
class RunningCall:
    """A tool call of the main agent that has started and not yet ended."""

    tool_use_id: str
    name: str
    label: str
    started: float
    tool_input: dict[str, Any]


@dataclass
class AgentProgress:
    """A running sub-agent, keyed by the Agent tool_use that started it."""

    tool_use_id: str
    agent_type: str
    description: str
    started: float
    parent: str | None  # the Agent tool_use of the sub-agent that started this one, None for the main agent's
    tool_count: int = 0
    tokens: int = 0
    last_tool: str = ""
    children: list[str] = field(default_factory=list)
    announced: bool = False  # plain output: the 2-second line was printed
    done: bool = False

    def summary(self, now: float) -> str:
        parts = [self.agent_type, one_line(self.description, 60)]
        parts.append(f"{self.tool_count} tool use{'s' if self.tool_count != 1 else ''}")
        parts.append(f"{format_tokens(self.tokens)} tokens")
        parts.append(format_duration(now - self.started))
        line = " · ".join(p for p in parts if p)
        return f"{line} · {self.last_tool}" if self.last_tool else line


class TurnView:
    """Renders one session's events on a :class:`Screen`; call :meth:`tick` periodically on a terminal."""

    def __init__(
        self, screen: Screen, *, cwd: Path | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.screen = screen
        self.cwd = cwd
        self.clock = clock
        self.calls: dict[str, RunningCall] = {}
        self.agents: dict[str, AgentProgress] = {}
        self.turn_started = clock()
        self.output_tokens = 0
        self.context_tokens: int | None = None  # the main agent's latest request, all tokens
        self.in_text = False
        self.status_hint = "esc to interrupt"
        self.agents_hint = ""  # shown while sub-agents run, e.g. "ctrl-b to run in background"
        self.busy = False
        self.thinking = False  # the model is streaming thinking (extended thinking), not text or calls yet

    # -- events -----------------------------------------------------------------------------------

    def start_turn(self) -> None:
        self.turn_started = self.clock()
        self.output_tokens = 0
        self.busy = True
        self.refresh()

    def handle(self, event: Event) -> None:
        """Show one event."""
        if event.parent_tool_use_id is not None or event.agent_id is not None:
            self._handle_child(event)
        elif isinstance(event, ThinkingDelta):
            self.thinking = True
        elif isinstance(event, TextDelta):
            self.thinking = False
            self._text(event.text)
        elif isinstance(event, AssistantMessageEvent):
            self.thinking = False
            self._end_text()
        elif isinstance(event, ToolStartEvent):
            self._tool_start(event)
        elif isinstance(event, ToolEndEvent):
            self._tool_end(event)
        elif isinstance(event, UsageEvent):
            self.output_tokens += int(event.usage.get("output_tokens") or 0)
            self.context_tokens = total_tokens(event.usage)
        elif isinstance(event, ErrorEvent):
            self._end_text()
            self.screen.print(self.screen.style(f"{BULLET} Error: {event.message}", "red"))
        elif isinstance(event, SystemEvent):
            self._system(event)
        elif isinstance(event, ResultEvent):
            self._result(event)
        self.refresh()

    def _text(self, text: str) -> None:
        if not text:
            return
        if not self.in_text:
            self.in_text = True
            text = text.lstrip("\n")
            if not text:
                self.in_text = False
                return
            self.screen.text_styler = MarkdownLineStyler()
            self.screen.stream_text(self.screen.style(BULLET, "bold") + " ")
        self.screen.stream_text(text.replace("\n", "\n  "))

    def _end_text(self) -> None:
        if self.in_text:
            self.in_text = False
            self.screen.end_text()

    def _tool_start(self, event: ToolStartEvent) -> None:
        self._end_text()
        now = self.clock()
        label = tool_call_label(event.name, event.input, self.cwd)
        self.calls[event.tool_use_id] = RunningCall(event.tool_use_id, event.name, label, now, event.input)
        if is_agent_call(event.name):
            self.agents[event.tool_use_id] = AgentProgress(
                tool_use_id=event.tool_use_id,
                agent_type=agent_type_of(event.input),
                description=str(event.input.get("description") or ""),
                started=now,
                parent=None,
            )
            if not self.screen.tty:
                # without a live region, say that it started: its tool calls are printed under it as they run
                self.screen.print(f"{BULLET} {label} …")

    def _tool_end(self, event: ToolEndEvent) -> None:
        call = self.calls.pop(event.tool_use_id, None)
        label = call.label if call else event.name
        agent = self.agents.get(event.tool_use_id)
        if agent is not None:
            agent.done = True
            self._forget_agent(event.tool_use_id)
        colour = "red" if event.is_error else "green"
        out = [self.screen.style(BULLET, colour) + " " + self.screen.style(label, "bold")]
        lines = tool_result_lines(
            event.name, event.content, event.is_error, event.data, call.tool_input if call else None, self.cwd
        )
        for i, line in enumerate(lines):
            prefix = f"  {ELBOW} " if i == 0 else "    "
            out.append(prefix + (self.screen.style(line, "red") if event.is_error else line))
        self.screen.print("\n".join(out), live=self.live_lines(self.clock()))

    def _forget_agent(self, tool_use_id: str) -> None:
        agent = self.agents.pop(tool_use_id, None)
        if agent is None:
            return
        for child in agent.children:
            self._forget_agent(child)
        if agent.parent and agent.parent in self.agents:
            siblings = self.agents[agent.parent].children
            if tool_use_id in siblings:
                siblings.remove(tool_use_id)

    def _handle_child(self, event: Event) -> None:
        """A sub-agent's event: count its tools and tokens, nest the agents it starts."""
        owner = self.agents.get(event.parent_tool_use_id or "")
        if owner is None:
            return
        if isinstance(event, ToolStartEvent):
            owner.tool_count += 1
            label = tool_call_label(event.name, event.input, self.cwd)
            owner.last_tool = label
            if not self.screen.tty:
                indent = "    " * (self._depth(owner) + 1)
                self.screen.print(self.screen.style(f"{indent}{ELBOW} {owner.agent_type} › {label}", "dim"))
            if is_agent_call(event.name):
                self.agents[event.tool_use_id] = AgentProgress(
                    tool_use_id=event.tool_use_id,
                    agent_type=agent_type_of(event.input),
                    description=str(event.input.get("description") or ""),
                    started=self.clock(),
                    parent=owner.tool_use_id,
                )
                owner.children.append(event.tool_use_id)
        elif isinstance(event, ToolEndEvent) and event.tool_use_id in self.agents:
            self._forget_agent(event.tool_use_id)
        elif isinstance(event, UsageEvent):
            # the context size of the latest turn, as Claude Code's progress line counts tokens
            owner.tokens = total_tokens(event.usage)

    def _depth(self, agent: AgentProgress) -> int:
        depth = 0
        while agent.parent and agent.parent in self.agents:
            agent = self.agents[agent.parent]
            depth += 1
        return depth

    def _system(self, event: SystemEvent) -> None:
        if event.subtype == "stream_retry":
            self._stream_retry(event)
            return
        if event.subtype == "compact_boundary" and event.agent_id is None:
            meta = event.data.get("compact_metadata") or {}
            self.screen.print(self.screen.style(
                f"{BULLET} Conversation compacted ({meta.get('trigger', 'auto')}; it was "
                f"{format_tokens(int(meta.get('pre_tokens') or 0))} tokens): going on from a summary", "dim"))
            return
        # a foreground agent's end shows under its Agent call; only background agents are announced here
        running_here = event.data.get("tool_use_id") in self.agents
        if event.subtype == "task_notification" and event.parent_tool_use_id is None and not running_here:
            summary = event.data.get("summary") or event.data.get("status") or ""
            if summary:
                self.screen.print(self.screen.style(f"{BULLET} {summary}", "dim"))

    def _stream_retry(self, event: SystemEvent) -> None:
        # The text streamed so far cannot be unprinted; say plainly that it does not count.
        self._end_text()
        withdrawn = " (the partial answer above is withdrawn)" if event.data.get("withdrawn_text") else ""
        attempt, limit = event.data.get("attempt"), event.data.get("max_retries")
        self.screen.print(self.screen.style(
            f"{BULLET} Stream interrupted: {event.data.get('error', '')}; retrying ({attempt}/{limit}){withdrawn}",
            "yellow"))

    def _result(self, event: ResultEvent) -> None:
        self._end_text()
        self.busy = False
        if event.is_error:
            self.screen.print(self.screen.style(f"  {ELBOW} {event.result}", "red"))

    # -- live region ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Redraw the live region (terminal) or print sub-agents' two-second lines (plain output)."""
        now = self.clock()
        if not self.screen.tty:
            for agent in self.agents.values():
                if not agent.announced and now - agent.started >= SUBAGENT_LINE_DELAY_S:
                    agent.announced = True
                    indent = "    " * self._depth(agent)
                    self.screen.print(f"{indent}  {ELBOW} {agent.summary(now)} (running)")
            return
        self.screen.set_live(self.live_lines(now))

    tick = refresh

    def live_lines(self, now: float) -> list[str]:
        """The running calls, each Agent call followed by its (nested) sub-agent lines, then a spinner."""
        lines: list[str] = []
        for call in self.calls.values():
            lines.append(self.screen.style(BULLET, "dim") + " " + call.label)
            agent = self.agents.get(call.tool_use_id)
            if agent is not None:
                lines.extend(self._agent_lines(agent, now, depth=0))
        if self.busy:
            elapsed = format_duration(now - self.turn_started)
            parts = [elapsed]
            if self.output_tokens:
                parts.append(f"↓ {format_tokens(self.output_tokens)} tokens")
            if self.status_hint:
                parts.append(self.status_hint)
            if self.agents and self.agents_hint:
                parts.append(self.agents_hint)
            spinner = "✻✶✳✢·"[int(now * 4) % 5]
            doing = "Thinking…" if self.thinking else "Working…"
            lines.append(self.screen.style(f"{spinner} {doing} ({' · '.join(parts)})", "magenta"))
        return lines

    def _agent_lines(self, agent: AgentProgress, now: float, depth: int) -> list[str]:
        if now - agent.started < SUBAGENT_LINE_DELAY_S:
            return []
        indent = "  " + "   " * depth
        lines = [self.screen.style(f"{indent}{ELBOW} {agent.summary(now)}", "dim")]
        for child_id in agent.children:
            child = self.agents.get(child_id)
            if child is not None:
                lines.extend(self._agent_lines(child, now, depth + 1))
        return lines
