"""The flags claude-agent-sdk passes to its CLI, read into catui's run options.

``ClaudeAgentOptions(cli_path="catui")`` starts catui with Claude Code's
flags. Those catui implements are read here (``--system-prompt-file``,
``--tools``, ``--mcp-config``, ``--setting-sources``, ``--thinking``,
``--json-schema``); those
it does not are refused with one line naming the flag and the SDK option
that sets it, so that a run never silently lacks what was asked for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catui.app.output_format import StructuredResult, output_schema_from
from catui.errors import ConfigurationError
from catui.models.reasoning import parse_thinking_config

# flag (the click parameter name) -> (how it is spelled, the SDK option that passes it, what catui does instead)
UNSUPPORTED_FLAGS: dict[str, tuple[str, str, str]] = {
    "task_budget": ("--task-budget", "task_budget / taskBudget",
                    "catui sends no task budget; --max-budget-usd limits a session's spending"),
    "betas": ("--betas", "betas", "catui sends only the beta headers its own features need"),
    "thinking_display": ("--thinking-display", "thinking's display",
                         "catui shows thinking as the model sends it"),
    "proactive": ("--proactive", "proactive", "catui answers prompts only"),
    "assistant": ("--assistant", "assistant", "catui runs as a coding agent only"),
    "channels": ("--channels", "channels", "catui reads prompts from stdin only"),
    "sdk_url": ("--sdk-url", "a remote session", "catui runs locally, driven over stdin/stdout"),
    "managed_settings": ("--managed-settings", "managedSettings",
                         "catui reads no managed settings; pass them with settings (--settings)"),
    "managed_settings_in_initialize": ("--managed-settings-in-initialize", "managedSettingsDelivery: 'initialize'",
                                       "catui reads no managed settings; pass them with settings (--settings)"),
    "project_config_root": ("--project-config-root", "projectConfigRoot",
                            "catui reads the project configuration of cwd; start it in that checkout"),
}

SETTING_SOURCES = ("user", "project", "local")


def refuse_unsupported(options: Mapping[str, Any]) -> None:
    """Raise ConfigurationError for the first flag given that catui does not implement."""
    for key, (flag, sdk_option, instead) in UNSUPPORTED_FLAGS.items():
        value = options.get(key)
        if value not in (None, False, ()):
            raise ConfigurationError(
                f"{flag} is not supported by catui: {instead}. Leave it out (with an Agent SDK: do not set "
                f"{sdk_option})"
            )
    tool = options.get("permission_prompt_tool")
    if tool is not None and tool != "stdio":
        raise ConfigurationError(
            f"--permission-prompt-tool {tool!r}: catui asks only over the control protocol; use "
            "--permission-prompt-tool stdio (claude-agent-sdk's can_use_tool does)"
        )


def json_schema_result(raw: str | None) -> StructuredResult | None:
    """``--json-schema SCHEMA`` (claude-agent-sdk's ``output_format``): the main agent's StructuredOutput tool."""
    if not raw:
        return None
    try:
        schema = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"--json-schema is not valid JSON: {exc.msg} at column {exc.colno}; pass a JSON Schema object such as "
            '\'{"type": "object", "properties": {"answer": {"type": "string"}}}\''
        ) from None
    checked = output_schema_from({"type": "json_schema", "schema": schema}, where="--json-schema")
    return StructuredResult(checked) if checked is not None else None


def system_prompt(options: Mapping[str, Any]) -> str | None:
    """The replacement system prompt of ``--system-prompt`` or ``--system-prompt-file`` (None: catui's own)."""
    text, file = options.get("system_prompt"), options.get("system_prompt_file")
    if text is not None and file is not None:
        raise ConfigurationError("give --system-prompt or --system-prompt-file, not both")
    if file is None:
        return str(text) if text is not None else None
    try:
        return Path(file).expanduser().read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigurationError(f"--system-prompt-file {file}: cannot read it ({exc.strerror or exc})") from None


def setting_sources(value: str | None) -> tuple[str, ...] | None:
    """``--setting-sources user,project`` as a tuple (an empty value: no settings files); None when not given."""
    if value is None:
        return None
    sources = tuple(s.strip() for s in value.split(",") if s.strip())
    for source in sources:
        if source not in SETTING_SOURCES:
            raise ConfigurationError(
                f"--setting-sources: unknown source {source!r}; use a comma-separated list of "
                f"{', '.join(SETTING_SOURCES)}"
            )
    return sources


def thinking(value: str | None) -> dict[str, Any] | None:
    """``--thinking adaptive|disabled`` as a thinking config (budgets come with ``--max-thinking-tokens``)."""
    if value is None:
        return None
    if value not in ("adaptive", "disabled"):
        raise ConfigurationError(f"--thinking {value!r}: use adaptive or disabled (or --max-thinking-tokens N)")
    return parse_thinking_config({"type": value}, "--thinking")


def mcp_config_servers(values: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The servers of each ``--mcp-config`` (a JSON string or a file with ``{"mcpServers": {...}}``), later wins."""
    servers: dict[str, Any] = {}
    for value in values:
        text = value.strip()
        where = "--mcp-config"
        if not text.startswith("{"):
            where = f"--mcp-config {value}"
            try:
                text = Path(value).expanduser().read_text(encoding="utf-8-sig")
            except OSError as exc:
                raise ConfigurationError(f"{where}: cannot read it ({exc.strerror or exc}); pass a file or a "
                                         'JSON string like {"mcpServers": {...}}') from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{where} is not valid JSON: {exc.msg} at column {exc.colno}") from None
        entries = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            raise ConfigurationError(f'{where} must be an object like {{"mcpServers": {{"name": {{...}}}}}}')
        servers.update(entries)
    return servers
