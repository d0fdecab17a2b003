"""Read-only shell commands run without approval; anything that may write or escape is still asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catui.permissions.bash_readonly import is_read_only_command
from catui.permissions.context import PermissionContext, PermissionRequest
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, run_catui

PROJECT = Path("/work/proj")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls -la", True),
        ("git status --short", True),
        ("git log --oneline -n 5 | head -3", True),
        ("git diff HEAD~1 && git show", True),
        ("grep -rn TODO src 2>/dev/null | wc -l", True),
        ("cat README.md 2>&1", True),
        ("find . -name '*.py'", True),
        ("echo 'a > b'", True),
        ("git branch", True),
        ("git branch -a -v", True),
        ("git stash list", True),
        ("timeout 10 git status", True),
        ("cat /work/proj/sub/a.txt", True),
        ("cd src && ls", True),
        ("cd /tmp", False),
        # writes, runs or escapes
        ("echo hi > out.txt", False),
        ("cat a >> b", False),
        ("find . -delete", False),
        ("find . -exec rm {} ;", False),
        ("sort -o out.txt in.txt", False),
        ("tree -o out.txt", False),
        ("git diff --output=patch.txt", False),
        ("git grep -Ovim foo", False),
        ("git branch newbranch", False),
        ("git stash", False),
        ("git remote add origin x", False),
        ("git -C /elsewhere status", False),
        ("git commit -m x", False),
        ("git config user.name x", False),
        ("ls && rm -rf build", False),
        ("cat $HOME/.ssh/id_rsa", False),
        ("cat `which x`", False),
        ("cat /etc/passwd", False),
        ("cat ../outside.txt", False),
        ("cat ~/.bashrc", False),
        ("npm test", False),
        ("env rm x", False),
        ("ls 'unterminated", False),
        ("", False),
    ],
)
def test_read_only_commands(command: str, expected: bool) -> None:
    assert is_read_only_command(command, (PROJECT,), PROJECT) is expected


def test_without_working_directories_paths_are_not_checked() -> None:
    assert is_read_only_command("cat /etc/hosts", (), PROJECT)


@pytest.mark.parametrize(("mode", "command", "expected"), [
    ("default", "git status", "allow"),
    ("plan", "git log -n 3", "allow"),
    ("plan", "git commit -m x", "deny"),
    ("dontAsk", "ls", "allow"),
    ("default", "cat /etc/passwd", "ask"),
])
def test_decide_treats_read_only_shell_commands_as_reads(mode: str, command: str, expected: str) -> None:
    ctx = PermissionContext(mode=mode, working_directories=(PROJECT,))  # type: ignore[arg-type]
    assert ctx.decide(PermissionRequest("Bash", {"command": command}, subject=command)).behavior == expected


# What Claude Code 2.1.92 did with each command in default mode (print mode, a git repository holding a.txt and
# j.json): run it without asking, or ask (and so deny). Recorded by running the real one on the loopback server
# (148 commands in two runs).
CLAUDE_CODE_RUNS = [
    "sleep 1", "ls -la", "cat a.txt", "echo hello", "pwd", "whoami", "date", "date +%Y",
    "echo a | uniq -c", "sort a.txt", "grep -rn hi .", "grep -A2 hi a.txt", "rg hi",
    "find . -name '*.txt'", "head -n 1 a.txt", "tail -n 1 a.txt", "wc -l a.txt", "jq .a j.json",
    "which ls", "type ls", "file a.txt", "stat a.txt", "du -sh .", "df -h", "tree", "sed -n 1p a.txt",
    "git status", "git log --oneline", "git diff", "git branch", "git tag", "git remote -v",
    "git stash list", "git config --get user.name", "git show HEAD", "git rev-parse HEAD",
    "echo a | xargs echo", "basename /a/b", "dirname /a/b", "realpath a.txt", "readlink a.txt",
    "md5sum a.txt", "sha256sum a.txt", "strings a.txt", "od -c a.txt", "hexdump -C a.txt", "cut -c1 a.txt",
    "echo a | tr a b", "expr 1 + 1", "seq 3", "true", "false", "test -f a.txt", "id", "uname -a",
    "hostname", "ps aux", "ps -ef", "nproc", "free -m", "uptime", "cal", "cd proj", "column -t a.txt",
    "diff a.txt j.json", "cmp a.txt j.json", "comm a.txt j.json", "nl a.txt", "tac a.txt", "rev a.txt",
    "fold a.txt", "paste a.txt", "history", "man ls", "ls | grep a", "cat a.txt | sort | uniq",
    "echo hi > /dev/null", "ls 2>&1", "docker ps", "node --version", "python3 --version", "base64 a.txt",
    "lsof -i", "pgrep bash", "tput cols", "fd txt", "locale", "groups", "sed -n '1,3p' a.txt",
    "git log -5", "echo /etc/passwd", "rg -g '*.py' hi", "git tag -l", "git remote show origin",
    "docker images", "head -c 5 a.txt", "wc -l < a.txt", "git status && git diff", "jq -r .a j.json",
    "grep -c hi a.txt", "grep -e hi -f a.txt a.txt", "git show --stat HEAD", "git ls-files", "tree -L 2",
    "du -sh /tmp",
]
CLAUDE_CODE_ASKS = [
    "printf 'x\\n'", "whoami --help", "pwd -P", "date -s 2020-01-01", "uniq a.txt",
    "sort -o out.txt a.txt", "rg --pre cat hi", "egrep hi a.txt", "fgrep hi a.txt", "find . -delete",
    "jq -f x j.json", "printenv", "env", "tree -o out.txt", "sed -i s/hi/ho/ a.txt", "sed s/hi/ho/ a.txt",
    "git branch newbranch", "git tag v1", "git fetch", "echo zz | xargs rm", "cksum a.txt", "shasum a.txt",
    "[ -f a.txt ]", "env | grep PATH", "sed -n s/hi/ho/p a.txt", "sed -n -e 1p -e 2p a.txt",
    "sed 1p a.txt", "sed -n '$p' a.txt", "sed -n '/hi/p' a.txt", "ls -la /tmp", "cat /etc/hostname",
    "git diff --output=x", "sort -k2 a.txt", "echo a | xargs -I{} echo {}", "ps e", "date 0101",
    "tput reset", "git branch -d x", "git reflog expire", "cd .. && ls", "ls; rm -rf xyz", "uniq -c a.txt",
    "file -C a.txt",
]


@pytest.mark.parametrize(("command", "expected"), [*((c, True) for c in CLAUDE_CODE_RUNS),
                                                   *((c, False) for c in CLAUDE_CODE_ASKS)])
def test_read_only_as_claude_code_decides(command: str, expected: bool, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    assert is_read_only_command(command, (project,), project) is expected


def test_print_mode_runs_sleep_and_asks_for_printf(tmp_path: Path) -> None:
    """Through the real CLI in default mode: ``sleep`` runs unasked (as in Claude Code), ``printf`` is asked."""
    calls = [{"type": "tool_use", "id": "toolu_sleep", "name": "Bash", "input": {"command": "sleep 0"}},
             {"type": "tool_use", "id": "toolu_printf", "name": "Bash", "input": {"command": "printf x"}}]
    script = {"turns": [{"match": {"last_is_tool_result": False}, "content": calls},
                        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}]}]}
    project = tmp_path / "proj"
    project.mkdir()
    with AnthropicTestServer(script) as server:
        done = run_catui(project, cli_env(tmp_path, server), "-p", "go", "--output-format", "json", timeout=60)
    assert done.returncode == 0, done.stderr
    assert [d["tool_use_id"] for d in json.loads(done.stdout)["permission_denials"]] == ["toolu_printf"]
