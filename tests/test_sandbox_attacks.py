"""Escapes a reviewer found from a sandboxed Bash command, each driven through the real CLI (``catui -p`` with a
scripted model sending the command), REAL bubblewrap and REAL git; afterwards the host is checked from outside.

- a unix socket of a host server (Docker, the systemd user bus, ssh-agent …) reached through the read-only root;
- a linked worktree's ``commondir`` / ``gitdir`` in the main checkout's ``.git/worktrees/`` rewritten, so that
  git run later in that worktree (catui does, outside the sandbox) reads a planted config;
- a missing ``.git/config.worktree`` created while ``extensions.worktreeConfig`` is on;
- a repository nested in the writable folder (not a submodule) whose ``.git/config`` was writable.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.sandbox.probe import probe_bwrap
from catui.sandbox.seccomp import supported
from tests.support.cli_env import SRC
from tests.support.git_repos import GIT_ENV, git, make_repo

AVAILABILITY = probe_bwrap()
pytestmark = pytest.mark.skipif(not AVAILABILITY.usable, reason=f"bubblewrap cannot run here: {AVAILABILITY.reason}")


def run_bash_via_cli(tmp_path: Path, project: Path, command: str, sandbox: dict[str, Any]) -> str:
    """``catui -p`` in ``project`` whose scripted model sends one Bash ``command``; that call's tool_result text."""
    return run_bash_calls_via_cli(tmp_path, project, [command], sandbox)[0]


def run_bash_calls_via_cli(
    tmp_path: Path, project: Path, commands: list[str], sandbox: dict[str, Any], *, path: str | None = None,
    memory_limit: int | None = None,
) -> list[str]:
    """``catui -p`` in ``project`` whose scripted model sends the Bash ``commands`` (one after the other, each
    its own sandboxed call); their tool_result texts in order."""
    (project / ".catui").mkdir(exist_ok=True)
    (project / ".catui" / "settings.json").write_text(json.dumps({"sandbox": sandbox}))
    script = tmp_path / "script.yaml"
    calls = [{"type": "tool_use", "id": f"b{n}", "name": "Bash", "input": {"command": command}}
             for n, command in enumerate(commands)]
    script.write_text(yaml.safe_dump({"turns": [
        {"match": {"last_is_tool_result": False}, "content": calls},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]}))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(home), CATUI_HOME=str(home / ".catui"), PYTHONPATH=str(SRC),
               GIT_CONFIG_GLOBAL=str(home / "gitconfig"), **GIT_ENV)
    if path is not None:
        env["PATH"] = path
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", "go", "--model", f"scripted:{script}", "--output-format",
         "stream-json", "--verbose", "--permission-mode", "bypassPermissions"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
        preexec_fn=None if memory_limit is None else lambda: resource.setrlimit(
            resource.RLIMIT_AS, (memory_limit, memory_limit)),
    )
    assert done.returncode == 0, done.stderr
    results: dict[str, str] = {}
    for line in done.stdout.splitlines():
        event = json.loads(line)
        if event.get("type") != "user":
            continue
        for block in event["message"]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)
                results[block["tool_use_id"]] = text
    assert len(results) == len(commands), done.stdout
    return [results[f"b{n}"] for n in range(len(commands))]


# --- unix sockets ---------------------------------------------------------------------------------------------

CONNECT = (
    "{python} -c 'import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "s.connect(sys.argv[1]); s.sendall(b\"systemd-run --user sh -c evil\"); print(\"CONNECTED\")' {path}"
)


@pytest.fixture()
def host_server(tmp_path: Path) -> Iterator[socket.socket]:
    """A server on a unix socket outside every writable folder (in HOME, which the sandbox shows read-only),
    as the Docker daemon, a D-Bus or an ssh-agent would be."""
    (tmp_path / "home").mkdir()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(tmp_path / "home" / "daemon.sock"))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def connections(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            client, _ = server.accept()
        except BlockingIOError:
            return count
        client.close()
        count += 1


@pytest.mark.skipif(not supported(), reason="no seccomp filter for this machine's system calls")
@pytest.mark.parametrize("network", [[], ["localhost"], ["*"]], ids=["network off", "allow-list", "host network"])
def test_a_sandboxed_command_cannot_reach_a_host_server_by_its_unix_socket(
    tmp_path: Path, host_server: socket.socket, network: list[str]
) -> None:
    project = make_repo(tmp_path / "proj")
    command = CONNECT.format(python=os.path.realpath(sys.executable), path=tmp_path / "home" / "daemon.sock")
    result = run_bash_via_cli(tmp_path, project, command, {"enabled": True, "network": {"allowedDomains": network}})
    assert "CONNECTED" not in result
    assert "Operation not permitted" in result and "no unix socket can be opened" in result
    assert connections(host_server) == 0


@pytest.mark.skipif(not supported(), reason="no seccomp filter for this machine's system calls")
def test_io_uring_which_could_open_sockets_past_the_filter_is_refused(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "proj")
    # io_uring_setup(1, NULL): EFAULT (14) where io_uring exists, ENOSYS (38) where it is off; EPERM (1) if barred.
    probe = ("import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
             "print('io_uring_setup errno', libc.syscall(425, 1, None), ctypes.get_errno())")
    command = f"{os.path.realpath(sys.executable)} -c \"{probe}\""
    result = run_bash_via_cli(tmp_path, project, command, {"enabled": True})
    assert "io_uring_setup errno -1 1" in result


def test_allow_all_unix_sockets_opens_them(tmp_path: Path, host_server: socket.socket) -> None:
    project = make_repo(tmp_path / "proj")
    command = CONNECT.format(python=os.path.realpath(sys.executable), path=tmp_path / "home" / "daemon.sock")
    sandbox = {"enabled": True, "network": {"allowAllUnixSockets": True}}
    result = run_bash_via_cli(tmp_path, project, command, sandbox)
    assert "CONNECTED" in result
    assert connections(host_server) == 1


@pytest.mark.skipif(not supported(), reason="no seccomp filter for this machine's system calls")
def test_socket_pairs_and_the_allow_list_proxy_still_work(tmp_path: Path) -> None:
    """The filter bars only new unix sockets: a socketpair works, and so does the bridge to catui's proxy."""
    import http.server
    import threading

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello through the proxy")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        project = make_repo(tmp_path / "proj")
        python = os.path.realpath(sys.executable)
        command = (
            f"{python} -c 'import socket; a, b = socket.socketpair(); a.sendall(b\"pair-ok\"); print(b.recv(9).decode())'"
            f" && curl -s http://localhost:{server.server_port}/"
        )
        result = run_bash_via_cli(tmp_path, project, command,
                                  {"enabled": True, "network": {"allowedDomains": ["localhost"]}})
    finally:
        server.shutdown()
    assert "pair-ok" in result and "hello through the proxy" in result


# --- git: linked worktrees' records, config.worktree, nested repositories -------------------------------------


def fsmonitor_ran(marker: Path, where: Path) -> bool:
    """Run ``git status`` in ``where`` outside the sandbox, as catui or a shell prompt would; did planted code run?"""
    subprocess.run(["git", "status", "--short"], cwd=where, capture_output=True, text=True,
                   env={**os.environ, **GIT_ENV})
    return marker.exists()


def plant_repository(evil: str, marker: Path) -> str:
    """Shell that builds a look-alike common git folder at ``evil`` whose config runs code (core.fsmonitor)."""
    return (
        f"mkdir -p {evil}/objects {evil}/refs/heads && cp -r .git/objects/. {evil}/objects/ && "
        f"cp .git/refs/heads/* {evil}/refs/heads/; "
        f"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch {marker}; false\"\\n' > {evil}/config; "
    )


def test_a_linked_worktrees_record_in_the_checkout_cannot_be_redirected(tmp_path: Path) -> None:
    """``.git/worktrees/<name>/commondir`` rewritten to a planted repository: git in that worktree (an isolated
    agent's, which catui inspects outside the sandbox) would run its config."""
    project = make_repo(tmp_path / "proj")
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", str(linked), "-b", "side")
    marker = tmp_path / "pwned"
    evil = project / "build" / "evil"
    command = (
        plant_repository(str(evil), marker)
        + f"echo {evil} > .git/worktrees/linked/commondir; "
        + f"mv .git/worktrees/linked .git/worktrees/old && mkdir .git/worktrees/linked && echo {evil} > "
        + ".git/worktrees/linked/commondir; "
        + f"mv .git/worktrees .git/wt-old && mkdir -p .git/worktrees/linked && echo {evil} > "
        + ".git/worktrees/linked/commondir; "
        + "echo '[core]' > .git/worktrees/linked/config.worktree; "
        + "git worktree list"
    )
    result = run_bash_via_cli(tmp_path, project, command, {"enabled": True})
    assert "Read-only file system" in result and "busy" in result
    assert (project / ".git" / "worktrees" / "linked" / "commondir").read_text().strip() == "../.."
    assert not (project / ".git" / "worktrees" / "linked" / "config.worktree").exists()  # stand-in removed
    assert not fsmonitor_ran(marker, linked)
    assert git(linked, "rev-parse", "--abbrev-ref", "HEAD").strip() == "side"


def test_config_worktree_cannot_be_created_when_git_reads_it(tmp_path: Path) -> None:
    """With ``extensions.worktreeConfig`` on (``git sparse-checkout`` sets it), a new ``.git/config.worktree``
    is config git reads; it is held by a stand-in while the command runs and gone afterwards."""
    project = make_repo(tmp_path / "proj")
    git(project, "config", "extensions.worktreeConfig", "true")
    marker = tmp_path / "pwned"
    command = f"printf '[core]\\n\\tfsmonitor = \"touch {marker}; false\"\\n' > .git/config.worktree; git status --short"
    result = run_bash_via_cli(tmp_path, project, command, {"enabled": True})
    assert "Read-only file system" in result
    assert not (project / ".git" / "config.worktree").exists()
    assert not fsmonitor_ran(marker, project)


def test_a_repository_nested_in_the_project_keeps_its_config_and_hooks(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "proj")
    nested = make_repo(project / "vendor" / "lib", {"lib.txt": "v1\n"})
    marker = tmp_path / "pwned"
    command = (
        f"git -C vendor/lib config core.fsmonitor 'touch {marker}; false'; "
        f"echo '[core] fsmonitor = touch {marker}' >> vendor/lib/.git/config; "
        "echo x > vendor/lib/.git/hooks/post-checkout; "
        f"mv vendor/lib/.git vendor/lib/git-old; mv vendor vendor-old; mv vendor/lib vendor/lib2; "
        "echo v2 > vendor/lib/lib.txt && git -C vendor/lib add lib.txt && git -C vendor/lib commit -qm work && "
        f"echo NESTED-COMMIT-OK; echo {tmp_path / 'evil'} > vendor/lib/.git/commondir"
    )
    result = run_bash_via_cli(tmp_path, project, command, {"enabled": True})
    assert "NESTED-COMMIT-OK" in result  # work in the nested repository goes on
    assert not fsmonitor_ran(marker, nested)
    assert "fsmonitor" not in (nested / ".git" / "config").read_text()
    assert not (nested / ".git" / "hooks" / "post-checkout").exists()
    assert not (nested / ".git" / "commondir").exists() and "removed" in result
    assert (nested / ".git").is_dir() and (project / "vendor" / "lib").is_dir()
    assert git(nested, "log", "-1", "--format=%s").strip() == "work"


def test_the_walk_for_nested_repositories_is_bounded_and_breadth_first(tmp_path: Path) -> None:
    from catui.sandbox.nested_repos import find_nested_git

    (tmp_path / "a" / ".git").mkdir(parents=True)
    deep = tmp_path.joinpath(*[f"d{n}" for n in range(30)])
    (deep / ".git").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert find_nested_git(tmp_path) == (tmp_path / "a" / ".git", deep / ".git")
    assert find_nested_git(tmp_path, max_folders=5) == (tmp_path / "a" / ".git",)


def test_an_isolated_agent_cannot_make_another_branch_its_own_by_pointing_head_at_it(tmp_path: Path) -> None:
    """One command points the worktree's HEAD at ``main`` (or ``develop``), the next moves it: the branch a
    worktree may move is the one it had at its first command, or one it made itself, never a branch that
    existed before. Run as catui runs in a linked worktree (an isolated agent's folder)."""
    project = make_repo(tmp_path / "proj", {"a.txt": "a\n"})
    git(project, "branch", "develop")
    worktree = project / ".catui" / "worktrees" / "agent-1"
    git(project, "worktree", "add", "-q", str(worktree), "-b", "worktree-agent-1")
    main_before = git(project, "rev-parse", "main").strip()
    develop_before = git(project, "rev-parse", "develop").strip()
    commit = "git commit -q --allow-empty -m"
    results = run_bash_calls_via_cli(tmp_path, worktree, [
        f"{commit} mine && git symbolic-ref HEAD refs/heads/main && echo POINTED",
        "git update-ref refs/heads/main refs/heads/worktree-agent-1; git symbolic-ref HEAD refs/heads/develop",
        "git update-ref refs/heads/develop refs/heads/worktree-agent-1; "
        f"git checkout -q -b fix worktree-agent-1 && {commit} on-fix && echo FIX-1",
        f"{commit} on-fix-again && echo FIX-2",
    ], {"enabled": True})
    assert "POINTED" in results[0]
    assert "couldn't set 'refs/heads/main'" in results[1]
    assert "couldn't set 'refs/heads/develop'" in results[2] and "FIX-1" in results[2]
    assert "FIX-2" in results[3]  # a branch the agent made and switched to stays its own
    assert git(project, "rev-parse", "main").strip() == main_before
    assert git(project, "rev-parse", "develop").strip() == develop_before
    assert git(project, "log", "-1", "--format=%s", "fix").strip() == "on-fix-again"
    assert git(project, "log", "-1", "--format=%s", "worktree-agent-1").strip() == "mine"


def test_a_deny_write_folder_cannot_be_renamed_away_and_written_next_time(tmp_path: Path) -> None:
    """``mv sub sub2`` in one command (only ``sub/secrets`` was a mount point), a write to ``sub2/secrets`` in
    the next (``sub/secrets`` no longer existed, so nothing was protected), ``mv sub2 sub``: no trace left."""
    project = tmp_path / "proj"
    (project / "sub" / "secrets").mkdir(parents=True)
    (project / "sub" / "secrets" / "key").write_text("original\n")
    results = run_bash_calls_via_cli(tmp_path, project, [
        "echo x > sub/secrets/key; mv sub sub2; mv sub/secrets sub/elsewhere; echo work > sub/notes && echo WORK-OK",
        "echo pwned > sub2/secrets/key; echo pwned > sub/elsewhere/key; mv sub2 sub; true",
    ], {"enabled": True, "filesystem": {"denyWrite": ["sub/secrets"]}})
    assert "Device or resource busy" in results[0] and "WORK-OK" in results[0]
    assert (project / "sub" / "secrets" / "key").read_text() == "original\n"
    assert (project / "sub" / "notes").read_text() == "work\n"


def test_protected_names_that_are_symbolic_links_are_protected_at_the_target_and_put_back(tmp_path: Path) -> None:
    """``.claude`` and ``.git/hooks`` as links (dotfile setups, shared hooks): writing through the link and
    replacing the link with a folder of one's own both fail to leave anything that runs later."""
    project = make_repo(tmp_path / "proj")
    (project / "shared-claude").mkdir()
    (project / ".claude").symlink_to("shared-claude")
    (project / "shared-hooks").mkdir()
    (project / ".git" / "hooks").rename(project / ".git" / "hooks-sample")
    (project / ".git" / "hooks").symlink_to(project / "shared-hooks")
    hook = "printf '#!/bin/sh\\ntouch /tmp/pwned\\n'"
    result = run_bash_via_cli(tmp_path, project, (
        "echo '{\"hooks\":{}}' > .claude/settings.json; "
        f"{hook} > .git/hooks/post-checkout; "
        "rm .claude && mkdir .claude && echo '{\"hooks\":{}}' > .claude/settings.json; "
        f"rm .git/hooks && mkdir .git/hooks && {hook} > .git/hooks/post-checkout; true"
    ), {"enabled": True})
    assert result.count("Read-only file system") == 2
    assert "put back the link" in result
    assert os.readlink(project / ".claude") == "shared-claude"
    assert os.readlink(project / ".git" / "hooks") == str(project / "shared-hooks")
    assert list((project / "shared-claude").iterdir()) == [] and list((project / "shared-hooks").iterdir()) == []
    assert not (project / ".claude" / "settings.json").exists()
    assert not (project / ".git" / "hooks" / "post-checkout").exists()


FAKE_BWRAP = r"""#!/bin/bash
# runs the command it is given, unsandboxed (what a planted bwrap would do)
args=("$@"); for i in "${!args[@]}"; do [ "${args[$i]}" = "--" ] && exec "${args[@]:$((i+1))}"; done
exec "${args[-1]}"
"""


def test_a_bwrap_planted_in_a_project_folder_on_path_is_not_trusted(tmp_path: Path) -> None:
    """A command writes ``.venv/bin/bwrap`` (the project's activated venv is on PATH): at catui's next start
    that fake would run every "sandboxed" command as it is. catui passes it over for the real one."""
    project = make_repo(tmp_path / "proj")
    planted = project / ".venv" / "bin" / "bwrap"
    plant = f"mkdir -p .venv/bin && cat > .venv/bin/bwrap <<'EOF'\n{FAKE_BWRAP}EOF\nchmod +x .venv/bin/bwrap && echo PLANTED"
    assert "PLANTED" in run_bash_via_cli(tmp_path, project, plant, {"enabled": True})
    assert planted.is_file()
    marker = tmp_path / "home" / "outside"
    path = f"{planted.parent}{os.pathsep}{os.environ['PATH']}"
    result = run_bash_calls_via_cli(tmp_path, project, [f"touch {marker} && echo ESCAPED"], {"enabled": True},
                                    path=path)[0]
    assert "ESCAPED" not in result and "Read-only file system" in result
    assert not marker.exists()


def test_a_bwrap_only_in_a_writable_folder_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from catui.sandbox.probe import find_binary, probe_bwrap

    folder = tmp_path / "proj" / "bin"
    folder.mkdir(parents=True)
    (folder / "bwrap").write_text(FAKE_BWRAP)
    (folder / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}bin")
    assert find_binary("bwrap", (tmp_path / "proj",)) == (None, [str(folder / "bwrap")])
    assert find_binary("bwrap", ()) == (str(folder / "bwrap"), [])
    availability = probe_bwrap(avoid=(tmp_path / "proj",))
    assert not availability.usable and "not trusted" in availability.reason and str(folder) in availability.reason


def test_the_scratch_files_catui_reads_back_cannot_hang_or_exhaust_it(tmp_path: Path) -> None:
    """The command's scratch folder (its output and its final directory) is its own to write: replaced by a
    FIFO, catui's read never returned (deaf to SIGINT and SIGTERM); by a link to /dev/zero, it read without
    end. Each is now refused with a note, under a 1 GB address-space ceiling."""
    project = make_repo(tmp_path / "proj")
    scratch = "d=$(ls -d /tmp/catui-bash-*)"
    results = run_bash_calls_via_cli(tmp_path, project, [
        f"{scratch}; rm -f $d/cwd; mkfifo $d/cwd; echo FIRST; exit 0",
        f"{scratch}; rm -f $d/out; mkfifo $d/out; exit 0",
        f"{scratch}; rm -f $d/out; ln -s /dev/zero $d/out; exit 0",
        "cd sub 2>/dev/null; mkdir -p sub && cd sub && echo STILL-WORKS",
    ], {"enabled": True}, memory_limit=1 << 30)
    assert "FIRST" in results[0]
    assert "did not read this command's output file: it was replaced by something that is not a regular file" \
        in results[1]
    assert "did not read this command's output file: it was replaced by a symbolic link" in results[2]
    assert "STILL-WORKS" in results[3]


def test_a_file_the_git_config_includes_is_protected_like_the_config(tmp_path: Path) -> None:
    """``git config include.path ../.gitconfig`` (shared settings kept in the project): the included file is
    config git runs (core.fsmonitor), and a missing ``includeIf`` target could be created."""
    project = make_repo(tmp_path / "proj", {".gitconfig": "[alias]\n\tst = status\n"})
    git(project, "config", "include.path", "../.gitconfig")
    git(project, "config", "includeIf.onbranch:release.path", "../.gitconfig-release")
    marker = tmp_path / "pwned"
    fsmonitor = f"printf '[core]\\n\\tfsmonitor = \"touch {marker}; false\"\\n'"
    result = run_bash_via_cli(tmp_path, project, (
        f"{fsmonitor} >> .gitconfig; {fsmonitor} > .gitconfig-release; "
        f"mv .gitconfig gc && {fsmonitor} > .gitconfig; echo src > main.txt && echo WORK-OK"
    ), {"enabled": True})
    assert result.count("Read-only file system") == 2 and "busy" in result and "WORK-OK" in result
    assert "fsmonitor" not in (project / ".gitconfig").read_text()
    assert not (project / ".gitconfig-release").exists()
    git(project, "checkout", "-q", "-b", "release")
    assert not fsmonitor_ran(marker, project)


def test_included_config_files_are_found_through_git_and_nested(tmp_path: Path) -> None:
    from catui.sandbox.git_includes import included_files

    (tmp_path / ".git").mkdir()
    config = tmp_path / ".git" / "config"
    config.write_text('[include]\n\tpath = ../a.cfg\n[includeIf "gitdir:~/x/"]\n\tpath = ~/b.cfg\n')
    (tmp_path / "a.cfg").write_text("[include]\n\tpath = sub/c.cfg\n")
    home = tmp_path / "home"
    assert included_files(config, home) == [tmp_path / "a.cfg", home / "b.cfg", tmp_path / "sub" / "c.cfg"]
    (tmp_path / "a.cfg").write_text("[include]\n\tpath = .git/config\n")  # a loop ends
    assert included_files(config, home) == [tmp_path / "a.cfg", home / "b.cfg"]
