"""The sandbox's domain allow-list with REAL bubblewrap: only listed hosts, only through catui's proxy.

A real HTTP server listens on the host's 127.0.0.1 (outside the sandbox). Sandboxed commands (real bwrap, real
curl and Python clients, the real Bash tool and the real CLI) reach it through the proxy when its name is in
``sandbox.network.allowedDomains`` ("localhost"), are refused when they name it otherwise ("127.0.0.1" is not
listed), and cannot reach it at all without the proxy (their network namespace has no way out).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from catui.errors import ConfigurationError
from catui.permissions.context import PermissionContext
from catui.sandbox.config import SandboxSettings, sandbox_settings_from
from catui.sandbox.domains import host_allowed, host_matches, no_proxy_value
from catui.sandbox.policy import BashSandbox
from catui.sandbox.probe import probe_bwrap
from catui.sandbox.proxy import DomainProxy
from catui.tasks.registry import TaskRegistry
from catui.tools.base import ToolContext, ToolResult, ToolServices
from catui.tools.bash import BashTool
from catui.tools.bash_input import BashInput
from tests.support.cli_env import SRC

AVAILABILITY = probe_bwrap()
needs_bwrap = pytest.mark.skipif(not AVAILABILITY.usable, reason=f"bubblewrap cannot run here: {AVAILABILITY.reason}")
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed (apt-get install curl)")


class Origin:
    """A real HTTP server on the host's 127.0.0.1 that records the paths it was asked for."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        origin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                origin.paths.append(self.path)
                body = f"origin says hello to {self.path}\n".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def origin() -> Iterator[Origin]:
    server = Origin()
    yield server
    server.close()


def test_domain_patterns_match_as_claude_code_matches_them() -> None:
    assert host_matches("LocalHost", "localhost") and host_matches("pypi.org.", "pypi.org")
    assert host_matches("api.example.com", "*.example.com") and host_matches("a.b.example.com", "*.example.com")
    assert not host_matches("example.com", "*.example.com")  # the apex needs its own entry
    assert not host_matches("evilexample.com", "*.example.com") and not host_matches("example.com.evil", "example.com")
    assert host_matches("[::1]", "::1") and not host_allowed("127.0.0.1", ["localhost"])
    # Loopback names the list allows go through the proxy; the others stay direct (the sandbox's own loopback).
    assert no_proxy_value(["localhost"]) == "127.0.0.1,::1"
    assert no_proxy_value(["pypi.org"]) == "localhost,127.0.0.1,::1"


def test_a_bad_domain_pattern_is_one_clear_error(tmp_path: Path) -> None:
    ok = sandbox_settings_from({"network": {"allowedDomains": ["*.example.com", "::1", "localhost"]}}, tmp_path)
    assert ok.filters_network and not ok.network_enabled
    for bad in ["https://example.com", "example.com:443", "a.*.com", "*", ""]:
        if bad == "*":
            assert sandbox_settings_from({"network": {"allowedDomains": [bad]}}, tmp_path).network_enabled
            continue
        with pytest.raises(ConfigurationError, match=r"sandbox\.network\.allowedDomains.*not a host name pattern"):
            sandbox_settings_from({"network": {"allowedDomains": [bad]}}, tmp_path)


def sandboxed_context(project: Path, sandbox: BashSandbox) -> ToolContext:
    return ToolContext(
        cwd=project, project_root=project,
        permissions=PermissionContext(mode="bypassPermissions", working_directories=(project,)),
        services=ToolServices(sandbox=sandbox),
    )


async def run(ctx: ToolContext, command: str) -> ToolResult:
    return await BashTool().call(BashInput(command=command, timeout=60_000), ctx)


@needs_bwrap
@needs_curl
async def test_only_listed_hosts_are_reachable_and_only_through_the_proxy(tmp_path: Path, origin: Origin) -> None:
    project = tmp_path / "project"
    project.mkdir()
    refused: list[str] = []
    proxy = DomainProxy(("localhost",), on_refusal=refused.append)
    sandbox = BashSandbox(SandboxSettings(enabled=True, allowed_domains=("localhost",)), proxy=proxy)
    ctx = sandboxed_context(project, sandbox)
    port = origin.port
    try:
        # Listed: plain HTTP (HTTP_PROXY), a CONNECT tunnel (-p) and SOCKS5 (ALL_PROXY) all arrive.
        plain = await run(ctx, f"curl -sS --fail http://localhost:{port}/plain")
        tunnel = await run(ctx, f"curl -sS --fail -p http://localhost:{port}/tunnel")
        socks = await run(ctx, f'curl -sS --fail --proxy "$ALL_PROXY" http://localhost:{port}/socks')
        # Python's own client reads the proxy variables without being told.
        urllib = await run(ctx, f"python3 -c \"import urllib.request as u; "
                                f"print(u.urlopen('http://localhost:{port}/urllib').read().decode())\"")
        assert not plain.is_error and "origin says hello to /plain" in plain.content, plain.content
        assert not tunnel.is_error and "hello to /tunnel" in tunnel.content, tunnel.content
        assert not socks.is_error and "hello to /socks" in socks.content, socks.content
        assert not urllib.is_error and "hello to /urllib" in urllib.content, urllib.content
        assert plain.data["sandboxed"] is True

        # Not listed: refused by the proxy with a reason the model can act on. The same server by its address
        # (127.0.0.1 is in NO_PROXY, so the proxy is named explicitly), and a name never resolved.
        other = await run(ctx, f'curl -sS --noproxy "" --proxy "$HTTP_PROXY" http://127.0.0.1:{port}/unlisted; echo; '
                               "curl -sS http://unlisted.invalid/; echo; "
                               f'curl -sS -p --noproxy "" --proxy "$HTTPS_PROXY" http://127.0.0.1:{port}/unlisted-tunnel')
        assert other.is_error and "CONNECT tunnel failed, response 403" in other.content, other.content
        assert "add '127.0.0.1' to sandbox.network.allowedDomains" in other.content
        assert "add 'unlisted.invalid' to sandbox.network.allowedDomains" in other.content
        assert "catui's proxy" in other.content and "localhost" in other.content  # the sandbox's note
        socks_other = await run(ctx, f'curl -sS --noproxy "" --proxy "$ALL_PROXY" http://127.0.0.1:{port}/unlisted-socks')
        assert socks_other.is_error and "SOCKS5" in socks_other.content, socks_other.content

        # Without the proxy nothing leaves the sandbox's network namespace, even to a listed name.
        direct = await run(ctx, f"curl -sS --noproxy '*' http://localhost:{port}/direct")
        raw = await run(ctx, f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\"")
        assert direct.is_error and "Failed to connect" in direct.content, direct.content
        assert raw.is_error and "Connection refused" in raw.content, raw.content
    finally:
        sandbox.close()
    assert sorted(origin.paths) == ["/plain", "/socks", "/tunnel", "/urllib"]
    assert refused == ["127.0.0.1", "unlisted.invalid", "127.0.0.1", "127.0.0.1"]
    assert proxy.socket_path is None  # closed: the socket and its folder are gone


@needs_bwrap
async def test_background_commands_go_through_the_proxy_too(tmp_path: Path, origin: Origin) -> None:
    project = tmp_path / "project"
    project.mkdir()
    registry = TaskRegistry(project)
    sandbox = BashSandbox(SandboxSettings(enabled=True, allowed_domains=("localhost",)))
    ctx = sandboxed_context(project, sandbox)
    ctx.services = ToolServices(sandbox=sandbox, tasks=registry)
    command = (f"python3 -c \"import urllib.request as u; "
               f"print(u.urlopen('http://localhost:{origin.port}/background').read().decode())\"")
    try:
        result = await BashTool().call(BashInput(command=command, run_in_background=True), ctx)
        task = registry.get(result.data["background_task_id"])
        assert task is not None and task.runner is not None
        await asyncio.wait_for(task.runner, 60)
        assert "hello to /background" in Path(result.data["output_file"]).read_text()
        assert task.status == "completed"
    finally:
        await registry.shutdown()
        sandbox.close()
    assert origin.paths == ["/background"]


@needs_bwrap
@needs_curl
def test_the_cli_filters_by_domain_from_the_settings(tmp_path: Path, origin: Origin) -> None:
    """The real ``catui -p``: settings with allowedDomains, two Bash calls, one host listed and one not."""
    project = tmp_path / "proj"
    (project / ".catui").mkdir(parents=True)
    (project / ".catui" / "settings.json").write_text(json.dumps(
        {"sandbox": {"enabled": True, "network": {"allowedDomains": ["localhost"]}}}))
    calls = [
        {"type": "tool_use", "id": "listed", "name": "Bash",
         "input": {"command": f"curl -sS --fail http://localhost:{origin.port}/from-cli"}},
        {"type": "tool_use", "id": "unlisted", "name": "Bash",
         "input": {"command": f'curl -sS --fail -p --noproxy "" --proxy "$HTTPS_PROXY" http://127.0.0.1:{origin.port}/nope'}},
    ]
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": [
        {"match": {"last_is_tool_result": False}, "content": calls},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]}))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "CATUI_HOME": str(tmp_path / "catui-home"),
           "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", "go", "--model", f"scripted:{script}", "--output-format", "stream-json",
         "--verbose", "--permission-mode", "bypassPermissions"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    results = {}
    for line in done.stdout.splitlines():
        event = json.loads(line)
        if event.get("type") == "user":
            for block in event["message"]["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = block
    listed, unlisted = results["listed"], results["unlisted"]
    assert not listed.get("is_error") and "hello to /from-cli" in json.dumps(listed["content"])
    assert unlisted.get("is_error") and "allowedDomains" in json.dumps(unlisted["content"])
    assert origin.paths == ["/from-cli"]


def test_what_the_bridge_needs_from_the_hosts_tmp_is_mounted_back() -> None:
    # A checkout or venv under /tmp is hidden by the sandbox's private /tmp; the bridge must still start.
    from catui.sandbox.network import ProxyRoute

    route = ProxyRoute(Path("/tmp/catui-proxy-1/proxy.sock"), ("localhost",), python="/tmp/ci/venv/bin/python3")
    mounts = route.mounts_needed()
    assert mounts[0] == Path("/tmp/catui-proxy-1")
    assert Path("/tmp/ci/venv/bin/python3") in mounts
    elsewhere = ProxyRoute(Path("/var/run/catui/proxy.sock"), ("localhost",), python="/usr/bin/python3")
    assert Path("/usr/bin/python3") not in elsewhere.mounts_needed()
