"""``catui sandbox check``: whether bubblewrap works here and what a sandboxed Bash command may do.

It reads the same settings a run in the folder would (``sandbox`` in user, project and local settings),
probes bwrap, and prints the main agent's writable folders, the network and the excluded commands. It then
proves the answers with real sandboxed commands: a write to the project (allowed), a write outside it and a
connection to 127.0.0.1 (refused). ``cli/main.py`` imports this module only when ``catui sandbox`` runs.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

import click

from catui.config.settings import load_settings
from catui.errors import CatuiError
from catui.paths import find_project_root
from catui.sandbox.config import SandboxSettings, sandbox_settings_from
from catui.sandbox.policy import AgentFolders, BashSandbox

CHECK_TIMEOUT_S = 20.0


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def command() -> None:
    """The Bash sandbox (bubblewrap)."""


@command.command("check")
@click.option("--cwd", "cwd_arg", default=None, help="Folder to check for (default: the current directory).")
def check(cwd_arg: str | None) -> None:
    """Print whether the sandbox can run here and what it allows."""
    cwd = Path(cwd_arg or ".").resolve()
    if not cwd.is_dir():
        raise click.ClickException(f"--cwd {cwd} is not a folder; pass an existing folder")
    try:
        settings = sandbox_settings_from(load_settings(cwd).get("sandbox"), cwd)
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from None
    sandbox = BashSandbox(settings)
    for line in describe(sandbox, cwd):
        click.echo(line)
    if not sandbox.availability.usable:
        raise SystemExit(1)


def describe(sandbox: BashSandbox, cwd: Path) -> list[str]:
    """The lines ``catui sandbox check`` prints."""
    settings = sandbox.settings
    availability = sandbox.availability
    lines = [f"sandbox.enabled: {'true' if settings.enabled else 'false (Bash runs unsandboxed)'}"]
    if not availability.usable:
        fallback = "Bash is refused" if settings.fail_if_unavailable else "Bash runs unsandboxed, with a notice"
        lines += [f"bubblewrap: NOT usable: {availability.reason}", f"when enabled: {fallback}"]
        return lines
    lines.append(f"bubblewrap: usable ({availability.binary})")
    project = find_project_root(cwd)
    layout = sandbox.layout_for(AgentFolders(cwd, project, (project,)))
    lines.append(f"writable for the main agent: {layout.describe_writable()}")
    lines.append(
        "writable for an isolated agent: its worktree, its git metadata (objects, logs, its own branch and new "
        "branches), a private /tmp"
    )
    lines.append(
        "everything else: read-only (also .catui/, .claude/, .mcp.json, .git/config and .git/hooks inside "
        "writable folders, and an isolated agent's other branches)"
    )
    lines.append(_network_line(settings))
    lines.append(_unix_socket_line(sandbox))
    excluded = ", ".join(settings.excluded_commands) or "none"
    lines.append(f"excludedCommands (run unsandboxed): {excluded}")
    auto = "yes" if settings.auto_allow_bash_if_sandboxed else "no"
    lines.append(f"autoAllowBashIfSandboxed (sandboxed Bash needs no approval): {auto}")
    lines += _live_checks(sandbox, AgentFolders(cwd, project, (project,)), project)
    return lines


def _network_line(settings: SandboxSettings) -> str:
    if settings.network_enabled:
        return "network: shared with the host (allowedDomains contains \"*\")"
    if settings.filters_network:
        return ("network: only through catui's proxy, to hosts matching allowedDomains: "
                f"{', '.join(settings.allowed_domains)} (HTTP, HTTPS via CONNECT, SOCKS5)")
    return "network: off (no connections, not even to 127.0.0.1)"


def _unix_socket_line(sandbox: BashSandbox) -> str:
    if sandbox.settings.allow_all_unix_sockets:
        return "unix sockets: allowed (network.allowAllUnixSockets), also to the host's servers (Docker, D-Bus, agents)"
    if sandbox.unix_socket_filter() is None:
        return f"unix sockets: NOT blocked on this machine ({platform.machine()}: no seccomp filter for it)"
    return "unix sockets: none can be opened (seccomp), so no host server is reachable through one"


def _live_checks(sandbox: BashSandbox, folders: AgentFolders, project: Path) -> list[str]:
    """Run four real commands in the sandbox and report what happened."""
    probes = {
        f"write in {project}": f"f=$(mktemp -p {project} .catui-sandbox-check.XXXXXX) && rm -f \"$f\"",
        "write in /usr": "touch /usr/.catui-sandbox-check",
        "connect to 127.0.0.1:1": "exec 3<>/dev/tcp/127.0.0.1/1",
        "open a unix socket": f"{shlex.quote(os.path.realpath(sys.executable))} -I -S -c "
                              "'import socket; socket.socket(socket.AF_UNIX)'",
    }
    lines = ["live checks:"]
    for label, script in probes.items():
        launch = sandbox.plan(script, folders)  # as the Bash tool starts it (placeholders included)
        try:
            with launch.command_line(["bash", "-c", script], project) as (argv, fds):
                done = subprocess.run(argv, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S, pass_fds=fds)
            outcome = "allowed" if done.returncode == 0 else "refused"
        except (OSError, subprocess.SubprocessError) as exc:
            outcome = f"could not run ({exc})"
        finally:
            launch.finish()
        lines.append(f"  {label}: {outcome}")
    return lines
