"""HookRunner: runs the configured hooks of one agent for each event and combines their answers.

One runner belongs to one session: the main agent's holds the settings'
hooks; a sub-agent's (made by :func:`catui.hooks.install.child_hooks`) adds
its definition's hooks and puts ``agent_id`` / ``agent_type`` in every
event's input. All hooks matching an event run in parallel; their answers
combine so that the strictest wins (the rules live in
:mod:`catui.hooks.outcome`). An event without hooks costs a dictionary lookup.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.hooks.callback import run_callback_hook
from catui.hooks.config import CallbackHook, CommandHook, HooksConfig
from catui.hooks.execute import HookExecution, hook_environment, run_command_hook
from catui.hooks.lifecycle import HookRunReport, HookRunReporter, reported_callback, reported_command
from catui.hooks.outcome import (
    REMINDER_PREFIX,
    HookNotice,
    HookOutcome,
    combine,
    merge_outcomes,
    no_outcome,
)
from catui.hooks.output import HookResponse, interpret
from catui.messages import Message, blocks_of

if TYPE_CHECKING:
    from catui.tools.base import ToolContext

_NOTIFICATION_PREFIX = "<task-notification>"


class HookRunner:
    """Runs one agent's hooks. See the module docstring; one async method per event."""

    def __init__(
        self,
        hooks_config: HooksConfig,
        *,
        session_id: str,
        transcript_path: Path | str | None,
        cwd: Path,
        project_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        agent_transcript_path: Path | str | None = None,
        settings_config: HooksConfig | None = None,
        report_runs: HookRunReport | None = None,
    ) -> None:
        self.config = hooks_config
        self.report_runs = report_runs
        """Told of every hook run as it starts and ends (``include_hook_events``); sub-agents' runners share it."""
        self.settings_config = settings_config if settings_config is not None else hooks_config
        """The hooks that sub-agents inherit (the settings', without any agent's own)."""
        self.session_id = session_id
        self.transcript_path = str(transcript_path) if transcript_path else ""
        self.cwd = Path(cwd)
        self.project_dir = Path(project_dir) if project_dir is not None else self.cwd
        self.base_env = env
        self.env = hook_environment(env, self.project_dir)
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.agent_transcript_path = str(agent_transcript_path) if agent_transcript_path else ""
        self.tool_aliases: Callable[[str], Sequence[str]] = lambda _name: ()
        """A tool's other names, so that a ``Task`` matcher still catches the Agent tool (set by install_hooks)."""
        self.started = False
        self.pending_warnings: list[str] = []
        """Configuration problems to show the user when the agent starts (a sub-agent's own hooks)."""
        self._background: set[asyncio.Task[Any]] = set()
        self.payload_extras: Callable[[str, ToolContext | None], Mapping[str, Any]] | None = None
        """Fields every hook input of an event gets (the current contract's ``prompt_id``, ``effort``, …); the
        event's own fields win. Sub-agents' runners copy it."""
        self.current_contract = False
        """The current Claude Code contract's hook behaviour (set with ``payload_extras``, copied to
        sub-agents): PostToolUse reports the tool's ``duration_ms``, and a turn a background task's
        notification starts runs UserPromptSubmit with the notification as its prompt."""

    # -- plumbing -------------------------------------------------------------------------------

    def has(self, event: str) -> bool:
        """Whether any hook is configured for ``event`` (callers skip building its input otherwise)."""
        return self.config.has(event)

    def _payload(self, event: str, ctx: ToolContext | None, fields: Mapping[str, Any]) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self._cwd(ctx)),
        }
        permissions = getattr(ctx, "permissions", None)
        if permissions is not None:
            payload["permission_mode"] = permissions.mode
        payload["hook_event_name"] = event
        if self.agent_id is not None:
            payload["agent_id"] = self.agent_id
            payload["agent_type"] = self.agent_type
        if self.payload_extras is not None:
            payload.update(self.payload_extras(event, ctx))
        payload.update(fields)
        return payload

    def _cwd(self, ctx: ToolContext | None) -> Path:
        cwd = getattr(ctx, "cwd", None)
        return Path(cwd) if cwd is not None else self.cwd

    async def run_event(self, event: str, fields: Mapping[str, Any], *, subject: str | None = None,
                        ctx: ToolContext | None = None, also: Sequence[str] = ()) -> HookOutcome:
        """Run every hook of ``event`` whose matcher accepts ``subject`` (or one of ``also``) with ``fields``."""
        hooks = self.config.hooks_for(event, subject, also=also)
        if not hooks:
            return no_outcome()
        payload = self._payload(event, ctx, fields)
        cwd = self._cwd(ctx)
        waited: list[Awaitable[HookResponse]] = []
        for hook in hooks:
            if isinstance(hook, CallbackHook):
                answer = run_callback_hook(hook, payload, event)
                reporter = self._reporter(event, "callback")
                waited.append(reported_callback(reporter, answer) if reporter is not None else answer)
            elif hook.run_async:  # fire and forget: its answer is never read
                task = asyncio.ensure_future(self._execution(hook, payload, cwd, event))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            else:
                waited.append(self._command_response(hook, payload, cwd, event))
        responses = await _unless_aborted(asyncio.gather(*waited), getattr(ctx, "abort", None))
        return combine(event, responses)

    def _reporter(self, event: str, name: str) -> HookRunReporter | None:
        if self.report_runs is None:
            return None
        agent = {"agent_id": self.agent_id, "agent_type": self.agent_type} if self.agent_id is not None else {}
        return HookRunReporter(self.report_runs, event=event, name=name, agent=agent)

    async def _execution(self, hook: CommandHook, payload: Mapping[str, Any], cwd: Path,
                         event: str) -> HookExecution:
        run = run_command_hook(hook, payload, cwd=cwd, env=self.env)
        reporter = self._reporter(event, hook.command)
        return await (reported_command(reporter, run) if reporter is not None else run)

    async def _command_response(self, hook: CommandHook, payload: Mapping[str, Any], cwd: Path,
                                event: str) -> HookResponse:
        return interpret(await self._execution(hook, payload, cwd, event), event)

    # -- one method per event -------------------------------------------------------------------

    async def pre_tool_use(self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str,
                           ctx: ToolContext | None = None) -> HookOutcome:
        """Before a tool runs: may allow (skip the prompt), deny, ask, or rewrite the input."""
        if not self.config.has("PreToolUse"):
            return no_outcome()
        fields = {"tool_name": tool_name, "tool_input": dict(tool_input), "tool_use_id": tool_use_id}
        return await self.run_event("PreToolUse", fields, subject=tool_name, ctx=ctx,
                                    also=self.tool_aliases(tool_name))

    async def post_tool_use(self, tool_name: str, tool_input: Mapping[str, Any], tool_response: Any,
                            tool_use_id: str, ctx: ToolContext | None = None, *,
                            duration_ms: int | None = None) -> HookOutcome:
        """After a tool succeeded: may add context for the model or block with a reason fed to it.

        ``duration_ms`` (how long the call ran) is reported in the current contract."""
        if not self.config.has("PostToolUse"):
            return no_outcome()
        fields = {"tool_name": tool_name, "tool_input": dict(tool_input), "tool_response": tool_response,
                  "tool_use_id": tool_use_id}
        if self.current_contract and duration_ms is not None:
            fields["duration_ms"] = duration_ms
        return await self.run_event("PostToolUse", fields, subject=tool_name, ctx=ctx,
                                    also=self.tool_aliases(tool_name))

    async def post_tool_use_failure(self, tool_name: str, tool_input: Mapping[str, Any], error: str,
                                    tool_use_id: str, ctx: ToolContext | None = None) -> HookOutcome:
        """After a tool failed: may add context for the model."""
        if not self.config.has("PostToolUseFailure"):
            return no_outcome()
        fields = {"tool_name": tool_name, "tool_input": dict(tool_input), "tool_use_id": tool_use_id,
                  "error": error, "is_interrupt": False}
        return await self.run_event("PostToolUseFailure", fields, subject=tool_name, ctx=ctx,
                                    also=self.tool_aliases(tool_name))

    async def user_prompt_submit(self, prompt: str, ctx: ToolContext | None = None) -> HookOutcome:
        """Before a prompt reaches the model: may add context, or block it (the reason is for the user)."""
        if not self.config.has("UserPromptSubmit"):
            return no_outcome()
        outcome = await self.run_event("UserPromptSubmit", {"prompt": prompt}, ctx=ctx)
        if outcome.blocked:
            reason = outcome.reason or "A UserPromptSubmit hook blocked the prompt."
            outcome.notices.append(HookNotice("UserPromptSubmit", "", "blocked", reason))
        return outcome

    async def stop(self, *, stop_hook_active: bool = False, last_assistant_message: str = "",
                   ctx: ToolContext | None = None) -> HookOutcome:
        """The main agent is about to finish: a block makes it continue with the reason."""
        if not self.config.has("Stop"):
            return no_outcome()
        fields = {"stop_hook_active": stop_hook_active, "last_assistant_message": last_assistant_message}
        return await self.run_event("Stop", fields, ctx=ctx)

    async def subagent_stop(self, agent_id: str, agent_type: str, *, stop_hook_active: bool = False,
                            last_assistant_message: str = "", ctx: ToolContext | None = None) -> HookOutcome:
        """A sub-agent is about to finish: a block makes it continue with the reason."""
        if not self.config.has("SubagentStop"):
            return no_outcome()
        fields = {"agent_id": agent_id, "agent_type": agent_type, "stop_hook_active": stop_hook_active,
                  "agent_transcript_path": self.agent_transcript_path,
                  "last_assistant_message": last_assistant_message}
        return await self.run_event("SubagentStop", fields, subject=agent_type, ctx=ctx)

    async def subagent_start(self, agent_id: str, agent_type: str, ctx: ToolContext | None = None) -> HookOutcome:
        """A sub-agent is starting: may add context to its first message."""
        if not self.config.has("SubagentStart"):
            return no_outcome()
        return await self.run_event("SubagentStart", {"agent_id": agent_id, "agent_type": agent_type},
                                    subject=agent_type, ctx=ctx)

    async def session_start(self, source: str = "startup", model: str | None = None,
                            ctx: ToolContext | None = None) -> HookOutcome:
        """The conversation starts (``startup``) or is resumed (``resume``): may add context."""
        if not self.config.has("SessionStart"):
            return no_outcome()
        fields: dict[str, Any] = {"source": source}
        if model:
            fields["model"] = model
        return await self.run_event("SessionStart", fields, subject=source, ctx=ctx)

    async def session_end(self, reason: str = "other", ctx: ToolContext | None = None) -> HookOutcome:
        """The conversation ends (``prompt_input_exit``, ``clear``, ``logout``, ``other``); cannot block."""
        if not self.config.has("SessionEnd"):
            return no_outcome()
        outcome = await self.run_event("SessionEnd", {"reason": reason}, subject=reason, ctx=ctx)
        await self.wait_background()
        return outcome

    async def wait_background(self) -> None:
        """Wait for ``async`` hooks still running (called when the session ends)."""
        if self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    # -- what the session loop calls ------------------------------------------------------------

    async def before_run(self, message: Message, *, has_history: bool, model: str | None = None,
                         ctx: ToolContext | None = None) -> tuple[Message, HookOutcome]:
        """Hooks for a new run of the session: the message to send, and the combined outcome.

        The first run starts the agent (``SessionStart`` for the main agent,
        ``SubagentStart`` for a sub-agent); a main agent's prompt then goes
        through ``UserPromptSubmit`` (not a background task's notification).
        Context from any of them is added to the message; a blocked prompt
        comes back as ``outcome.blocked`` with the reason for the user.
        """
        outcomes: list[HookOutcome] = []
        if not self.started:
            self.started = True
            if self.pending_warnings:
                warned = HookOutcome(event="SubagentStart")
                warned.notices.extend(HookNotice("SubagentStart", "", "error", w) for w in self.pending_warnings)
                outcomes.append(warned)
            if self.agent_id is not None:
                outcomes.append(await self.subagent_start(self.agent_id, self.agent_type or "", ctx=ctx))
            else:
                outcomes.append(await self.session_start("resume" if has_history else "startup", model, ctx=ctx))
        if self.agent_id is None:
            prompt = prompt_text(message)
            if prompt is None and self.current_contract:
                prompt = notification_prompt(message)
            if prompt is not None:
                outcomes.append(await self.user_prompt_submit(prompt, ctx=ctx))
        outcome = merge_outcomes(outcomes)
        extra = [block for o in outcomes if (block := o.context_block()) is not None]
        if extra and not outcome.blocked:
            message = {**message, "content": [*blocks_of(message), *extra]}
        return message, outcome

    async def at_stop(self, last_assistant_message: str, *, stop_hook_active: bool,
                      ctx: ToolContext | None = None) -> HookOutcome:
        """``Stop`` (main agent) or ``SubagentStop`` (sub-agent) when the model ends its turn."""
        if self.agent_id is not None:
            return await self.subagent_stop(self.agent_id, self.agent_type or "", stop_hook_active=stop_hook_active,
                                            last_assistant_message=last_assistant_message, ctx=ctx)
        return await self.stop(stop_hook_active=stop_hook_active, last_assistant_message=last_assistant_message,
                               ctx=ctx)


async def _unless_aborted(work: asyncio.Future[list[Any]], abort: asyncio.Event | None) -> list[Any]:
    """``work``'s result; if the agent is interrupted first, the hooks are killed and the wait is cancelled."""
    if not isinstance(abort, asyncio.Event):
        return await work
    waiter: asyncio.Future[Any] = asyncio.ensure_future(abort.wait())
    pending: set[asyncio.Future[Any]] = {work, waiter}
    try:
        done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()
        raise
    finally:
        waiter.cancel()
    if work not in done:
        work.cancel()  # each command's task kills its process group on cancellation
        with contextlib.suppress(BaseException):
            await work
        raise asyncio.CancelledError
    return work.result()


_NOTIFICATION_ELEMENT = re.compile(r"<task-notification>.*?</task-notification>", re.DOTALL)


def notification_prompt(message: Message) -> str | None:
    """The ``<task-notification>`` elements of a turn a background task's notification starts (the current
    contract's UserPromptSubmit ``prompt``), or None for any other message."""
    found: list[str] = []
    for block in blocks_of(message):
        if block.get("type") == "tool_result":
            return None
        if block.get("type") == "text":
            found += _NOTIFICATION_ELEMENT.findall(str(block.get("text", "")))
    return "\n".join(found) if found else None


def prompt_text(message: Message) -> str | None:
    """The user's words in a prompt message, or None for messages that are not a typed prompt."""
    texts: list[str] = []
    for block in blocks_of(message):
        kind = block.get("type")
        if kind == "tool_result":
            return None
        if kind == "text":
            text = str(block.get("text", ""))
            if text.lstrip().startswith(_NOTIFICATION_PREFIX):
                return None
            if not text.lstrip().startswith(REMINDER_PREFIX):
                texts.append(text)
    return "\n".join(texts) if texts else None
