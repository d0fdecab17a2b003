"""HookRunner with real shell-script hooks in a temp folder: inputs, exit codes, JSON answers, timeouts."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from catui.hooks.apply import apply_hook_decision, result_with_hook_feedback
from catui.hooks.config import parse_hooks
from catui.hooks.runner import HookRunner, prompt_text
from catui.permissions.context import PermissionDecision, PermissionRule
from catui.tools.base import ToolResult


def script(folder: Path, name: str, body: str) -> str:
    """An executable bash script; returns the command that runs it."""
    path = folder / name
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)
    return str(path)


def runner(tmp_path: Path, hooks: dict[str, Any], **kwargs: Any) -> HookRunner:
    config = parse_hooks(hooks, source="test")
    assert config.warnings == []
    return HookRunner(config, session_id="sess-1", transcript_path=tmp_path / "t.jsonl", cwd=tmp_path,
                      project_dir=tmp_path, env={"PATH": "/usr/bin:/bin"}, **kwargs)


def on(event: str, command: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **extra}]}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


async def test_pre_tool_use_input_and_environment(tmp_path: Path) -> None:
    record = script(tmp_path, "record.sh",
                    'cat > "$CLAUDE_PROJECT_DIR/input.json"\n'
                    'echo "$CATUI_PROJECT_DIR|$(pwd)" > "$CLAUDE_PROJECT_DIR/env.txt"\n')
    hooks = runner(tmp_path, on("PreToolUse", record, "Bash"))
    outcome = await hooks.pre_tool_use("Bash", {"command": "ls"}, "toolu_9")
    assert outcome.decision is None and outcome.notices == []
    assert json.loads((tmp_path / "input.json").read_text()) == {
        "session_id": "sess-1",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_9",
    }
    assert (tmp_path / "env.txt").read_text().strip() == f"{tmp_path}|{tmp_path}"
    # The matcher decides: a Read call runs no hook at all.
    (tmp_path / "input.json").unlink()
    await hooks.pre_tool_use("Read", {"file_path": "x"}, "toolu_10")
    assert not (tmp_path / "input.json").exists()


async def test_exit_2_denies_with_stderr_and_other_exits_are_notices(tmp_path: Path) -> None:
    deny = script(tmp_path, "deny.sh", 'echo "rm -rf is not allowed here" >&2\nexit 2\n')
    broken = script(tmp_path, "broken.sh", 'echo "jq: not found" >&2\nexit 1\n')
    hooks = runner(tmp_path, {**on("PreToolUse", deny, "Bash"), **on("PostToolUse", broken)})
    outcome = await hooks.pre_tool_use("Bash", {"command": "rm -rf /"}, "t1")
    assert outcome.decision == "deny" and outcome.reason == "rm -rf is not allowed here"
    after = await hooks.post_tool_use("Bash", {"command": "ls"}, {"stdout": ""}, "t1")
    assert not after.blocked
    assert [(n.outcome, n.event) for n in after.notices] == [("error", "PostToolUse")]
    assert "failed with exit status 1: jq: not found" in after.notices[0].message


async def test_json_permission_decisions_combine_deny_over_ask_over_allow(tmp_path: Path) -> None:
    def answer(name: str, decision: str, reason: str) -> str:
        body = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                       "permissionDecisionReason": reason}}
        return script(tmp_path, name, f"cat > /dev/null\necho '{json.dumps(body)}'\n")

    allow, ask, deny = answer("allow.sh", "allow", "fine"), answer("ask.sh", "ask", "check"), answer(
        "deny.sh", "deny", "never")
    hooks = runner(tmp_path, {"PreToolUse": [
        {"matcher": "Read|Write|Edit", "hooks": [{"type": "command", "command": allow}]},
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": ask}]},
        {"matcher": "Edit", "hooks": [{"type": "command", "command": deny}]},
    ]})
    read = await hooks.pre_tool_use("Read", {}, "a")
    write = await hooks.pre_tool_use("Write", {}, "b")
    edit = await hooks.pre_tool_use("Edit", {}, "c")
    assert (read.decision, read.reason) == ("allow", "fine")
    assert (write.decision, write.reason) == ("ask", "check")
    assert (edit.decision, edit.reason) == ("deny", "never")


async def test_updated_input_and_the_older_decision_spelling(tmp_path: Path) -> None:
    body = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                   "updatedInput": {"command": "ls -la"}}}
    rewrite = script(tmp_path, "rewrite.sh", f"echo '{json.dumps(body)}'\n")
    legacy = script(tmp_path, "legacy.sh", """echo '{"decision": "block", "reason": "old style"}'\n""")
    hooks = runner(tmp_path, {**on("PreToolUse", rewrite, "Bash"), **on("PostToolUse", legacy)})
    outcome = await hooks.pre_tool_use("Bash", {"command": "ls"}, "a")
    assert outcome.decision == "allow" and outcome.updated_input == {"command": "ls -la"}
    hooks2 = runner(tmp_path, on("PreToolUse", legacy))
    old = await hooks2.pre_tool_use("Bash", {"command": "ls"}, "a")
    assert (old.decision, old.reason) == ("deny", "old style")


async def test_a_hanging_hook_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    hang = script(tmp_path, "hang.sh", "sleep 30 &\nwait\n")
    fast = script(tmp_path, "fast.sh", 'echo \'{"decision": "block", "reason": "tests fail"}\'\n')
    hooks = runner(tmp_path, {"Stop": [{"hooks": [{"type": "command", "command": hang, "timeout": 0.5},
                                                   {"type": "command", "command": fast}]}]})
    started = time.monotonic()
    outcome = await hooks.stop()
    assert time.monotonic() - started < 20  # not the 30 s the script wanted
    # The other hook's answer still counts; the timed-out one is a notice for the user.
    assert outcome.blocked and outcome.reason == "tests fail"
    assert len(outcome.notices) == 1 and "did not finish within 0.5s and was stopped" in outcome.notices[0].message


async def test_context_halt_and_system_message(tmp_path: Path) -> None:
    plain = script(tmp_path, "plain.sh", "echo 'Current sprint: hooks'\n")
    halt = script(tmp_path, "halt.sh", """echo '{"continue": false, "stopReason": "budget spent", '"""
                  """'"systemMessage": "heads up"}'\n""")
    ctx_json = script(tmp_path, "ctx.sh", """echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", """
                      """"additionalContext": "file was reformatted"}}'\n""")
    hooks = runner(tmp_path, {**on("UserPromptSubmit", plain), **on("PostToolUse", ctx_json),
                              **on("PreToolUse", halt)})
    prompt = await hooks.user_prompt_submit("hi")
    assert prompt.additional_context == ["Current sprint: hooks"]
    assert "Current sprint: hooks" in prompt.context_text()
    post = await hooks.post_tool_use("Write", {}, {}, "t")
    assert post.additional_context == ["file was reformatted"] and not post.blocked
    pre = await hooks.pre_tool_use("Write", {}, "t")
    assert pre.halt and pre.stop_reason == "budget spent"
    assert {(n.outcome, n.message) for n in pre.notices} == {("stopped", "budget spent"), ("message", "heads up")}


async def test_wrong_event_name_in_hook_specific_output_is_ignored(tmp_path: Path) -> None:
    wrong = script(tmp_path, "wrong.sh", """echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", """
                   """"permissionDecision": "deny"}}'\n""")
    outcome = await runner(tmp_path, on("PreToolUse", wrong)).pre_tool_use("Bash", {}, "t")
    assert outcome.decision is None
    assert "answered for event 'PostToolUse'" in outcome.notices[0].message


async def test_subagent_payloads_carry_agent_id_and_type(tmp_path: Path) -> None:
    record = script(tmp_path, "rec.sh", 'cat >> "$CLAUDE_PROJECT_DIR/inputs.jsonl"\necho >> '
                                        '"$CLAUDE_PROJECT_DIR/inputs.jsonl"\n')
    hooks = runner(tmp_path, {**on("SubagentStart", record, "Explore"), **on("SubagentStop", record),
                              **on("PreToolUse", record)},
                   agent_id="a123", agent_type="Explore", agent_transcript_path=tmp_path / "agent.jsonl")
    await hooks.before_run({"role": "user", "content": "look around"}, has_history=False)
    await hooks.pre_tool_use("Glob", {"pattern": "*"}, "t1")
    await hooks.at_stop("found it", stop_hook_active=False)
    inputs = [json.loads(line) for line in (tmp_path / "inputs.jsonl").read_text().splitlines() if line]
    assert [i["hook_event_name"] for i in inputs] == ["SubagentStart", "PreToolUse", "SubagentStop"]
    assert all(i["agent_id"] == "a123" and i["agent_type"] == "Explore" for i in inputs)
    assert inputs[2]["stop_hook_active"] is False and inputs[2]["last_assistant_message"] == "found it"
    assert inputs[2]["agent_transcript_path"] == str(tmp_path / "agent.jsonl")


def test_prompt_text_skips_reminders_and_notifications() -> None:
    reminder = {"type": "text", "text": "<system-reminder>\nctx\n</system-reminder>"}
    assert prompt_text({"role": "user", "content": [reminder, {"type": "text", "text": "fix it"}]}) == "fix it"
    assert prompt_text({"role": "user", "content": "<task-notification>\n<task-id>x</task-id>"}) is None
    assert prompt_text({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}) is None


def test_permission_precedence_between_hooks_and_rules() -> None:
    from catui.hooks.outcome import HookOutcome

    rule = PermissionRule("Bash", None, "deny", "projectSettings")
    by_rule_deny = PermissionDecision("deny", "denied by rule", rule)
    by_rule_ask = PermissionDecision("ask", "rule asks", PermissionRule("Bash", None, "ask", "projectSettings"))
    by_mode_ask = PermissionDecision("ask", "needs approval in default mode")
    allowed = PermissionDecision("allow", "read-only")
    hook_allow = HookOutcome(event="PreToolUse", decision="allow")
    hook_ask = HookOutcome(event="PreToolUse", decision="ask", reason="double-check")
    hook_deny = HookOutcome(event="PreToolUse", decision="deny", reason="no")
    assert apply_hook_decision(by_mode_ask, hook_allow, "Bash").behavior == "allow"
    assert apply_hook_decision(by_rule_ask, hook_allow, "Bash") is by_rule_ask
    assert apply_hook_decision(by_rule_deny, hook_allow, "Bash") is by_rule_deny
    assert apply_hook_decision(by_rule_deny, hook_ask, "Bash") is by_rule_deny
    forced = apply_hook_decision(allowed, hook_ask, "Bash")
    assert forced.behavior == "ask" and "double-check" in forced.reason
    assert apply_hook_decision(allowed, hook_deny, "Bash") == PermissionDecision("deny", "no")


def test_feedback_is_appended_to_tool_results() -> None:
    from catui.hooks.outcome import HookOutcome

    blocked = HookOutcome(event="PostToolUse", blocked=True, reason="lint failed", additional_context=["note"])
    text = result_with_hook_feedback(ToolResult("wrote file"), blocked, "Write").content
    assert isinstance(text, str) and text.startswith("wrote file\n\nPostToolUse hook feedback:\nlint failed")
    assert "note" in text
    blocks = result_with_hook_feedback(ToolResult([{"type": "text", "text": "x"}]), blocked, "Read").content
    assert isinstance(blocks, list) and blocks[0] == {"type": "text", "text": "x"} and len(blocks) == 2
    mcp = HookOutcome(event="PostToolUse", updated_tool_output="redacted")
    assert result_with_hook_feedback(ToolResult("secret"), mcp, "mcp__db__query").content == "redacted"
    assert result_with_hook_feedback(ToolResult("secret"), mcp, "Bash").content == "secret"


async def test_async_hooks_are_not_waited_for(tmp_path: Path) -> None:
    done = tmp_path / "done.txt"
    gate = tmp_path / "gate"
    slow = script(tmp_path, "slow.sh", f'cat >/dev/null\nwhile [ ! -e "{gate}" ]; do sleep 0.02; done\n'
                                       f'echo finished > "{done}"\necho \'{{"decision": "block"}}\'\n')
    hooks = runner(tmp_path, {"PostToolUse": [{"hooks": [{"type": "command", "command": slow, "async": True}]}]})
    outcome = await hooks.post_tool_use("Bash", {}, {}, "t")
    assert not outcome.blocked and not done.exists()  # returned while the hook still waits for its gate
    gate.touch()
    await hooks.wait_background()
    assert done.read_text().strip() == "finished"
