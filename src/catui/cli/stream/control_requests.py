"""Answering the driver's control requests (``--input-format stream-json``): interrupt, mode, model, status,
context usage, MCP reconnect and toggle, rewinding files.

``initialize`` is handled by the stream session itself, because its hooks,
agents and SDK MCP servers shape the application it builds;
:func:`initialize_response` is what catui answers it with. Every other
request goes to :class:`ControlRequestHandler`. A request catui cannot carry
out is answered with an error naming it; the session goes on.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any

from catui.app.build import AgentApp
from catui.cli.stream.output import api_key_source
from catui.commands.listing import command_entries
from catui.errors import CatuiError
from catui.models.reasoning import thinking_from_budget
from catui.models.resolve import model_aliases
from catui.session.file_history import RewindError
from catui.styles.active import reported_style

log = logging.getLogger(__name__)

# Requests the official Agent SDKs can send that catui has no counterpart for -> what catui does instead.
# Each is answered with an error naming the request and this text; the session goes on.
_UI_ONLY = "catui has no such dialog; its terminal shows that state with its own commands"
UNSUPPORTED: dict[str, str] = {
    "cancel_async_message": "a queued prompt runs in turn; interrupt stops the running one",
    "update_queued_message": "a queued prompt runs as sent",
    "channel_enable": "catui reads prompts from stdin only",
    "claude_authenticate": "catui reads API keys from the environment (ANTHROPIC_API_KEY)",
    "claude_oauth_callback": "catui reads API keys from the environment (ANTHROPIC_API_KEY)",
    "claude_oauth_wait_for_completion": "catui reads API keys from the environment (ANTHROPIC_API_KEY)",
    "mcp_authenticate": "catui connects MCP servers with the headers of their config",
    "mcp_clear_auth": "catui keeps no MCP credentials",
    "mcp_oauth_callback_url": "catui connects MCP servers with the headers of their config",
    "mcp_read_resource": "catui offers MCP tools only",
    "set_mcp_permission_mode_override": "MCP tools follow the session's permission mode",
    "generate_session_title": "catui titles a session from its first prompt",
    "remote_control": "catui runs locally, driven over stdin/stdout",
    "set_proactive": "catui answers prompts only",
    "side_question": "send the question as a prompt",
    "set_cwd": "the working folder is fixed at start (cwd)",
    "set_peer_delivery": "messages from peer sessions go straight into this session's inbox (none are held)",
    "decide_held_peer_message": "catui holds no peer messages: they go straight into the session's inbox",
    "claim_session": "catui serves one session per process",
    "end_session": "close catui's stdin to end the session",
    "export_conversation": "the transcript is the session's JSONL file (get_session_messages reads it)",
    "get_plan": "the plan is the plan file named in ExitPlanMode's input (planFilePath)",
    "get_task_output": "a background task's output file is named in its task_notification (output_file)",
    "get_usage": "each result carries usage, total_cost_usd and modelUsage",
    "get_status": "get_server_info and mcp_status report catui's state",
    "get_hooks_listing": "hooks are the settings' and those sent in initialize",
    "list_permission_rules": "the rules are the settings' and the allowed/disallowed tools given at start",
    "message_rated": "catui collects no ratings",
    "submit_feedback": "catui collects no feedback",
    "submit_survey_feedback": "catui collects no feedback",
    "prompt_draft_activity": "catui has no prompt drafts",
    "set_prompt_suggestions_paused": "catui does not suggest prompts",
    "ultrareview_launch": "catui has no ultrareview",
    "get_chrome_browsers": "catui has no browser integration",
    "get_chrome_dialog": "catui has no browser integration",
    "select_chrome_browser": "catui has no browser integration",
    "set_chrome_browser_hints": "catui has no browser integration",
    "get_memory_dialog": _UI_ONLY,
    "get_sandbox_dialog": _UI_ONLY,
    "get_skills_dialog": _UI_ONLY,
}


def initialize_response(app: AgentApp) -> dict[str, Any]:
    """What catui answers ``initialize`` with (claude-agent-sdk's ``get_server_info()`` returns it)."""
    registry = app.registry
    return {
        "commands": command_entries(app.skills),
        "agents": [{"name": a.agent_type, "description": a.description, "model": a.model}
                   for a in getattr(registry, "active", [])],
        "output_style": reported_style(app.services.output_style)[0],
        "available_output_styles": reported_style(app.services.output_style)[1],
        "models": supported_models(app),
        "account": account_info(app),
        "pid": os.getpid(),
    }


def supported_models(app: AgentApp) -> list[dict[str, str]]:
    """The SDKs' ModelInfo list (TypeScript ``supportedModels()``): the session's model, then on Anthropic's API
    every model alias (``set_model`` takes each ``value``), with the model id it stands for."""
    current = app.session.config.model
    models = [{"value": current, "resolvedModel": current, "displayName": app.model_display,
               "description": "the session's model"}]
    if app.session.config.provider.name != "anthropic":
        return models  # the aliases name Anthropic models, which this session's credentials may not reach
    try:
        aliases = model_aliases(app.settings.merged, app.services.env)
    except CatuiError:
        return models  # a bad modelAliases setting was reported at start
    for alias, target in aliases.items():
        models.append({"value": alias, "resolvedModel": target, "displayName": alias.capitalize(),
                       "description": f"alias of {target}"})
    return models


def account_info(app: AgentApp) -> dict[str, str]:
    """The SDKs' AccountInfo (TypeScript ``accountInfo()``): where the credential came from; catui signs in to
    no account, so there is no email or organization. ``apiProvider`` only when the model is Anthropic's API."""
    account = {"tokenSource": "none", "apiKeySource": api_key_source(app.services.env)}
    if app.session.config.provider.name == "anthropic":
        account["apiProvider"] = "firstParty"
    return account


class ControlRequestHandler:
    """Carries out one control request on a running application.

    ``interrupt`` stops the current turn; ``main_usage`` gives the main agent's last model usage
    (None before its first request), which ``get_context_usage`` reports against the context window.
    """

    def __init__(self, app: AgentApp, interrupt: Callable[[], None],
                 main_usage: Callable[[], dict[str, Any] | None], *, bypass_allowed: bool = True) -> None:
        self.app = app
        self.interrupt = interrupt
        self.main_usage = main_usage
        self.bypass_allowed = bypass_allowed
        """Whether ``set_permission_mode`` may switch to bypassPermissions (Claude Code allows it only when the
        session started in that mode or with --allow-dangerously-skip-permissions)."""
        self.start_thinking = app.session.config.thinking
        """The thinking config the session started with; ``set_max_thinking_tokens`` with null goes back to it."""

    async def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The success ``response`` object for ``request``; raises CatuiError with the reason otherwise."""
        subtype = request.get("subtype")
        if subtype == "interrupt":
            self.interrupt()
            return {}
        if subtype == "set_permission_mode":
            if request.get("mode") == "bypassPermissions" and not self.bypass_allowed:
                raise CatuiError("Cannot set permission mode to bypassPermissions because the session was not "
                                 "launched with --dangerously-skip-permissions or --allow-dangerously-skip-permissions "
                                 "(the SDKs' allowDangerouslySkipPermissions / permission_mode='bypassPermissions')")
            self.app.set_permission_mode(request.get("mode"))
            return {"mode": request.get("mode")}  # the mode now in effect (the TypeScript SDK resolves with it)
        if subtype == "background_tasks":
            return await background_tasks(self.app, request.get("tool_use_id"))
        if subtype == "get_settings":
            return {"settings": dict(self.app.settings.merged)}
        if subtype == "mirror_error":
            # the driver's session_store failed to take some transcript lines; the transcript on disk is whole
            log.warning("the driver's session store reported an error: %s", request.get("error"))
            return {}
        if subtype == "rename_session":
            return rename_session(self.app, request.get("title"))
        if subtype == "set_model":
            return {"model": self.app.switch_model(request.get("model")).model_id}
        if subtype == "set_max_thinking_tokens":
            return self.set_max_thinking_tokens(request.get("max_thinking_tokens"), request.get("thinking_display"))
        if subtype == "stop_task":
            await self.app.stop_task(request.get("task_id"))
            return {}
        if subtype == "rewind_files":
            return rewind_files(self.app, request.get("user_message_id"), request.get("dry_run"))
        if subtype == "read_file":
            from catui.cli.stream.file_requests import read_file  # lazy: only hosts that show files ask

            return read_file(self.app.session.ctx, request.get("path"), request.get("max_bytes"),
                             request.get("encoding"))
        if subtype == "seed_read_state":
            from catui.cli.stream.file_requests import seed_read_state  # lazy, as read_file

            return seed_read_state(self.app.session.ctx, request.get("path"), request.get("mtime"))
        if subtype == "mcp_status":
            return self.app.mcp_status()
        if subtype == "get_context_usage":
            return self.app.context_usage(self.main_usage())
        if subtype == "mcp_reconnect":
            await self.app.reconnect_mcp_server(request.get("serverName"))
            return {}
        if subtype == "mcp_toggle":
            await self.app.toggle_mcp_server(request.get("serverName"), request.get("enabled"))
            return {}
        if subtype == "mcp_set_servers":
            return await self.app.set_mcp_servers(request.get("servers"),
                                                  background=request.get("connect_in_background") is True)
        if subtype == "reload_plugins":
            from catui.app.plugins_reload import reload_plugins  # lazy: only drivers that reload ask

            return reload_plugins(self.app, request.get("add_plugins"))
        if subtype == "apply_flag_settings":
            self.app.apply_flag_settings(request.get("settings"))
            return {}
        if subtype == "update_settings":
            self.app.update_settings(request.get("source"), request.get("settings"))
            return {}
        if subtype == "reload_skills":
            return {"skills": self.app.reload_skills()}
        if subtype == "reload_output_styles":
            return {"available_output_styles": self.app.reload_output_styles()}
        if subtype == "initialize":
            raise CatuiError("catui is already initialized; send initialize once, before the first prompt")
        if isinstance(subtype, str) and subtype in UNSUPPORTED:
            raise CatuiError(f"catui does not support the control request {subtype!r}: {UNSUPPORTED[subtype]}")
        if not isinstance(subtype, str):
            raise CatuiError(f"a control request needs a 'subtype' string (such as 'interrupt'), not {subtype!r}")
        raise CatuiError(f"unknown control request subtype {subtype[:200]!r}")

    def set_max_thinking_tokens(self, budget: Any, display: Any) -> dict[str, Any]:
        """The main agent's thinking budget from its next request on: N tokens (at least the API's minimum),
        0 for none, null for the session's starting config. A thinking display catui cannot send is refused
        after the budget is applied, as Claude Code does."""
        thinking = self.start_thinking if budget is None else thinking_from_budget(budget, "set_max_thinking_tokens")
        self.app.set_thinking(thinking)
        if display is not None:
            raise CatuiError(f"set_max_thinking_tokens: catui cannot send the thinking display {display!r} (the "
                             "budget was applied); leave thinkingDisplay out")
        return {}


async def background_tasks(app: AgentApp, tool_use_id: Any = None) -> dict[str, Any]:
    """Claude Code's Ctrl-B: the running foreground sub-agents move to the background (with ``tool_use_id``,
    only the one that Agent call started). Answers their task ids and ``backgrounded``, which the TypeScript
    SDK's ``backgroundTasks()`` resolves with: false only when ``tool_use_id`` matched no foreground agent."""
    if tool_use_id is not None and (not isinstance(tool_use_id, str) or not tool_use_id):
        raise CatuiError(f"background_tasks: 'tool_use_id' must be the id of an Agent call, not {tool_use_id!r}")
    if app.subagent_runtime is None:
        raise CatuiError("background_tasks: this session has no sub-agent runtime")
    moved = await app.background_foreground_agents(tool_use_id)
    return {"task_ids": moved, "backgrounded": bool(moved) or tool_use_id is None}


def rewind_files(app: AgentApp, user_message_id: Any, dry_run: Any) -> dict[str, Any]:
    """Claude Code's RewindFilesResult for a rewind (``dry_run``: a preview that changes no file).

    A real rewind that cannot be done is an error answer (claude-agent-sdk's ``rewind_files`` reads nothing
    else); a dry run answers ``canRewind: false`` and the reason instead, as Claude Code does, since that is
    the question it asks.
    """
    if dry_run is not None and not isinstance(dry_run, bool):
        raise CatuiError(f"rewind_files: 'dry_run' must be true or false, not {dry_run!r}")
    try:
        outcome = app.rewind_files(user_message_id, dry_run=bool(dry_run))
    except RewindError as exc:
        if dry_run:
            return {"canRewind": False, "error": str(exc)}
        raise
    return {"canRewind": True, "filesChanged": outcome.files_changed, "insertions": outcome.insertions,
            "deletions": outcome.deletions}


def rename_session(app: AgentApp, title: Any) -> dict[str, Any]:
    """Give the session a title (the transcript's ``custom-title`` line, as the SDKs' rename_session)."""
    if not isinstance(title, str) or not title.strip():
        raise CatuiError("rename_session needs a non-empty 'title' string")
    transcript = app.session.config.transcript
    if transcript is None:
        raise CatuiError("rename_session: this session writes no transcript (--no-session-persistence)")
    if not transcript.paths or not transcript.paths[0].exists():
        raise CatuiError("rename_session: the session has no transcript yet; send a prompt first")
    line = {"type": "custom-title", "customTitle": title.strip(), "sessionId": app.session.session_id}
    for path in transcript.paths[:1]:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return {}
