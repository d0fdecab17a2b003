"""Progress summaries of long-running background agents (spec 8.2 ``enableSummarization``).

Once a background agent has run for ``after_s`` seconds, a small model (the
``haiku`` alias unless configured) reads the end of its conversation every
``every_s`` seconds and says in one line what it is doing. The line goes to the
task (``metadata["progress_summary"]``, so state.db and ``catui tasks show``),
to TaskOutput, and to a ``system/task_progress`` event (``summary``). A summary
that fails (provider error, empty reply) is skipped; the agent never notices.

Settings: ``agentProgressSummaries`` (false turns them off; on by default),
``agentProgressSummaryModel``; environment (wins): ``CATUI_AGENT_PROGRESS_SUMMARIES=0``,
``CATUI_AGENT_PROGRESS_SUMMARY_MODEL``, ``CATUI_AGENT_PROGRESS_SUMMARY_AFTER_MS``
(default 30000) and ``CATUI_AGENT_PROGRESS_SUMMARY_EVERY_MS`` (default 30000).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catui.config.flags import is_falsy
from catui.errors import CatuiError, ConfigurationError
from catui.models.base import ModelRequest
from catui.models.http_api.accumulate import MessageAccumulator
from catui.models.resolve import create_provider, resolve_model

if TYPE_CHECKING:
    from catui.subagents.deps import RuntimeDeps
    from catui.subagents.run import SubagentRun
    from catui.tasks.registry import Task

log = logging.getLogger(__name__)

SUMMARY_KEY = "progress_summary"
"""Where the latest line is kept in the task's metadata (and so in state.db's ``meta``)."""
RECENT_MESSAGES = 12
MAX_SUMMARY_CHARS = 200

SUMMARY_SYSTEM_PROMPT = (
    "You watch a coding agent that works in the background and tell its user, in one short line, what it is "
    "doing right now. Write at most 15 words, present tense, no preamble, no quotes, no trailing period; "
    "name the file, command or question it is on when you can."
)


@dataclass(frozen=True)
class SummarySettings:
    """Whether and how background agents' progress is summarised."""

    enabled: bool = True
    model: str = "haiku"
    after_s: float = 30.0
    every_s: float = 30.0


def summary_settings(settings: Mapping[str, Any], env: Mapping[str, str]) -> SummarySettings:
    """Read the settings and environment; raises ConfigurationError for a bad number."""
    enabled = settings.get("agentProgressSummaries") is not False
    switch = env.get("CATUI_AGENT_PROGRESS_SUMMARIES")
    if switch is not None and switch.strip():
        enabled = not is_falsy(switch)
    model = env.get("CATUI_AGENT_PROGRESS_SUMMARY_MODEL") or settings.get("agentProgressSummaryModel") or "haiku"
    return SummarySettings(
        enabled=enabled, model=str(model),
        after_s=_seconds(env, "CATUI_AGENT_PROGRESS_SUMMARY_AFTER_MS", 30.0),
        every_s=_seconds(env, "CATUI_AGENT_PROGRESS_SUMMARY_EVERY_MS", 30.0),
    )


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigurationError(
            f"{name}={raw!r} is not a whole number of milliseconds; set it to e.g. 30000"
        ) from None
    if value <= 0:
        raise ConfigurationError(f"{name}={value} must be a positive number of milliseconds, e.g. 30000")
    return value / 1000


class ProgressSummaries:
    """Starts and stops the summary loop of each background agent."""

    def __init__(self, config: SummarySettings, deps: RuntimeDeps) -> None:
        self.config = config
        self.deps = deps
        self._loops: dict[str, asyncio.Task[None]] = {}

    def start(self, run: SubagentRun, task: Task, on_summary: Callable[[str], None]) -> None:
        """Begin summarising ``run`` (after the threshold) until :meth:`stop`."""
        if not self.config.enabled:
            return
        self.stop(run.agent_id)
        loop = asyncio.get_running_loop().create_task(self._loop(run, task, on_summary),
                                                      name=f"summary-{run.agent_id}")
        self._loops[run.agent_id] = loop

    def stop(self, agent_id: str) -> None:
        """End ``agent_id``'s summary loop (the agent ended, or was moved on)."""
        loop = self._loops.pop(agent_id, None)
        if loop is not None:
            loop.cancel()

    async def _loop(self, run: SubagentRun, task: Task, on_summary: Callable[[str], None]) -> None:
        await asyncio.sleep(self.config.after_s)
        last_seen = -1
        while task.is_running:
            if len(run.messages) != last_seen:  # nothing new since the last line: no request
                last_seen = len(run.messages)
                try:
                    line = await self.summarise(run)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # a summary never touches the agent
                    log.debug("progress summary of %s failed: %s", run.agent_id, exc)
                    line = None
                if line and task.is_running:
                    task.metadata[SUMMARY_KEY] = line
                    task.changed()
                    with contextlib.suppress(Exception):
                        on_summary(line)
            await asyncio.sleep(self.config.every_s)

    async def summarise(self, run: SubagentRun) -> str | None:
        """One line about the end of ``run``'s conversation, or None when the model gives none."""
        try:
            deps = self.deps
            resolved = resolve_model(self.config.model, deps.settings, deps.env, within=deps.parent_resolved)
            provider = create_provider(resolved, deps.settings, deps.env)
        except CatuiError as exc:
            log.debug("no model for progress summaries: %s", exc)
            return None
        from catui.safety.handoff import render_transcript  # lazy (catui.lazy): with the first summary

        recent = render_transcript(run.messages[-RECENT_MESSAGES:])
        request = ModelRequest(
            model=resolved.model_id,
            messages=[{"role": "user", "content": [{"type": "text", "text":
                       f"The agent's task: {run.description}\n\n<recent>\n{recent}\n</recent>\n\n"
                       "What is it doing now? One line."}]}],
            system=[{"type": "text", "text": SUMMARY_SYSTEM_PROMPT}],
            max_tokens=100,
            temperature=0,
            metadata={"query_source": "agent_progress_summary"},
        )
        accumulator = MessageAccumulator()
        async for event in provider.stream(request):
            accumulator.feed(event)
        text = " ".join(
            str(b.get("text", "")) for b in accumulator.message.get("content", []) if b.get("type") == "text"
        )
        line = " ".join(text.split())
        return line[:MAX_SUMMARY_CHARS] or None
