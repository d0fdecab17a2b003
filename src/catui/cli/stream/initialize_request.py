"""The fields of the driver's ``initialize`` control request that shape the run, read into catui's run options.

Both official SDKs send ``initialize`` first. Besides hooks and agents
(:mod:`.control_bridges`) it may carry:

- ``sdkMcpServers``: the names of in-process MCP servers living in the
  driver (the TypeScript SDK's ``createSdkMcpServer``); catui reaches them
  through ``mcp_message`` requests, as the Python SDK's ``type: sdk`` entries.
- ``mcpServers``: external servers' configs (the current TypeScript SDK sends
  them here, with ``--await-initialize``, instead of ``--mcp-config``).
- ``systemPrompt`` (a string, or a list of strings in the current TypeScript
  SDK) replaces catui's system prompt; ``appendSystemPrompt`` (the preset's
  ``append``) is added to it.
- ``forwardSubagentText``: show sub-agents' text and thinking too.
- ``settings``, ``disallowedTools``, ``additionalDirectories``, ``plugins``
  (the current SDK's "delivery over initialize" options).

:func:`applied_fields` says which of them catui applied, in the answer's
``*_applied`` keys the current TypeScript SDK checks. A field catui has no
counterpart for is named in a warning on stderr; the run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from catui.app.options import RunOptions
from catui.errors import ConfigurationError

# initialize fields catui does not act on -> what catui does instead (said once on stderr when a field is set)
IGNORED_FIELDS: dict[str, str] = {
    "excludeDynamicSections": "catui's system prompt is built as usual",
    "systemPromptSnapshot": "catui builds the system prompt afresh",
    "skills": "every skill of the session is available",
    "planModeInstructions": "catui's own plan-mode instructions are used",
    "appendSubagentSystemPrompt": "sub-agents get their definitions' prompts",
    "toolAliases": "tools keep their names",
    "codeRunningMcpTools": "MCP tools are permission-checked as any tool",
    "title": "the session is titled from its first prompt",
    "promptSuggestions": "catui does not suggest prompts",
    "agentProgressSummaries": "progress is reported as task_progress events without summaries",
    "managedSettings": "catui reads no managed settings; pass them as settings",
    "webSearchIsolationExemptMcpServers": "no MCP server is exempt",
    "workspaceTrust": "catui trusts the working folder it is started in",
}
# fields that are protocol details of the SDKs (nothing to apply or to warn about)
QUIET_FIELDS = frozenset({
    "subtype", "hooks", "agents", "jsonSchema", "sdkMcpServerConfigs", "sdkMcpServerManifests",
    "supportedDialogKinds", "perTaskStopAffordance", "rapidFollowupPreempt", "forwardNestedSubagentToolCalls",
    "offersBypassSwitchBack", "keepsBypassHeld",
})


@dataclass
class InitializeOptions:
    """What ``initialize`` changed: the run options, and the writer's ``forward_subagent_text``."""

    options: RunOptions
    forward_subagent_text: bool
    applied: dict[str, bool]


def apply_initialize(options: RunOptions, init: Mapping[str, Any], warn: Callable[[str], None]) -> InitializeOptions:
    """``options`` with the fields of ``init`` laid over them; raises ConfigurationError for a malformed field."""
    applied: dict[str, bool] = {}
    servers = dict(options.mcp_servers or {})
    names = init.get("sdkMcpServers")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigurationError("initialize: 'sdkMcpServers' must be a list of server names")
        for name in names:
            servers[name] = {"type": "sdk", "name": name}
    external = init.get("mcpServers")
    if external is not None:
        if not isinstance(external, Mapping):
            raise ConfigurationError("initialize: 'mcpServers' must be an object of server names to configs")
        servers.update(external)
        applied["mcp_servers_applied"] = True
    options = replace(options, mcp_servers=servers or options.mcp_servers)

    prompt = init.get("systemPrompt")
    if prompt is not None:
        if isinstance(prompt, list) and all(isinstance(p, str) for p in prompt):
            prompt = "\n\n".join(p for p in prompt if p)
        if not isinstance(prompt, str):
            raise ConfigurationError("initialize: 'systemPrompt' must be a string or a list of strings")
        options = replace(options, system_prompt=prompt)
    append = init.get("appendSystemPrompt")
    if append is not None:
        if not isinstance(append, str):
            raise ConfigurationError("initialize: 'appendSystemPrompt' must be a string")
        options = replace(options, append_system_prompt="\n\n".join(
            a for a in (options.append_system_prompt, append) if a) or None)

    options, more = _delivered_fields(options, init)
    applied.update(more)
    for name, instead in IGNORED_FIELDS.items():
        if init.get(name) not in (None, False, [], {}):
            warn(f"warning: initialize: catui does not support {name!r}; {instead}")
    known = {*IGNORED_FIELDS, *QUIET_FIELDS, "sdkMcpServers", "mcpServers", "systemPrompt", "appendSystemPrompt",
             "forwardSubagentText", "settings", "disallowedTools", "additionalDirectories", "plugins"}
    for name in sorted(set(init) - known):
        if init.get(name) not in (None, False, [], {}):
            warn(f"warning: initialize: catui does not know the field {name!r}; it is ignored")
    return InitializeOptions(options=options, forward_subagent_text=init.get("forwardSubagentText") is True,
                             applied=applied)


def _delivered_fields(options: RunOptions, init: Mapping[str, Any]) -> tuple[RunOptions, dict[str, bool]]:
    """``settings``, ``disallowedTools``, ``additionalDirectories`` and ``plugins`` sent over initialize."""
    applied: dict[str, bool] = {}
    settings = init.get("settings")
    if settings is not None:
        if isinstance(settings, Mapping):
            settings = json.dumps(settings)
        if not isinstance(settings, str):
            raise ConfigurationError("initialize: 'settings' must be an object, a JSON string or a file path")
        if options.settings_arg:
            raise ConfigurationError("initialize: 'settings' came both as --settings and in initialize; send one")
        options = replace(options, settings_arg=settings)
        applied["settings_applied"] = True
    denied = init.get("disallowedTools")
    if denied is not None:
        if not isinstance(denied, list) or not all(isinstance(d, str) for d in denied):
            raise ConfigurationError("initialize: 'disallowedTools' must be a list of rules")
        options = replace(options, disallowed_tools=[*options.disallowed_tools, *denied])
        applied["disallowed_tools_applied"] = True
    dirs = init.get("additionalDirectories")
    if dirs is not None:
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            raise ConfigurationError("initialize: 'additionalDirectories' must be a list of folder paths")
        options = replace(options, add_dirs=[*options.add_dirs, *dirs])
        applied["additional_directories_applied"] = True
    plugins = init.get("plugins")
    if plugins:
        paths: list[str] = []
        for index, plugin in enumerate(plugins if isinstance(plugins, list) else [plugins]):
            if not isinstance(plugin, Mapping) or plugin.get("type") != "local" or not isinstance(plugin.get("path"), str):
                raise ConfigurationError(f"initialize: plugins[{index}] must be {{\"type\": \"local\", \"path\": …}} "
                                         "(catui loads local plugin folders only)")
            paths.append(plugin["path"])
        options = replace(options, plugin_dirs=[*options.plugin_dirs, *paths])
        applied["plugins_applied"] = True
    return options, applied
