"""decide(): rules × calls × modes, reasons a user can act on, and the sub-agent helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.permissions.context import PermissionContext, PermissionRequest, PermissionRule, ToolConfinement
from catui.permissions.decide import decide
from catui.permissions.rule_suggestions import suggest_rule_text
from catui.permissions.rules import parse_rule
from catui.permissions.subagent_limits import agent_type_denied_message, cap_mode, is_agent_type_denied

PROJECT = Path("/work/proj")
ELSEWHERE = Path("/srv/other")

READ_IN = PermissionRequest("Read", {"file_path": "/work/proj/a.py"}, read_only=True, file_path=PROJECT / "a.py")
READ_OUT = PermissionRequest("Read", {"file_path": "/srv/other/a"}, read_only=True, file_path=ELSEWHERE / "a")
EDIT_IN = PermissionRequest("Edit", {"file_path": "/work/proj/a.py"}, is_edit=True, file_path=PROJECT / "a.py")
EDIT_OUT = PermissionRequest("Write", {"file_path": "/srv/other/a"}, is_edit=True, file_path=ELSEWHERE / "a")
BASH = PermissionRequest("Bash", {"command": "npm test"})
BASH_READONLY = PermissionRequest("Bash", {"command": "git status"}, read_only=True)
TODO = PermissionRequest("TodoWrite", {"todos": []})
MCP = PermissionRequest("mcp__db__query", {"sql": "select 1"})
FETCH = PermissionRequest("WebFetch", {"url": "https://example.com/", "prompt": "p"}, read_only=True,
                          subject="domain:example.com")

# mode → expected behaviour for each call, with no rules at all
MODE_TABLE: dict[str, dict[str, str]] = {
    "default": {"read_in": "allow", "read_out": "ask", "edit_in": "ask", "edit_out": "ask", "bash": "ask",
                "bash_ro": "allow", "todo": "allow", "mcp": "ask", "fetch": "ask"},
    "acceptEdits": {"read_in": "allow", "read_out": "ask", "edit_in": "allow", "edit_out": "ask", "bash": "ask",
                    "bash_ro": "allow", "todo": "allow", "mcp": "ask", "fetch": "ask"},
    "plan": {"read_in": "allow", "read_out": "deny", "edit_in": "deny", "edit_out": "deny", "bash": "deny",
             "bash_ro": "allow", "todo": "allow", "mcp": "deny", "fetch": "ask"},
    "dontAsk": {"read_in": "allow", "read_out": "deny", "edit_in": "deny", "edit_out": "deny", "bash": "deny",
                "bash_ro": "allow", "todo": "allow", "mcp": "deny", "fetch": "deny"},
    "bypassPermissions": {"read_in": "allow", "read_out": "allow", "edit_in": "allow", "edit_out": "allow",
                          "bash": "allow", "bash_ro": "allow", "todo": "allow", "mcp": "allow", "fetch": "allow"},
    "auto": {"read_in": "allow", "read_out": "ask", "edit_in": "allow", "edit_out": "ask", "bash": "allow",
             "bash_ro": "allow", "todo": "allow", "mcp": "allow", "fetch": "allow"},
}
CALLS = {"read_in": READ_IN, "read_out": READ_OUT, "edit_in": EDIT_IN, "edit_out": EDIT_OUT, "bash": BASH,
         "bash_ro": BASH_READONLY, "todo": TODO, "mcp": MCP, "fetch": FETCH}


def ctx(mode: str = "default", *rules: str, behavior: str = "allow") -> PermissionContext:
    parsed = [parse_rule(r, behavior, "projectSettings", origin="/work/proj/.catui/settings.json") for r in rules]  # type: ignore[arg-type]
    return PermissionContext(mode=mode, rules=tuple(parsed), working_directories=(PROJECT,))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "call"), [(mode, call) for mode in MODE_TABLE for call in CALLS]
)
def test_modes_without_rules(mode: str, call: str) -> None:
    decision = decide(ctx(mode), CALLS[call])
    assert decision.behavior == MODE_TABLE[mode][call]
    if decision.behavior != "allow":
        assert decision.reason


# (mode, rules as (behavior, text), call, expected)
RULE_TABLE = [
    ("default", [("allow", "Bash(npm test:*)")], BASH, "allow"),
    ("default", [("allow", "Bash(npm test:*)"), ("deny", "Bash(npm:*)")], BASH, "deny"),
    ("default", [("allow", "Bash"), ("ask", "Bash(npm test)")], BASH, "ask"),
    ("default", [("ask", "Bash(npm test)"), ("deny", "Bash")], BASH, "deny"),
    ("bypassPermissions", [("deny", "Bash(npm test)")], BASH, "deny"),
    ("bypassPermissions", [("ask", "Bash(npm test)")], BASH, "ask"),
    ("dontAsk", [("ask", "Bash(npm test)")], BASH, "deny"),
    ("dontAsk", [("allow", "Bash(npm test)")], BASH, "allow"),
    ("plan", [("allow", "Bash(npm test)")], BASH, "deny"),
    ("plan", [("allow", "Read(//srv/other/**)")], READ_OUT, "allow"),
    ("default", [("allow", "Read(//srv/other/**)")], READ_OUT, "allow"),
    ("dontAsk", [("allow", "Edit(//srv/other/**)")], EDIT_OUT, "allow"),
    ("acceptEdits", [("deny", "Edit(*.py)")], EDIT_IN, "deny"),
    ("acceptEdits", [("ask", "Edit(a.py)")], EDIT_IN, "ask"),
    ("default", [("allow", "Edit")], EDIT_IN, "allow"),
    ("default", [("deny", "Read(a.py)")], READ_IN, "deny"),
    ("bypassPermissions", [("deny", "Read(a.py)")], READ_IN, "deny"),
    ("default", [("allow", "mcp__db")], MCP, "allow"),
    ("bypassPermissions", [("deny", "mcp__db__*")], MCP, "deny"),
    ("default", [("deny", "TodoWrite")], TODO, "deny"),
    ("default", [("allow", "WebFetch(domain:example.com)")], FETCH, "allow"),
    ("dontAsk", [("allow", "WebFetch(domain:other.org)")], FETCH, "deny"),
    ("plan", [("allow", "WebFetch")], FETCH, "allow"),
    (
        "default",
        [("allow", "Bash(git status:*)"), ("allow", "Bash(npm test:*)")],
        PermissionRequest("Bash", {"command": "git status && npm test"}),
        "allow",
    ),
    (
        "default",
        [("allow", "Bash(git status:*)")],
        PermissionRequest("Bash", {"command": "git status && npm test"}),
        "ask",
    ),
    (
        "default",
        [("allow", "Bash(npm test:*)")],
        PermissionRequest("Bash", {"command": "cd src && npm test"}),
        "allow",
    ),
    (
        "default",
        [("allow", "Bash(npm test:*)")],
        PermissionRequest("Bash", {"command": "cd /etc && npm test"}),
        "ask",
    ),
]


@pytest.mark.parametrize(("mode", "rules", "call", "expected"), RULE_TABLE)
def test_rules_then_mode(mode: str, rules: list[tuple[str, str]], call: PermissionRequest, expected: str) -> None:
    parsed = tuple(parse_rule(text, behavior, "localSettings") for behavior, text in rules)  # type: ignore[arg-type]
    context = PermissionContext(mode=mode, rules=parsed, working_directories=(PROJECT,))  # type: ignore[arg-type]
    assert decide(context, call).behavior == expected
    assert context.decide(call).behavior == expected


def test_deny_reason_names_rule_source_and_file() -> None:
    decision = decide(ctx("bypassPermissions", "Bash(npm:*)", behavior="deny"), BASH)
    assert decision.behavior == "deny"
    assert decision.rule is not None and decision.rule.content == "npm:*"
    assert "Bash(npm:*)" in decision.reason
    assert "projectSettings" in decision.reason
    assert "/work/proj/.catui/settings.json" in decision.reason
    assert "permissions.deny" in decision.reason


def test_ask_rule_reason_says_how_to_stop_asking() -> None:
    decision = decide(ctx("bypassPermissions", "Bash(npm test)", behavior="ask"), BASH)
    assert decision.behavior == "ask"
    assert "Rule 'Bash(npm test)' from projectSettings (/work/proj/.catui/settings.json)" in decision.reason
    assert "remove 'Bash(npm test)' from permissions.ask" in decision.reason


def test_cli_deny_reason_points_at_the_flag() -> None:
    rule = parse_rule("Bash", "deny", "cliArg", origin="--disallowedTools")
    decision = decide(PermissionContext(rules=(rule,)), BASH)
    assert "--disallowedTools" in decision.reason


def test_ask_reason_suggests_an_allow_rule() -> None:
    decision = decide(ctx("default"), BASH)
    assert decision.behavior == "ask"
    assert "'Bash(npm test:*)'" in decision.reason
    assert "permissions.allow" in decision.reason and "--allowedTools" in decision.reason


def test_dont_ask_reason_names_the_mode_and_the_fix() -> None:
    decision = decide(ctx("dontAsk"), BASH)
    assert "dontAsk" in decision.reason and "Bash(npm test:*)" in decision.reason


def test_plan_reason_says_plan_mode_is_on() -> None:
    decision = decide(ctx("plan"), EDIT_IN)
    assert decision.behavior == "deny"
    assert "plan mode is on" in decision.reason


def test_outside_working_directory_reason() -> None:
    decision = decide(ctx("default"), READ_OUT)
    assert "/srv/other/a" in decision.reason and "outside the working directories" in decision.reason
    assert "Read(//srv/other/a)" in decision.reason
    assert "additionalDirectories" in decision.reason


def test_no_working_directories_means_no_restriction() -> None:
    context = PermissionContext(mode="default")
    assert decide(context, READ_OUT).behavior == "allow"


def test_symlink_leaving_the_working_directory_is_outside(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    (project / "link.txt").symlink_to(secret)
    request = PermissionRequest("Read", {}, read_only=True, file_path=project / "link.txt")
    context = PermissionContext(mode="default", working_directories=(project,))
    assert decide(context, request).behavior == "ask"


def test_relative_rules_use_the_first_working_directory(tmp_path: Path) -> None:
    rule = parse_rule("Edit(src/**)", "allow", "session")
    context = PermissionContext(rules=(rule,), working_directories=(tmp_path,))
    request = PermissionRequest("Write", {}, is_edit=True, file_path=tmp_path / "src" / "x.py")
    assert decide(context, request).behavior == "allow"
    other = context.with_working_directories(tmp_path / "elsewhere")
    assert decide(other, request).behavior == "ask"


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (BASH, "Bash(npm test:*)"),
        (PermissionRequest("Bash", {"command": "ls -la"}), "Bash(ls:*)"),
        (PermissionRequest("Bash", {"command": "cd src && make test"}), "Bash(make test:*)"),
        (PermissionRequest("Bash", {"command": "make && rm -f *.o"}), "Bash(make && rm -f \\*.o)"),
        (EDIT_IN, "Edit(a.py)"),
        (READ_OUT, "Read(//srv/other/a)"),
        (PermissionRequest("Grep", {"path": "/work/proj/src"}, read_only=True), "Read(src/**)"),
        (PermissionRequest("WebFetch", {"url": "https://docs.python.org/3/"}), "WebFetch(domain:docs.python.org)"),
        (MCP, "mcp__db__query"),
        (PermissionRequest("Agent", {"subagent_type": "Explore"}), "Agent(Explore)"),
    ],
)
def test_suggested_rules_parse_and_allow_the_call(request_: PermissionRequest, expected: str) -> None:
    text = suggest_rule_text(request_, PROJECT)
    assert text == expected
    rule = parse_rule(text, "allow", "session")
    assert decide(PermissionContext(rules=(rule,), working_directories=(PROJECT,)), request_).behavior == "allow"


@pytest.mark.parametrize(
    ("parent", "requested", "expected"),
    [
        ("default", "acceptEdits", "default"),
        ("acceptEdits", "default", "default"),
        ("bypassPermissions", "plan", "plan"),
        ("plan", "bypassPermissions", "plan"),
        ("dontAsk", "default", "dontAsk"),
        ("auto", "acceptEdits", "acceptEdits"),
        ("acceptEdits", "auto", "acceptEdits"),
        ("default", None, "default"),
    ],
)
def test_cap_mode(parent: str, requested: str | None, expected: str) -> None:
    assert cap_mode(parent, requested) == expected  # type: ignore[arg-type]


def test_agent_type_denied() -> None:
    deny = parse_rule("Task(Explore)", "deny", "userSettings")
    context = PermissionContext(rules=(deny, PermissionRule("Agent", "Plan", "allow", "session")))
    found = is_agent_type_denied(context, "Explore")
    assert found == deny
    assert is_agent_type_denied(context, "Plan") is None
    assert agent_type_denied_message("Explore", deny) == (
        "Agent type 'Explore' has been denied by permission rule 'Agent(Explore)' from userSettings."
    )
    decision = decide(context, PermissionRequest("Agent", {"subagent_type": "Explore"}))
    assert decision.behavior == "deny"


def test_derived_contexts_share_rules_and_stay_immutable() -> None:
    base = ctx("default", "Read")
    child = base.with_mode("plan")
    assert child.rules is base.rules and base.mode == "default"
    with pytest.raises(AttributeError):
        child.mode = "default"  # type: ignore[misc]
    session_rule = parse_rule("Bash(ls:*)", "allow", "session")
    extended = base.with_rules(session_rule)
    assert extended.rules[-1] == session_rule and len(base.rules) == 1
    assert extended.without_rules_from("session").rules == base.rules


def test_dont_ask_again_adds_a_session_rule() -> None:
    context = ctx("default")
    assert decide(context, BASH).behavior == "ask"
    rule = parse_rule(suggest_rule_text(BASH, PROJECT), "allow", "session", base=PROJECT, origin="this session")
    assert (str(rule), rule.behavior, rule.source) == ("Bash(npm test:*)", "allow", "session")
    approved = context.with_rules(rule)
    assert decide(approved, BASH).behavior == "allow"
    assert decide(approved, PermissionRequest("Bash", {"command": "npm test -- -k x"})).behavior == "allow"
    assert decide(approved, PermissionRequest("Bash", {"command": "npm publish"})).behavior == "ask"


def test_leaving_plan_mode_is_asked_unless_the_tool_asks_the_user_itself() -> None:
    asks_nobody = PermissionRequest("ExitPlanMode", {"plan": "p"}, read_only=False)
    asks_the_user = PermissionRequest("ExitPlanMode", {"plan": "p"}, read_only=True)
    decision = decide(ctx("plan"), asks_nobody)
    assert decision.behavior == "ask" and "--allowedTools \"ExitPlanMode\"" in decision.reason
    assert decide(ctx("dontAsk"), asks_nobody).behavior == "deny"
    assert decide(ctx("bypassPermissions"), asks_nobody).behavior == "allow"
    assert decide(ctx("plan", "ExitPlanMode"), asks_nobody).behavior == "allow"
    assert decide(ctx("plan"), asks_the_user).behavior == "allow"


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "auto"])
def test_confined_tool_runs_only_inside_its_folder(tmp_path: Path, mode: str) -> None:
    memory = tmp_path / "mem"
    ctx = PermissionContext(mode=mode, working_directories=(tmp_path,)).with_confinements(  # type: ignore[arg-type]
        ToolConfinement("Write", memory, "for its memory only")
    )
    inside = ctx.decide(PermissionRequest("Write", {"file_path": str(memory / "MEMORY.md")}, is_edit=True))
    outside = ctx.decide(PermissionRequest("Write", {"file_path": str(tmp_path / "a.py")}, is_edit=True))
    escaping = ctx.decide(PermissionRequest("Write", {"file_path": str(memory / ".." / "a.py")}, is_edit=True))
    assert inside.behavior == "allow"
    assert outside.behavior == "deny" and "for its memory only" in outside.reason and str(memory) in outside.reason
    assert escaping.behavior == "deny"
    # Other tools are not confined; a deny rule still beats the confinement.
    assert ctx.decide(PermissionRequest("Edit", {"file_path": str(tmp_path / "a.py")}, is_edit=True)).behavior != "deny"
    denied = ctx.with_rules(PermissionRule("Write", None, "deny", "session"))
    assert denied.decide(PermissionRequest("Write", {"file_path": str(memory / "x")}, is_edit=True)).behavior == "deny"
