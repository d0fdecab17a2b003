"""Rule parsing and matching: every syntax of Claude Code's permission rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.permissions.context import PermissionRequest
from catui.permissions.rules import (
    RuleSyntaxError,
    command_parts,
    parse_rule,
    rule_matches,
)
from catui.permissions.tool_specs import split_tool_specs

PROJECT = Path("/work/proj")


def bash(command: str) -> PermissionRequest:
    return PermissionRequest("Bash", {"command": command})


def file_call(tool: str, path: str, *, edit: bool = False) -> PermissionRequest:
    key = "notebook_path" if tool == "NotebookEdit" else ("path" if tool in ("Glob", "Grep") else "file_path")
    return PermissionRequest(tool, {key: path}, read_only=not edit, is_edit=edit, file_path=Path(path))


def fetch(url: str) -> PermissionRequest:
    return PermissionRequest("WebFetch", {"url": url, "prompt": "summarise"}, read_only=True)


def agent(kind: str) -> PermissionRequest:
    return PermissionRequest("Agent", {"subagent_type": kind, "prompt": "x", "description": "y"})


def matches(rule_text: str, request: PermissionRequest, behavior: str = "allow", base: Path | None = None) -> bool:
    rule = parse_rule(rule_text, behavior, "projectSettings", base=base)  # type: ignore[arg-type]
    return rule_matches(rule, request, PROJECT)


HOME = Path.home()

TABLE = [
    # tool-wide rules
    ("Bash", bash("rm -rf build"), True),
    ("Bash()", bash("anything"), True),
    ("Bash(*)", bash("anything"), True),
    ("Read", file_call("Read", "/etc/hosts"), True),
    ("Read", file_call("Grep", "/work/proj/src"), True),
    ("Read", file_call("Edit", "/work/proj/a.py", edit=True), False),
    ("Write", file_call("Edit", "/work/proj/a.py", edit=True), False),
    # Bash: exact, legacy prefix, wildcards
    ("Bash(npm run test)", bash("npm run test"), True),
    ("Bash(npm run test)", bash("npm run test --watch"), False),
    ("Bash(npm run test:*)", bash("npm run test"), True),
    ("Bash(npm run test:*)", bash("npm run test -- --watch"), True),
    ("Bash(npm run test:*)", bash("npm run testing"), False),
    ("Bash(git status:*)", bash("git status --short"), True),
    ("Bash(git status:*)", bash("git stash"), False),
    ("Bash(ls *)", bash("ls -la"), True),
    ("Bash(ls *)", bash("ls"), True),
    ("Bash(ls *)", bash("lsof"), False),
    ("Bash(ls*)", bash("lsof"), True),
    ("Bash(git * main)", bash("git merge main"), True),
    ("Bash(git * main)", bash("git merge dev"), False),
    ("Bash(* --version)", bash("node --version"), True),
    # compound commands: an allow rule must cover every part
    ("Bash(git status:*)", bash("git status && rm -rf /"), False),
    ("Bash(git status:*)", bash("git status; git status -s"), True),
    ("Bash(echo:*)", bash("echo $(rm -rf x)"), False),
    ("Bash(make && make install)", bash("make && make install"), True),
    ("Bash(make && make install)", bash("make && make install && rm x"), False),
    ("Bash(ls \\*.py)", bash("ls *.py"), True),
    ("Bash(ls \\*.py)", bash("ls secret.py"), False),
    ("Bash(timeout:*)", bash("timeout 5 rm x"), True),
    ("Bash(npm test:*)", bash("timeout 30 npm test"), True),
    # Edit rules cover Write/NotebookEdit; Read rules cover Glob/Grep
    ("Edit(src/**)", file_call("Edit", "/work/proj/src/a/b.py", edit=True), True),
    ("Edit(src/**)", file_call("Write", "/work/proj/src/new.py", edit=True), True),
    ("Edit(src/**)", file_call("NotebookEdit", "/work/proj/src/nb.ipynb", edit=True), True),
    ("Edit(src/**)", file_call("Edit", "/work/proj/tests/a.py", edit=True), False),
    ("Edit(src/**)", file_call("Read", "/work/proj/src/a.py"), False),
    ("Read(src/**)", file_call("Glob", "/work/proj/src/pkg"), True),
    ("Read(src/**)", file_call("Grep", "/work/proj/src/pkg"), True),
    ("Read(*.env)", file_call("Read", "/work/proj/deep/dir/prod.env"), True),
    ("Read(.env)", file_call("Read", "/work/proj/.env"), True),
    ("Read(./.env)", file_call("Read", "/work/proj/sub/.env"), False),
    ("Read(secrets)", file_call("Read", "/work/proj/config/secrets/key.pem"), True),
    ("Read(//etc/**)", file_call("Read", "/etc/hosts"), True),
    ("Read(//etc/**)", file_call("Read", "/work/proj/etc/hosts"), False),
    ("Read(~/.ssh/**)", file_call("Read", str(HOME / ".ssh" / "id_rsa")), True),
    ("Read(~/.ssh/**)", file_call("Read", "/work/proj/.ssh/id_rsa"), False),
    ("Edit(docs/*.md)", file_call("Edit", "/work/proj/docs/a.md", edit=True), True),
    ("Edit(docs/*.md)", file_call("Edit", "/work/proj/docs/sub/a.md", edit=True), False),
    ("Edit(**/*.py)", file_call("Edit", "/work/proj/x/y/z.py", edit=True), True),
    # MCP
    ("mcp__github", PermissionRequest("mcp__github__create_issue"), True),
    ("mcp__github", PermissionRequest("mcp__gitlab__create_issue"), False),
    ("mcp__github__*", PermissionRequest("mcp__github__list"), True),
    ("mcp__github__create_issue", PermissionRequest("mcp__github__create_issue"), True),
    ("mcp__github__create_issue", PermissionRequest("mcp__github__delete_repo"), False),
    ("mcp__github", PermissionRequest("Bash", {"command": "mcp__github"}), False),
    # WebFetch
    ("WebFetch(domain:example.com)", fetch("https://example.com/a"), True),
    ("WebFetch(domain:example.com)", fetch("https://EXAMPLE.com:8443/a"), True),
    ("WebFetch(domain:example.com)", fetch("https://evil.com/?example.com"), False),
    ("WebFetch(domain:example.com)", fetch("https://sub.example.com/"), False),
    ("WebFetch(domain:*.example.com)", fetch("https://sub.example.com/"), True),
    ("WebFetch", fetch("https://anything.org/"), True),
    # Agent / Task
    ("Agent(Explore)", agent("Explore"), True),
    ("Agent(Explore)", agent("Plan"), False),
    ("Task(Explore)", agent("Explore"), True),
    ("Agent(Explore)", PermissionRequest("Task", {"subagent_type": "Explore"}), True),
]


@pytest.mark.parametrize(("rule_text", "request_", "expected"), TABLE)
def test_rule_matching_table(rule_text: str, request_: PermissionRequest, expected: bool) -> None:
    assert matches(rule_text, request_) is expected


def test_deny_rule_fires_on_any_part_of_a_compound_command() -> None:
    assert matches("Bash(rm:*)", bash("git status && rm -rf /"), "deny")
    assert matches("Bash(rm:*)", bash("echo `rm -rf x`"), "deny")
    assert matches("Bash(rm:*)", bash("FOO=1 rm x"), "deny")
    assert matches("Bash(rm:*)", bash("nohup rm x"), "deny")
    assert not matches("Bash(rm:*)", bash("echo 'rm -rf x'"), "deny")


def test_slash_patterns_are_relative_to_the_rule_base(tmp_path: Path) -> None:
    base = tmp_path / "repo"
    assert matches("Edit(/src/**)", file_call("Edit", str(base / "src" / "a.py"), edit=True), base=base)
    assert not matches("Edit(/src/**)", file_call("Edit", "/src/a.py", edit=True), base=base)
    # without a base the rule is read from the current directory
    assert matches("Edit(/src/**)", file_call("Edit", "/work/proj/src/a.py", edit=True))


def test_symlink_out_of_an_allowed_folder_is_not_allowed(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    link = tmp_path / "src" / "link.txt"
    link.symlink_to(outside)
    allow = parse_rule("Edit(src/**)", "allow", "session")
    deny = parse_rule("Edit(outside.txt)", "deny", "session")
    request = file_call("Edit", str(link), edit=True)
    assert not rule_matches(allow, request, tmp_path)
    assert rule_matches(deny, request, tmp_path)


@pytest.mark.parametrize(
    ("text", "tool", "content"),
    [
        ("Read", "Read", None),
        ("  Bash(git status:*)  ", "Bash", "git status:*"),
        ("Task(Explore)", "Agent", "Explore"),
        ("Bash(echo \\(hi\\))", "Bash", "echo (hi)"),
        ("Bash(python -c print(1))", "Bash", "python -c print(1)"),
        ("mcp__server", "mcp__server", None),
        ("mcp__server__*", "mcp__server__*", None),
        ("WebFetch(domain:example.com)", "WebFetch", "domain:example.com"),
        ("Edit(*)", "Edit", None),
    ],
)
def test_parse_rule(text: str, tool: str, content: str | None) -> None:
    rule = parse_rule(text, "deny", "userSettings")
    assert (rule.tool_name, rule.content, rule.behavior, rule.source) == (tool, content, "deny", "userSettings")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("Bash(git status", "unbalanced"),
        ("Bash(git (status)", "unbalanced"),
        ("Bash(ls))", "unbalanced"),
        ("Bash)", "without a matching"),
        ("(ls)", "no tool name"),
        ("Read, Write", "not a tool name"),
        ("Bash(ls) extra", "unbalanced"),
        ("WebFetch(example.com)", "domain:"),
        ("WebFetch(domain:)", "domain:"),
        ("mcp__", "names no MCP server"),
        ("mcp__srv__", "names no tool"),
        ("mcp__srv__to*l", "'*' may only"),
        ("Bash*", "not a tool name"),
    ],
)
def test_malformed_rules_raise_clear_errors(text: str, fragment: str) -> None:
    with pytest.raises(RuleSyntaxError) as info:
        parse_rule(text, "allow", "cliArg")
    assert fragment in str(info.value)


def test_non_string_rule_is_an_error() -> None:
    with pytest.raises(RuleSyntaxError, match="must be a string"):
        parse_rule(42, "allow", "projectSettings")  # type: ignore[arg-type]


def test_split_rule_list_like_claude_code() -> None:
    assert split_tool_specs("Read,Grep Bash(git status:*), Bash(npm run test)") == [
        "Read",
        "Grep",
        "Bash(git status:*)",
        "Bash(npm run test)",
    ]


def test_command_parts() -> None:
    assert command_parts("a && b || c; d | e & f\ng") == ["a", "b", "c", "d", "e", "f", "g"]
    assert command_parts("echo 'a && b' \"c; d\"") == ["echo 'a && b' \"c; d\""]
    assert command_parts("make 2>&1 > out.log") == ["make 2>&1 > out.log"]
    assert command_parts("echo $(date) x") == ["echo $(date) x", "date"]
    assert command_parts("(cd sub && make) ; { ls; }") == ["cd sub", "make", "ls"]
    assert command_parts("echo $(date)") == ["echo $(date)", "date"]
