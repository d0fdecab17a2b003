"""Where MCP servers are configured: .mcp.json with its approvals, settings files, ~/.claude.json, bad entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from catui.config.settings import load_settings
from catui.mcp.config import McpConfigError, collect_server_configs, normalize_name, parse_server_config
from catui.mcp.tools import mcp_tool_name
from tests.support.user_home import home_fixture  # noqa: F401 - provides the home fixture


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    return folder


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def collect(project: Path, home: Path, cwd: Path | None = None, **kwargs: Any) -> Any:
    settings = load_settings(cwd or project, home=home)
    return collect_server_configs(settings, cwd or project, env={"TOKEN": "s3cret", "HOME": str(home)}, home=home,
                                  **kwargs)


def test_mcp_json_servers_need_approval_from_local_settings(project: Path, home: Path) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-files"]},
        "web": {"type": "http", "url": "https://example.test/mcp"},
        "off": {"command": "off-server"},
    }})
    found = collect(project, home)
    assert found.servers == {}
    assert any("files, web, off" in w and "enabledMcpjsonServers" in w for w in found.warnings)

    write_json(project / ".claude" / "settings.local.json",
               {"enabledMcpjsonServers": ["files", "web"], "disabledMcpjsonServers": ["off"]})
    found = collect(project, home)
    assert list(found.servers) == ["files", "web"]
    files = found.servers["files"]
    assert (files.transport, files.command, files.args, files.scope) == ("stdio", "npx", ("-y", "server-files"),
                                                                         "project")
    assert found.servers["web"].transport == "http"
    assert found.unapproved == []

    write_json(project / ".claude" / "settings.local.json",
               {"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["off"]})
    assert list(collect(project, home).servers) == ["files", "web"]


def test_approvals_in_the_shared_project_settings_do_not_count(project: Path, home: Path) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {"files": {"command": "npx"}}})
    write_json(project / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    found = collect(project, home)
    assert found.servers == {}
    assert any("settings.json" in w and "do not approve" in w for w in found.warnings)


def test_approval_recorded_in_claude_json_project_entry(project: Path, home: Path) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {"files": {"command": "npx"}}})
    write_json(home / ".claude.json", {"projects": {str(project.resolve()): {"enabledMcpjsonServers": ["files"]}}})
    assert list(collect(project, home).servers) == ["files"]


def test_scopes_and_precedence(project: Path, home: Path) -> None:
    write_json(home / ".claude.json", {
        "mcpServers": {"shared": {"command": "user-version"}, "mine": {"command": "user-only"}},
        "projects": {str(project.resolve()): {"mcpServers": {"local-one": {"command": "local-cmd"}}}},
    })
    write_json(home / ".claude" / "settings.json", {"mcpServers": {"from-user-settings": {"command": "u"}}})
    write_json(project / ".mcp.json", {"mcpServers": {"shared": {"command": "project-version"}}})
    write_json(project / ".claude" / "settings.local.json", {"enableAllProjectMcpServers": True})
    found = collect(project, home)
    assert found.servers["shared"].command == "project-version"
    assert found.servers["shared"].scope == "project"
    assert found.servers["mine"].scope == "user"
    assert found.servers["from-user-settings"].command == "u"
    assert found.servers["local-one"].scope == "local"
    # Without the user source, neither ~/.claude.json's user servers nor user settings apply.
    settings = load_settings(project, home=home, sources=("project", "local"))
    only = collect_server_configs(settings, project, env={}, home=home, sources=("project", "local"))
    assert "mine" not in only.servers and "local-one" in only.servers


def test_closer_mcp_json_wins(project: Path, home: Path) -> None:
    sub = project / "packages" / "app"
    sub.mkdir(parents=True)
    write_json(project / ".mcp.json", {"mcpServers": {"db": {"command": "root-db"}, "root-only": {"command": "r"}}})
    write_json(sub / ".mcp.json", {"mcpServers": {"db": {"command": "app-db"}}})
    write_json(project / ".claude" / "settings.local.json", {"enableAllProjectMcpServers": True})
    found = collect(project, home, cwd=sub)
    assert found.servers["db"].command == "app-db"
    assert "root-only" in found.servers


def test_environment_variables_expand(project: Path, home: Path) -> None:
    config, warnings = parse_server_config(
        "api",
        {"type": "http", "url": "https://${HOST:-api.test}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        origin="x.json",
        env={"TOKEN": "s3cret"},
    )
    assert config.url == "https://api.test/mcp"
    assert config.headers == {"Authorization": "Bearer s3cret"}
    assert warnings == []
    config, warnings = parse_server_config("tool", {"command": "run", "env": {"KEY": "${MISSING_VAR}"}},
                                           origin="x.json", env={})
    assert config.env == {"KEY": "${MISSING_VAR}"}
    assert warnings and "MISSING_VAR" in warnings[0] and "x.json" in warnings[0] and "'tool'" in warnings[0]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("npx", "must be an object"),
        ({"args": ["x"]}, "needs a \"command\""),
        ({"command": "x", "args": "--flag"}, "\"args\" must be a list of strings"),
        ({"command": "x", "env": {"A": ["list"]}}, "value of 'A' must be a string"),
        ({"type": "http"}, "needs a \"url\""),
        ({"type": "sse", "url": "ftp://host"}, "must start with http:// or https://"),
        ({"type": "ws", "url": "ws://host"}, "'ws' is not supported"),
        ({"type": "carrier-pigeon"}, "unknown type"),
    ],
)
def test_bad_entries_are_named(raw: Any, expected: str) -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_server_config("srv", raw, origin="/p/.mcp.json", env={})
    message = str(caught.value)
    assert expected in message
    assert "/p/.mcp.json" in message and "'srv'" in message


def test_bad_entries_and_files_become_warnings(project: Path, home: Path) -> None:
    write_json(project / ".claude" / "settings.local.json", {
        "enableAllProjectMcpServers": True,
        "mcpServers": {"good": {"command": "ok"}, "bad": {"args": []}},
    })
    (project / ".mcp.json").write_text('{"mcpServers": {"x": ', encoding="utf-8")
    found = collect(project, home)
    assert list(found.servers) == ["good"]
    text = "\n".join(found.warnings)
    assert "settings.local.json: MCP server 'bad' needs a \"command\"" in text
    assert ".mcp.json, line 1" in text and "invalid JSON" in text

    write_json(project / ".mcp.json", {"mcpServers": ["not", "an", "object"]})
    found = collect(project, home)
    assert any(".mcp.json" in w and "must be an object" in w for w in found.warnings)


def test_names_are_normalised_as_claude_code_does() -> None:
    assert normalize_name("my server.v2") == "my_server_v2"
    assert normalize_name("ok-name_1") == "ok-name_1"
    assert mcp_tool_name("git hub", "create.issue") == "mcp__git_hub__create_issue"
