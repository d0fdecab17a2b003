"""What a remote worker needs to run one child: a plain, picklable description with no secrets.

The child's live objects (its session, provider, tools, hooks) stay in the
calling process; :func:`job_from_run` copies out what rebuilds them on a
worker: the conversation so far, the system prompt, the tool names, the
permission context and the model. Environment variables holding credentials
are never put here: :func:`worker_env` picks them out for the job's runtime
environment (Ray's ``runtime_env.env_vars``), which is not logged or bundled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.mcp.config import McpServerConfig
from catui.messages import Message
from catui.models.resolve import ResolvedModel
from catui.permissions.context import PermissionContext
from catui.sandbox.config import SandboxSettings
from catui.subagents.executors.remote_extras import ShippedHooks, shippable_hooks, shippable_mcp_servers
from catui.subagents.run import SubagentRun

if TYPE_CHECKING:
    from catui.mcp.manager import McpManager

WORKER_ENV_PREFIXES = ("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_CODE_", "OTEL_")
WORKER_ENV_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                    "SSL_CERT_FILE", "SSL_CERT_DIR")
LOCAL_ONLY_ENV = ("CATUI_HOME", "CATUI_EXECUTOR")
"""Variables that describe this machine or this choice, not the model: never sent."""


@dataclass(frozen=True)
class RemoteJob:
    """One child run as a worker rebuilds it. Picklable; holds no environment variables."""

    agent_id: str
    description: str
    session_id: str
    first_message: Message
    history: list[Message]
    system_prompt: list[dict[str, Any]]
    tool_names: tuple[str, ...]
    permissions: PermissionContext
    model_id: str
    resolved: ResolvedModel | None
    settings: dict[str, Any]
    cwd_in_repo: str
    """The agent's working directory relative to the repository root ('.' for the root)."""
    caller_root: str
    """The repository root on the calling machine: paths in the prompt that name it are rewritten."""
    max_turns: int | None = None
    max_tokens: int = 32000
    temperature: float | None = None
    thinking: dict[str, Any] | None = None
    effort: str | None = None
    parent_tool_use_id: str | None = None
    request_metadata: dict[str, Any] = field(default_factory=dict)
    max_tool_use_concurrency: int = 10
    agent_type: str = ""
    sandbox: SandboxSettings | None = None
    """The caller's Bash sandbox settings when the ``sandbox`` setting is on (the worker applies them)."""
    hooks: ShippedHooks | None = None
    """The child's command hooks (the settings' and its definition's)."""
    mcp_servers: tuple[McpServerConfig, ...] = ()
    """The caller's MCP servers the child has tools of (started on the worker when their command exists there)."""
    telemetry_carrier: dict[str, str] = field(default_factory=dict)
    """Where the child's span hangs (W3C ``traceparent``, prompt and parent agent ids), when telemetry is on."""


def job_from_run(
    run: SubagentRun, *, caller_root: Path, parent_resolved: ResolvedModel | None, settings: Mapping[str, Any],
    turns_done: int | None = None, mcp: McpManager | None = None,
) -> RemoteJob:
    """The worker's copy of ``run`` (tools it cannot rebuild there are named in docs/ray.md).

    ``turns_done``: the run was moved here mid-run after that many model turns in process; the worker
    continues from its last message (the current tool round's results), with the turns it has left.
    """
    config = run.session.config
    cwd = Path(run.session.ctx.cwd)
    try:
        cwd_in_repo = str(cwd.resolve().relative_to(caller_root.resolve()))
    except ValueError:
        cwd_in_repo = "."
    # The settings' `env` block may hold keys; the worker gets variables only through worker_env.
    safe_settings = {k: v for k, v in settings.items() if k != "env"}
    first_message, history = run.first_message, list(run.session.messages)
    max_turns = config.max_turns
    if turns_done is not None and history:
        first_message, history = history[-1], history[:-1]
        if max_turns is not None:
            max_turns = max(1, max_turns - turns_done)  # it stopped before a turn, so at least one is left
    return RemoteJob(
        agent_id=run.agent_id,
        description=run.description,
        session_id=run.session.session_id,
        first_message=first_message,
        history=history,
        system_prompt=[dict(block) for block in config.system_prompt],
        tool_names=tuple(tool.name for tool in config.tools),
        permissions=run.session.ctx.permissions,
        model_id=config.model,
        resolved=run.model.resolved or parent_resolved,
        settings=safe_settings,
        cwd_in_repo=cwd_in_repo,
        caller_root=str(caller_root),
        max_turns=max_turns,
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        thinking=config.thinking,
        effort=config.effort,
        parent_tool_use_id=config.parent_tool_use_id,
        request_metadata=dict(config.request_metadata),
        max_tool_use_concurrency=config.max_tool_use_concurrency,
        agent_type=run.agent_type,
        sandbox=sandbox.settings if (sandbox := run.session.ctx.services.sandbox) is not None else None,
        hooks=shippable_hooks(config.hooks),
        mcp_servers=shippable_mcp_servers(mcp, (tool.name for tool in config.tools)),
        telemetry_carrier=config.telemetry.carrier(config.spawned_from) if config.telemetry is not None else {},
    )


def worker_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables a worker's provider needs (keys, base URLs, proxies), for the job's runtime environment."""
    return {
        name: value
        for name, value in env.items()
        if (name.startswith(WORKER_ENV_PREFIXES) or name in WORKER_ENV_NAMES) and name not in LOCAL_ONLY_ENV
    }
