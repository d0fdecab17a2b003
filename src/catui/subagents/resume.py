"""SendMessage's resume of a finished agent from disk (spec 14.1): after a restart, or once dropped from memory.

Its messages are read back from its output file (else its session transcript),
its type and description from the ``meta.json`` beside it, and it continues in
the background where it stopped, in the worktree it kept when that still exists.
An agent this process still holds is resumed by
:meth:`catui.subagents.background.BackgroundAgents.resume_held` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catui.errors import CatuiError
from catui.messages import Message, user_message
from catui.paths import project_runtime_dir
from catui.session.transcript import read_transcript
from catui.subagents.background import BackgroundAgents
from catui.subagents.child_session import ChildTranscripts, build_child_session
from catui.subagents.plan import ChildPlanner, parent_session
from catui.subagents.resolve import AgentSpawnError, resolve_agent_type
from catui.subagents.resume_state import carried_from_disk, last_uuid, read_meta, resumable_history
from catui.subagents.run import SpawnRequest
from catui.subagents.worktrees import WorktreeLeases
from catui.tasks.registry import TaskRegistry
from catui.tools.base import ToolContext
from catui.worktree.model import WorktreeInfo


class AgentResumer:
    """Continues agents whose conversation this process does not hold."""

    def __init__(
        self, planner: ChildPlanner, transcripts: ChildTranscripts, background: BackgroundAgents,
        worktrees: WorktreeLeases, tasks: TaskRegistry, main_ctx: ToolContext,
    ) -> None:
        self.planner = planner
        self.transcripts = transcripts
        self.background = background
        self.worktrees = worktrees
        self.tasks = tasks
        self.main_ctx = main_ctx
        self._resuming: set[str] = set()

    def saved_transcript(self, agent_id: str) -> Path | None:
        """Where a finished agent's conversation is on disk: its output file, else its session transcript."""
        output = project_runtime_dir(self.tasks.project_root) / "tasks" / f"{agent_id}.output"
        if output.is_file():
            return output
        sessions = self.transcripts.sessions_dir
        if sessions is not None:
            for found in sorted(Path(sessions).glob(f"*/subagents/agent-{agent_id}.jsonl")):
                return found
        return None

    def _recorded_prompt(self, agent_id: str) -> str | None:
        """The task an agent was given, from the meta.json beside its session transcript (catui writes it there)."""
        sessions = self.transcripts.sessions_dir
        if sessions is None:
            return None
        for found in sorted(Path(sessions).glob(f"*/subagents/agent-{agent_id}.meta.json")):
            prompt = read_meta(found.with_name(f"agent-{agent_id}.jsonl"), agent_id).get("prompt")
            if isinstance(prompt, str) and prompt:
                return prompt
        return None

    async def resume_from_transcript(self, agent_id: str, text: str, transcript: Path) -> str | None:
        """Continue ``agent_id`` from ``transcript`` with ``text``; returns None when it resumed, else why not."""
        if agent_id in self._resuming:
            return f"Agent {agent_id} is already being resumed."
        row = self._task_row(agent_id)
        if row is not None and row.get("status") in ("running", "queued"):
            from catui.state.db import pid_is_alive  # lazy (catui.lazy): the state database

            pid = row.get("pid")
            if isinstance(pid, int) and pid != os.getpid() and pid_is_alive(pid):
                return (f"Agent {agent_id} is still running in another catui process (pid {pid}); message it "
                        "from there, or stop it with `catui tasks stop` first.")
        history = resumable_history(read_transcript(transcript))
        meta = read_meta(transcript, agent_id)
        if not history:
            original = meta.get("prompt") or self._recorded_prompt(agent_id)
            if not isinstance(original, str) or not original:
                return f"Agent {agent_id} cannot be resumed: its transcript {transcript} holds no messages."
            # Its process died before the agent's first line was written: it starts on its task now.
            text = f"{original}\n\n{text}"
        agent_type = meta.get("agentType") or (row or {}).get("agent_type")
        if not isinstance(agent_type, str) or not agent_type:
            return (f"Agent {agent_id} cannot be resumed: its agent type is not recorded (no meta.json beside "
                    f"{transcript}).")
        description = meta.get("description") or (row or {}).get("description") or agent_type
        try:
            definition = resolve_agent_type(self.planner.deps.registry, agent_type, self.main_ctx.permissions)
        except AgentSpawnError as exc:
            return f"Agent {agent_id} cannot be resumed: {exc}"
        kept, folder, note = self._kept_worktree(agent_id, meta, fresh=bool(definition.isolation))
        request = SpawnRequest(
            description=str(description), prompt=text, subagent_type=agent_type, run_in_background=True,
            # the Agent call that started it (state.db), else the SendMessage call resuming it
            tool_use_id=(row or {}).get("tool_use_id") or self.main_ctx.tool_use_id,
            cwd=folder,
        )
        self._resuming.add(agent_id)
        try:
            return await self._continue(agent_id, text, transcript, history, request, kept, note, row)
        finally:
            self._resuming.discard(agent_id)

    async def _continue(
        self, agent_id: str, text: str, transcript: Path, history: list[Message], request: SpawnRequest,
        kept: WorktreeInfo | None, note: str | None, row: dict[str, Any] | None,
    ) -> str | None:
        try:
            plan = await self.planner.plan_child(request, self.main_ctx, agent_id=agent_id, worktree=kept)
        except (AgentSpawnError, CatuiError) as exc:
            return f"Agent {agent_id} cannot be resumed: {exc}"
        parent = parent_session(self.main_ctx)  # plan_child checked it
        run = build_child_session(plan, self.main_ctx, parent, self.transcripts, self.planner.deps,
                                  is_resume=True)
        run.session.messages[:] = history
        run.first_message = user_message([{"type": "text", "text": text}])
        run.is_async = True
        output = self.tasks.output_path(agent_id)
        if transcript != output and not output.exists():
            with contextlib.suppress(OSError):  # the output file starts with the conversation so far
                output.write_bytes(transcript.read_bytes())
        carried = carried_from_disk(self.tasks.get(agent_id), row, transcript)
        run.stop_event = asyncio.Event()
        self.background.relaunch(run, carried, copy_existing=False, note=note)
        writer = run.session.config.transcript
        if writer is not None:
            writer.last_uuid = last_uuid(output)  # the new lines continue the saved chain
        return None

    def _kept_worktree(
        self, agent_id: str, meta: Mapping[str, Any], *, fresh: bool
    ) -> tuple[WorktreeInfo | None, str | None, str | None]:
        """Where an agent resumed from disk continues: ``(worktree, folder, note)``.

        The worktree it kept (state.db ``worktrees``, else meta.json's ``worktreePath``) when it still
        exists: as a WorktreeInfo when state.db knows it (settled again at the end), else as a folder to
        work in. When it is gone, ``note`` says so for the agent's result; ``fresh`` (its definition asks
        for isolation) means it then gets a new worktree, else it works in the project folder.
        """
        recorded = meta.get("worktreePath") or self.worktrees.recorded_path(agent_id)
        if not isinstance(recorded, str) or not recorded:
            return None, None, None
        if not Path(recorded).is_dir():
            where = "a new worktree" if fresh else "the project folder"
            return None, None, f"Note: its worktree {recorded} no longer exists, so it continued in {where}."
        info = self.worktrees.reopen(agent_id, recorded)
        if info is not None:
            return info, None, None
        if fresh:  # a folder state.db does not know cannot be settled as a worktree: it gets a new one
            return None, None, (f"Note: its worktree {recorded} is not recorded in state.db, so it continued in a "
                                "new worktree.")
        return None, recorded, None

    def _task_row(self, agent_id: str) -> dict[str, Any] | None:
        state = self.tasks.state
        if state is None:
            return None
        try:
            row = state.get_task(agent_id)
        except CatuiError:
            return None
        return dict(row) if row is not None else None
