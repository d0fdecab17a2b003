"""Output redirections: an allow rule approves a command, not a place outside the project to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.permissions.context import PermissionContext, PermissionRequest
from catui.permissions.redirects import output_redirect_targets, redirects_outside
from catui.permissions.rules import parse_rule

PROJECT = Path("/work/proj")


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("npm test > out.txt", ["out.txt"]),
        ("npm test>>/tmp/log", ["/tmp/log"]),
        ("npm test 2>&1 | tee /tmp/x", []),  # tee is a command of its own, not a redirection
        ("make &> build.log", ["build.log"]),
        ("make >& build.log", ["build.log"]),
        ("make >&2", []),
        ('echo "a > b"', []),
        ("cat <<EOF", []),
        ("a > one && b 2> two", ["one", "two"]),
        ('a 1>>"/tmp/with space"', ["/tmp/with space"]),
    ],
)
def test_output_redirect_targets(command: str, targets: list[str]) -> None:
    assert output_redirect_targets(command) == targets


def test_redirects_outside_resolves_home_relative_and_variables(tmp_path: Path) -> None:
    command = "run > ok.txt 2> /dev/null >> ../up.txt > ~/.bashrc > $HOME/x > sub/in.txt"
    assert redirects_outside(command, (PROJECT,), PROJECT) == ["../up.txt", "~/.bashrc", "$HOME/x"]
    assert redirects_outside(command, (), PROJECT) == []


def bash(command: str) -> PermissionRequest:
    return PermissionRequest("Bash", {"command": command})


@pytest.mark.parametrize(
    ("mode", "command", "expected"),
    [
        ("default", "npm test > report.txt", "allow"),
        ("default", "npm test > /etc/passwd", "ask"),
        ("default", "npm test >> ~/.bashrc", "ask"),
        ("default", "npm test 2>&1", "allow"),
        ("default", "npm test 2>/dev/null", "allow"),
        ("dontAsk", "npm test > /etc/passwd", "deny"),
        ("auto", "make > /etc/passwd", "ask"),
        ("auto", "make > build.log", "allow"),
        ("bypassPermissions", "npm test > /etc/passwd", "allow"),
        ("default", "echo done > /tmp/flag", "allow"),  # the exact command was approved
    ],
)
def test_allow_rules_do_not_cover_writes_outside(mode: str, command: str, expected: str) -> None:
    rules = (
        parse_rule("Bash(npm test:*)", "allow", "localSettings"),
        parse_rule("Bash(echo done > /tmp/flag)", "allow", "session"),
    )
    context = PermissionContext(mode=mode, rules=rules, working_directories=(PROJECT,))  # type: ignore[arg-type]
    decision = context.decide(bash(command))
    assert decision.behavior == expected
    if expected != "allow":
        assert "outside the working directories" in decision.reason
