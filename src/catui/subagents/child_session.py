"""One builder of a child's session, for normal, fork and teammate children (spec 6.1 [11], 8.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from catui.agents.definition import AgentDefinition
from catui.hooks.install import child_hooks
from catui.session.session import Session, SessionConfig
from catui.session.transcript import TranscriptWriter
from catui.subagents.deps import RuntimeDeps
from catui.subagents.json_file import write_json_atomic
from catui.subagents.models import ChildModel
from catui.subagents.plan import ChildPlan
from catui.subagents.question_relay import question_relay
from catui.subagents.run import SubagentRun
from catui.telemetry.events import AGENT_TOOL_SELECTED, Telemetry
from catui.tools.base import ToolContext
from catui.tools.tool_search import DeferredToolView


class ChildTranscripts:
    """Where children's conversations are written: ``<sessions>/<parent session>/subagents/agent-<id>.jsonl``
    (or the request's ``transcript_dir``: a workflow's agents go in their run's folder).

    ``sessions_dir`` None (or a parent that keeps no transcript) writes nothing.
    """

    def __init__(self, sessions_dir: Path | None) -> None:
        self.sessions_dir = sessions_dir

    def open(self, parent: Session, plan: ChildPlan) -> tuple[TranscriptWriter | None, Path | None]:
        """The child's transcript writer and path, with its ``.meta.json`` written beside it."""
        if parent.config.transcript is None or self.sessions_dir is None:
            return None, None
        folder = plan.request.transcript_dir or self.sessions_dir / parent.session_id / "subagents"
        path = folder / f"agent-{plan.agent_id}.jsonl"
        writer = TranscriptWriter(
            [path], session_id=parent.session_id, cwd=plan.cwd, agent_id=plan.agent_id,
            git_branch=parent.config.transcript.git_branch,
        )
        meta: dict[str, Any] = {"agentType": plan.definition.agent_type, "description": plan.request.description}
        # The Agent call that started it and the agent that made that call, for the SDK's get_subagent_messages.
        meta["toolUseId"] = plan.request.tool_use_id
        if parent.config.agent_id is not None:
            meta["parentAgentId"] = parent.config.agent_id
        if plan.worktree is not None:
            meta["worktreePath"] = str(plan.worktree.path)
        # The resolved model and why it was chosen are part of the run's metadata (also in telemetry).
        meta["model"] = plan.model.model_id
        meta["modelReason"] = plan.model.reason
        # Written before the transcript's first line: an agent whose process died before that line can
        # still be resumed, from its task (see SubagentResumer.resume_from_transcript).
        meta["prompt"] = plan.request.prompt
        # The current contract's keys (observed-cc-now.md §9), additive for readers of the older shape.
        if plan.is_fork:
            meta["isFork"] = True
        meta.update({
            "isBuiltIn": plan.definition.is_built_in, "spawnDepth": plan.depth,
            "requestShape": "background" if plan.is_async else "foreground",
            "requestNonInteractive": not parent.ctx.interactive,
        })
        if plan.request.requested is None:
            meta["launchedWithDefaults"] = True
        if plan.worktree is not None:
            meta["spawnedWithWorktree"] = True
            if plan.worktree.branch:
                meta["worktreeBranch"] = plan.worktree.branch
        if plan.is_fork:
            meta["model"] = "inherit"
        if plan.request.model is None and plan.model.reason != "environment" and (
                plan.definition.model in (None, "", "inherit")):
            meta["modelNotNamed"] = True  # neither the call nor the definition named one: the parent's
        meta["pickedEffortModel"] = plan.model.model_id
        meta["finished"] = False  # set when the run ends (mark_meta_finished)
        meta.update(plan.request.extra_meta)
        write_json_atomic(meta_path(path), meta)
        return writer, path


def meta_path(transcript: Path) -> Path:
    """The ``.meta.json`` beside a child's transcript ``agent-<id>.jsonl``."""
    return transcript.with_name(f"{transcript.stem}.meta.json")


def mark_meta_finished(transcript: Path | None) -> None:
    """Record in the child's ``.meta.json`` that its run has ended (``finished: true``, observed-cc-now.md §9)."""
    if transcript is None:
        return
    path = meta_path(transcript)
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no meta to update (a hook-made transcript folder, a removed session): nothing to record
    if isinstance(meta, dict) and meta.get("finished") is not True:
        meta["finished"] = True
        write_json_atomic(path, meta)


def build_child_session(
    plan: ChildPlan, parent_ctx: ToolContext, parent: Session, transcripts: ChildTranscripts,
    deps: RuntimeDeps, *, is_resume: bool = False,
) -> SubagentRun:
    """The child's session and its run, ready for an executor (``is_resume``: it continues an earlier agent)."""
    definition = plan.definition
    ctx = ToolContext(
        cwd=plan.cwd,
        project_root=plan.project_root,
        permissions=plan.permissions,
        agent_id=plan.agent_id,
        agent_type=definition.agent_type,
        agent_depth=plan.depth,
        interactive=parent_ctx.interactive,
        services=parent_ctx.services.for_child(),
        # A teammate's own membership; anyone else's children (a teammate's sub-agents included) are not members.
        team=plan.team,
    )
    ctx.ask_user = question_relay(definition, ctx, parent_ask=parent_ctx.ask_user,
                                  permission_hook=parent.config.can_use_tool)
    transcript, transcript_path = transcripts.open(parent, plan)
    config = SessionConfig(
        provider=plan.provider,
        model=plan.model.model_id,
        tools=plan.tools,
        tool_context=ctx,
        # Deferred tools: the child loads its own (a fresh view of the parent's kind).
        tool_view=parent.config.tool_view.fork() if isinstance(parent.config.tool_view, DeferredToolView)
        else parent.config.tool_view,
        missing_tool_hints=dict(parent.config.missing_tool_hints),
        system_prompt=plan.system_prompt,
        session_id=parent.session_id,
        max_turns=definition.max_turns,
        max_tokens=plan.max_tokens,
        temperature=plan.temperature,
        thinking=plan.thinking,
        effort=plan.effort,
        transcript=transcript,
        can_use_tool=parent.config.can_use_tool,
        usage_tracker=parent.config.usage_tracker,
        agent_id=plan.agent_id,
        parent_tool_use_id=plan.request.tool_use_id,
        request_metadata={"query_source": plan.query_source},
        max_tool_use_concurrency=parent.config.max_tool_use_concurrency,  # a child keeps its parent's window
        context_policy=parent.config.context_policy,  # sub-agents compact by the same table and thresholds
        # The session-wide budget: the child's own turn that crosses it is its last (its tool calls do not run),
        # without waiting for the parent's abort to reach it.
        budget=parent.config.budget,
        file_history=parent.config.file_history,  # sub-agents' edits are rewound with the prompt that caused them
        # settings hooks plus the definition's own; SubagentStart/SubagentStop run inside the child's loop
        hooks=child_hooks(deps.hooks, definition, plan.agent_id, definition.agent_type,
                          cwd=plan.cwd, agent_transcript_path=transcript_path),
        telemetry=parent.config.telemetry,
    )
    child = Session(config)
    # An inherited history goes in as it is (messages are never changed in place), and into the child's
    # transcript, which then holds everything the child saw.
    child.messages.extend(plan.inherited)
    if transcript is not None:
        for message in plan.inherited:
            transcript.append(message)
    run = SubagentRun(
        agent_id=plan.agent_id,
        definition=definition,
        request=plan.request,
        session=child,
        first_message=plan.first_message,
        model=plan.model,
        parent_ctx=parent_ctx,
        transcript_path=transcript_path,
        worktree=plan.worktree,
        is_async=plan.is_async,
        is_fork=plan.is_fork,
        mcp_servers=plan.mcp_servers,
        depth=plan.depth,
        is_resume=is_resume,
    )
    hang_under_current_call(run)
    record_agent_selected(deps.telemetry, definition, plan.model, is_async=plan.is_async, is_fork=plan.is_fork,
                          depth=plan.depth, is_resume=is_resume)
    return run


def record_agent_selected(
    telemetry: Telemetry | None, definition: AgentDefinition, model: ChildModel, *, is_async: bool, is_fork: bool,
    depth: int = 1, is_resume: bool = False,
) -> None:
    """The ``catui_agent_tool_selected`` record (spec 16), with why the model was chosen."""
    if telemetry is None:
        return
    telemetry.record(
        AGENT_TOOL_SELECTED,
        {
            "agent_type": definition.agent_type,
            "model": model.model_id,
            "model_reason": model.reason,
            "source": definition.source,
            "color": definition.color,
            "is_built_in_agent": definition.is_built_in,
            "is_resume": is_resume,
            "is_async": is_async,
            "is_fork": is_fork,
            "depth": depth,
        },
    )


def hang_under_current_call(run: SubagentRun) -> None:
    """With telemetry on: the run's agent span hangs under the tool call being made now (the Agent call that
    starts it, or the SendMessage that resumes it), wherever and whenever the run then goes."""
    config = run.session.config
    if config.telemetry is None:
        return
    config.spawned_from = config.telemetry.spawn_context(**{
        "catui.agent.description": run.description, "catui.agent.model_reason": run.model.reason,
        "catui.agent.is_async": run.is_async, "catui.agent.is_fork": run.is_fork,
        "catui.agent.is_resume": run.is_resume, "catui.agent.depth": run.depth,
        "catui.agent.tool_use_id": run.request.tool_use_id,
    })
