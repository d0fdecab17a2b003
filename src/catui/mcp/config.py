"""Where MCP servers are configured, and what one server's configuration says.

Claude Code's places are read unchanged, lowest precedence first (a later
definition of the same server name replaces the earlier one whole):

1. user: ``mcpServers`` of ``~/.claude.json`` (what ``claude mcp add -s user``
   writes) and of the user settings files;
2. project: ``.mcp.json`` files from the project root down to the working
   directory (the closer one wins), and ``mcpServers`` of the project settings;
3. local: ``projects[<project>].mcpServers`` of ``~/.claude.json`` and
   ``mcpServers`` of the local settings (and of ``--settings``).

A server comes from a ``.mcp.json`` that arrives with the repository, so it
runs only once approved: ``enableAllProjectMcpServers: true`` or its name in
``enabledMcpjsonServers``, in the user or local settings (or in the project's
entry of ``~/.claude.json``, where Claude Code's approval dialog records it),
and never when named in ``disabledMcpjsonServers``. Approvals in the committed
project ``settings.json`` do not count: they would let a repository approve
its own servers.

Bad entries never stop a session: each becomes a warning naming the file and
the server, and the server is left out.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from catui.config.json_input import JsonInputError, loads_bounded, read_text_file
from catui.config.settings import json_type_name

if TYPE_CHECKING:
    from catui.config.settings import Settings

Transport = Literal["stdio", "http", "sse", "sdk"]
SdkTransport = Callable[[str], AbstractAsyncContextManager[tuple[Any, Any]]]
"""Opens the (read, write) stream pair of an ``sdk`` server by name, for ``mcp.ClientSession``."""
Scope = Literal["user", "project", "local", "dynamic", "agent"]

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_APPROVAL_KEYS = ("enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers")


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server as configured: how to reach it and where it was written.

    ``transport`` is ``stdio`` (``command`` + ``args`` + ``env``), ``http``
    (streamable HTTP) or ``sse`` (``url`` + ``headers``). ``origin`` names the
    file it came from, for messages.
    """

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    scope: Scope = "project"
    origin: str = ""


@dataclass
class McpConfigResult:
    """The servers to connect (by name, in precedence order) and the problems met reading them."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    unapproved: list[str] = field(default_factory=list)


class McpConfigError(ValueError):
    """One server entry is unusable; the message names the problem and how to fix it."""


def normalize_name(name: str) -> str:
    """A server or tool name as it appears in ``mcp__<server>__<tool>``: other characters than A-Z a-z 0-9 _ - become _."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def expand_env(value: str, env: Mapping[str, str], missing: list[str]) -> str:
    """Replace ``${VAR}`` and ``${VAR:-default}`` as Claude Code does; unknown variables are collected in ``missing``."""

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        missing.append(name)
        return match.group(0)

    return _ENV_REFERENCE.sub(substitute, value)


def parse_server_config(
    name: str, raw: Any, *, origin: str, scope: Scope = "project", env: Mapping[str, str] | None = None
) -> tuple[McpServerConfig, list[str]]:
    """Validate one ``mcpServers`` entry. Returns the config and warnings; raises McpConfigError when unusable."""
    where = f"{origin}: MCP server '{name}'"
    if not isinstance(name, str) or not name.strip():
        raise McpConfigError(f"{origin}: an MCP server has an empty name; give each entry of mcpServers a name")
    if not isinstance(raw, Mapping):
        raise McpConfigError(
            f"{where} must be an object such as {{\"command\": \"npx\", \"args\": [...]}} or "
            f"{{\"type\": \"http\", \"url\": \"...\"}}, found {json_type_name(raw)}"
        )
    variables = os.environ if env is None else env
    missing: list[str] = []
    kind = raw.get("type", "stdio" if "command" in raw or "url" not in raw else "http")
    if kind == "sdk":
        # An in-process server of the program driving catui (claude-agent-sdk): reached over its control
        # protocol, so only a run that speaks it (--input-format stream-json) can connect one.
        return McpServerConfig(name=name, transport="sdk", scope=scope, origin=origin), []
    if kind not in ("stdio", "http", "sse"):
        if kind in ("ws", "ws-ide", "sse-ide", "claudeai-proxy"):
            raise McpConfigError(f"{where}: transport type '{kind}' is not supported by catui; use stdio, http or sse")
        raise McpConfigError(f"{where}: unknown type {kind!r}; use \"stdio\", \"http\" or \"sse\"")
    if kind == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise McpConfigError(f"{where} needs a \"command\" (the program that starts the server)")
        args = raw.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise McpConfigError(f"{where}: \"args\" must be a list of strings")
        config = McpServerConfig(
            name=name,
            transport="stdio",
            command=expand_env(command, variables, missing),
            args=tuple(expand_env(a, variables, missing) for a in args),
            env=_string_map(raw.get("env", {}), f"{where}: \"env\"", variables, missing),
            scope=scope,
            origin=origin,
        )
    else:
        url = raw.get("url")
        if not isinstance(url, str) or not url.strip():
            raise McpConfigError(f"{where} of type {kind} needs a \"url\"")
        url = expand_env(url, variables, missing)
        if not url.startswith(("http://", "https://")):
            raise McpConfigError(f"{where}: url {url!r} must start with http:// or https://")
        config = McpServerConfig(
            name=name,
            transport=kind,
            url=url,
            headers=_string_map(raw.get("headers", {}), f"{where}: \"headers\"", variables, missing),
            scope=scope,
            origin=origin,
        )
    warnings = []
    if missing:
        names = ", ".join(sorted(set(missing)))
        warnings.append(f"{where}: environment variable(s) {names} are not set; the text ${{...}} is kept as written")
    return config, warnings


def _string_map(value: Any, where: str, env: Mapping[str, str], missing: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise McpConfigError(f"{where} must be an object of names to strings")
    out: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise McpConfigError(f"{where}: the value of {key!r} must be a string")
        out[str(key)] = expand_env(str(item), env, missing)
    return out


def claude_global_config_path(home: Path | None = None) -> Path:
    """``~/.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json`` when that is set), where Claude Code keeps its servers."""
    if home is not None:
        return home / ".claude.json"
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        return Path(config_dir).expanduser() / ".claude.json"
    return Path.home() / ".claude.json"


def collect_server_configs(
    settings: Settings,
    cwd: Path,
    *,
    project_root: Path | None = None,
    sources: Sequence[str] = ("user", "project", "local"),
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> McpConfigResult:
    """Every MCP server configured for ``cwd``, with warnings for the entries left out.

    ``settings`` is a :class:`catui.config.settings.Settings`; its files are
    read one by one so that messages can name the file. ``sources`` are the
    setting sources in use (``--setting-sources``): the project's ``.mcp.json``
    is read only with ``project``, ``~/.claude.json`` only with ``user`` /
    ``local``.
    """
    cwd = Path(cwd).resolve()
    root = (project_root or getattr(settings, "project_root", None) or cwd).resolve()
    result = McpConfigResult()
    variables = dict(os.environ) if env is None else dict(env)
    global_config = _read_global_config(claude_global_config_path(home), result.warnings) if (
        "user" in sources or "local" in sources
    ) else {}
    project_entry = _project_entry(global_config, root)
    files = list(getattr(settings, "files", []) or [])

    def add(entries: Any, origin: str, scope: Scope) -> None:
        if entries is None:
            return
        if not isinstance(entries, Mapping):
            result.warnings.append(f"{origin}: \"mcpServers\" must be an object of server names to configs; ignored")
            return
        for name, raw in entries.items():
            try:
                config, warnings = parse_server_config(str(name), raw, origin=origin, scope=scope, env=variables)
            except McpConfigError as exc:
                result.warnings.append(f"{exc}; this server is left out")
                result.servers.pop(str(name), None)
                continue
            result.warnings.extend(warnings)
            result.servers.pop(config.name, None)  # re-insert: the winner takes the later position
            result.servers[config.name] = config

    if "user" in sources:
        add(global_config.get("mcpServers"), str(claude_global_config_path(home)), "user")
    for loaded in files:
        if getattr(loaded, "source", "") == "userSettings":
            add(loaded.data.get("mcpServers"), loaded.label, "user")
    if "project" in sources:
        approvals = _approvals(files, project_entry, result.warnings)
        for path in _mcp_json_files(cwd, root):
            data = _read_mcp_json(path, result.warnings)
            if data is None:
                continue
            servers = data.get("mcpServers")
            if servers is None:
                result.warnings.append(f"{path}: has no \"mcpServers\" object; nothing to connect")
                continue
            if not isinstance(servers, Mapping):
                result.warnings.append(f"{path}: \"mcpServers\" must be an object of server names to configs; ignored")
                continue
            approved = {n: v for n, v in servers.items() if _is_approved(str(n), approvals)}
            for name in servers:
                if name not in approved and str(name) not in approvals["disabled"]:
                    result.unapproved.append(str(name))
            add(approved, str(path), "project")
        for loaded in files:
            if getattr(loaded, "source", "") == "projectSettings":
                add(loaded.data.get("mcpServers"), loaded.label, "project")
    if "local" in sources:
        add(project_entry.get("mcpServers"), f"{claude_global_config_path(home)} (projects[{root}])", "local")
    for loaded in files:
        if getattr(loaded, "source", "") in ("localSettings", "flagSettings"):
            add(loaded.data.get("mcpServers"), loaded.label, "local")
    if result.unapproved:
        names = ", ".join(dict.fromkeys(result.unapproved))
        result.warnings.append(
            f"MCP server(s) {names} from .mcp.json are not approved, so they are not started. To approve, add "
            f"\"enabledMcpjsonServers\": [...names] (or \"enableAllProjectMcpServers\": true) to "
            f"{root / '.claude' / 'settings.local.json'}"
        )
    return result


def _mcp_json_files(cwd: Path, root: Path) -> list[Path]:
    """``.mcp.json`` files from the project root down to ``cwd``: the closest is read last and wins."""
    folders = [cwd]
    if cwd != root and root in cwd.parents:
        for parent in cwd.parents:
            folders.append(parent)
            if parent == root:
                break
    return [f / ".mcp.json" for f in reversed(folders) if (f / ".mcp.json").is_file()]


def _read_mcp_json(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    try:
        text = read_text_file(path)
        if text is None or not text.strip():
            return None
        data = loads_bounded(text)
    except JsonInputError as exc:
        warnings.append(f"{path}: {exc}; its MCP servers are left out")
        return None
    except json.JSONDecodeError as exc:
        warnings.append(
            f"{path}, line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg}); its MCP servers are left out"
        )
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path}: must hold a JSON object {{\"mcpServers\": {{...}}}}, found {json_type_name(data)}")
        return None
    return data


def _read_global_config(path: Path, warnings: list[str]) -> dict[str, Any]:
    """``~/.claude.json``; problems with it are warnings (Claude Code rewrites it often, so it may be mid-write)."""
    try:
        text = read_text_file(path)
        if text is None:
            return {}
        data = loads_bounded(text) if text.strip() else {}
    except JsonInputError as exc:
        warnings.append(f"{path}: {exc}; the MCP servers it configures are left out")
        return {}
    except json.JSONDecodeError as exc:
        warnings.append(f"{path}, line {exc.lineno}: invalid JSON ({exc.msg}); the MCP servers it configures are left out")
        return {}
    return data if isinstance(data, dict) else {}


def _project_entry(global_config: Mapping[str, Any], root: Path) -> Mapping[str, Any]:
    projects = global_config.get("projects")
    if not isinstance(projects, Mapping):
        return {}
    entry = projects.get(str(root))
    return entry if isinstance(entry, Mapping) else {}


def _approvals(files: Sequence[Any], project_entry: Mapping[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Which ``.mcp.json`` servers the user approved, from the places a repository cannot write for them."""
    enable_all = False
    enabled: set[str] = set()
    disabled: set[str] = set()
    sources: list[tuple[str, Mapping[str, Any]]] = [("~/.claude.json", project_entry)]
    for loaded in files:
        data = loaded.data
        if getattr(loaded, "source", "") == "projectSettings":
            present = [k for k in _APPROVAL_KEYS if k in data and k != "disabledMcpjsonServers"]
            if present:
                warnings.append(
                    f"{loaded.label}: {', '.join(present)} in the shared project settings do not approve .mcp.json "
                    "servers (the repository would approve itself); put them in .claude/settings.local.json"
                )
            if isinstance(data.get("disabledMcpjsonServers"), list):
                disabled.update(str(n) for n in data["disabledMcpjsonServers"])
            continue
        sources.append((loaded.label, data))
    for _label, data in sources:
        if data.get("enableAllProjectMcpServers") is True:
            enable_all = True
        if isinstance(data.get("enabledMcpjsonServers"), list):
            enabled.update(str(n) for n in data["enabledMcpjsonServers"])
        if isinstance(data.get("disabledMcpjsonServers"), list):
            disabled.update(str(n) for n in data["disabledMcpjsonServers"])
    return {"all": enable_all, "enabled": enabled, "disabled": disabled}


def _is_approved(name: str, approvals: Mapping[str, Any]) -> bool:
    if name in approvals["disabled"]:
        return False
    return bool(approvals["all"]) or name in approvals["enabled"]
