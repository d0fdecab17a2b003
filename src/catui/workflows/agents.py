"""A workflow's agents as sub-agent runs of a host app (the executor seam: in-process or Ray).

Each agent asks for the distributed executor (``SpawnRequest.remote``): with Ray it runs on the cluster,
while its result comes back here, where the runner journals it before the script sees it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catui.errors import CatuiError
from catui.models.pricing import cost_usd
from catui.subagents.hand_back import tools_used
from catui.subagents.run import SpawnRequest
from catui.subagents.runtime import SubagentRuntime
from catui.subagents.structured_output import find_structured_output
from catui.tools.base import ToolContext
from catui.workflows.runner import DEFAULT_AGENT_TYPE, AgentFailed, AgentRunner

WORKFLOW_AGENT_TYPE = "workflow-subagent"
WITHHELD_TOOLS = frozenset({"Agent", "Workflow"})
"""A workflow's agents start no agents of their own (observed-cc-now.md §7: no Agent tool)."""


def agents_context(parent_ctx: ToolContext, *, stop: asyncio.Event,
                   observe: Callable[[Any], None] | None = None) -> ToolContext:
    """The context a workflow's agents see as their parent's: the calling agent's, with the run's own stop
    event for its abort (the main agent's interrupted turn does not stop them; stopping the run does), and an
    ``emit`` that hands their events only to ``observe``: Claude Code shows a workflow's agents in its progress
    entries, not as tasks of their own in stream-json (observed-cc-now.md §7)."""
    def swallow(event: Any) -> None:
        if observe is not None:
            observe(event)

    return dataclasses.replace(parent_ctx, abort=stop, emit=swallow)


def runtime_agent_runner(runtime: SubagentRuntime, parent_ctx: ToolContext, run_id: str, *,
                         transcript_dir: Path | None = None) -> AgentRunner:
    """``agent()`` calls of run ``run_id`` as children of the agent whose context is ``parent_ctx``.

    ``transcript_dir``: where their transcripts and ``.meta.json`` go (the run's folder).
    """
    counter = 0

    async def run_agent(prompt: str, opts: dict[str, Any], label: str,
                        started: Callable[[str], None]) -> tuple[Any, dict[str, Any]]:
        nonlocal counter
        counter += 1
        schema = opts.get("schema")
        if schema is not None and not isinstance(schema, dict):
            raise AgentFailed(f"agent {label!r}: schema must be a JSON Schema object")
        request = SpawnRequest(description=label[:80], prompt=prompt,
                               subagent_type=opts.get("agentType") or DEFAULT_AGENT_TYPE, model=opts.get("model"),
                               effort=opts.get("effort"), isolation=opts.get("isolation"),
                               tool_use_id=f"{run_id}_{counter}", output_schema=schema,
                               withheld_tools=WITHHELD_TOOLS,
                               shown_type=None if opts.get("agentType") else WORKFLOW_AGENT_TYPE,
                               transcript_dir=transcript_dir, movable=False,
                               extra_meta={"workflowPhase": opts.get("phase"), "inWorkflowRun": True},
                               remote=True, repository_share=run_id)  # on Ray: the cluster; the journal stays here
        try:
            run = await runtime.prepare(request, parent_ctx)
        except CatuiError as exc:
            raise AgentFailed(f"agent {label!r} could not start: {exc}") from None
        started(run.agent_id)
        outcome = await runtime.foreground.run_to_completion(run)
        if outcome.is_error:
            content = outcome.content
            text = content if isinstance(content, str) else " ".join(
                str(b.get("text", "")) for b in content if isinstance(b, dict))
            raise AgentFailed(text.strip().splitlines()[0] if text.strip() else f"agent {label!r} failed")
        structured = find_structured_output(run.session.tools)
        result: Any = structured.output if structured is not None and structured.output is not None else run.latest_text()
        usage = run.session.usage
        tokens = sum(int(usage.get(k, 0) or 0) for k in ("input_tokens", "output_tokens",
                                                          "cache_creation_input_tokens", "cache_read_input_tokens"))
        return result, {"agentId": run.agent_id, "tokens": tokens, "toolUses": run.tool_use_count,
                        "costUsd": cost_usd(run.model.model_id, usage), "toolsUsed": tools_used(run.messages),
                        "sessionId": run.session.session_id, "placement": dict(run.placement)}

    return run_agent
