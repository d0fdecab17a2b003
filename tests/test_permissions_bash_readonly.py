"""Read-only shell commands run without approval; anything that may write or escape is still asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.permissions.bash_readonly import is_read_only_command
from catui.permissions.context import PermissionContext, PermissionRequest

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
