"""Hooks in a real session: build_app on the scripted provider, hooks as shell scripts in .claude/settings.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.app import AgentApp, RunOptions, build_app
from catui.hooks.apply import MAX_STOP_HOOK_CONTINUATIONS
from catui.messages import blocks_of
from catui.permissions.context import PermissionDecision
from catui.session.events import ErrorEvent, Event, ResultEvent, SystemEvent, UserMessageEvent


def script(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)
    return str(path)


def on(event: str, command: str, matcher: str | None = None) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def tool_use(tool_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def make_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, Any]], hooks: dict[str, Any],
             **options: Any) -> AgentApp:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    # One script file per app: providers are shared per configuration, and a used-up script is no good.
    script_path = tmp_path / f"script-{len(list(tmp_path.glob('script-*.yaml')))}.yaml"
    script_path.write_text(yaml.safe_dump({"turns": turns}))
    app = build_app(RunOptions(cwd=project, model=f"scripted:{script_path}", setting_sources=("project",),
                               **options))
    return app


async def run(app: AgentApp, prompt: str) -> list[Event]:
    try:
        return [event async for event in app.session.run(prompt)]
    finally:
        await app.aclose()


def results_by_id(events: list[Event]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, UserMessageEvent) and event.agent_id is None:
            for block in blocks_of(event.message):
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return found


def views(app: AgentApp) -> list[Any]:
    return [view for view, _turn in app.session.config.provider.engine.history]  # type: ignore[attr-defined]


def final(events: list[Event]) -> ResultEvent:
    last = events[-1]
    assert isinstance(last, ResultEvent)
    return last


CALL_THEN_DONE = [
    {"match": {"last_is_tool_result": False}, "content": [tool_use("toolu_1", "Bash", command="echo one")]},
    {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}]},
]


async def test_exit_2_refuses_the_call_and_stderr_reaches_the_model(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    deny = script(tmp_path, "deny.sh", 'cat >/dev/null\necho "no shell commands on Fridays" >&2\nexit 2\n')
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PreToolUse", deny, "Bash"),
                   permission_mode="bypassPermissions")
    events = await run(app, "run something")
    result = results_by_id(events)["toolu_1"]
    assert result["is_error"] is True and result["content"] == "no shell commands on Fridays"
    assert "no shell commands on Fridays" in views(app)[-1].last_user_text
    assert final(events).permission_denials == [
        {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "echo one"}}]


async def test_a_hook_that_does_not_match_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deny = script(tmp_path, "deny.sh", "echo no >&2\nexit 2\n")
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PreToolUse", deny, "Write|Edit|mcp__.*"),
                   permission_mode="bypassPermissions")
    result = results_by_id(await run(app, "run"))["toolu_1"]
    assert "is_error" not in result and "one" in str(result["content"])


def decision_hook(folder: Path, decision: str, reason: str, **extra: Any) -> str:
    body = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                   "permissionDecisionReason": reason, **extra}}
    return script(folder, f"{decision}.sh", f"cat >/dev/null\ncat <<'JSON'\n{json.dumps(body)}\nJSON\n")


async def test_json_allow_skips_the_approval_nobody_could_give(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "project" / "notes.txt"
    turns = [
        {"match": {"last_is_tool_result": False},
         "content": [tool_use("toolu_1", "Write", file_path=str(target), content="hello\n")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "written"}]},
    ]
    allow = decision_hook(tmp_path, "allow", "notes are fine")
    app = make_app(tmp_path, monkeypatch, turns, on("PreToolUse", allow, "Write"))
    events = await run(app, "write notes")
    assert target.read_text() == "hello\n"
    assert "is_error" not in results_by_id(events)["toolu_1"]


async def test_allow_does_not_override_a_deny_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "project" / "notes.txt"
    turns = [
        {"match": {"last_is_tool_result": False},
         "content": [tool_use("toolu_1", "Write", file_path=str(target), content="hello\n")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "ok"}]},
    ]
    allow = decision_hook(tmp_path, "allow", "fine")
    app = make_app(tmp_path, monkeypatch, turns, on("PreToolUse", allow), disallowed_tools=["Write"])
    result = results_by_id(await run(app, "write"))["toolu_1"]
    assert result["is_error"] is True and not target.exists()


async def test_json_deny_reason_reaches_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deny = decision_hook(tmp_path, "deny", "Use the project's make targets instead")
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PreToolUse", deny),
                   permission_mode="bypassPermissions")
    result = results_by_id(await run(app, "go"))["toolu_1"]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
                      "content": "Use the project's make targets instead"}


async def test_json_ask_asks_even_where_rules_allow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, dict[str, Any], str]] = []

    async def can_use_tool(tool: Any, raw_input: dict[str, Any], request: Any, ctx: Any) -> PermissionDecision:
        asked.append((tool.name, raw_input, request.tool_name))
        return PermissionDecision("allow", "the user said yes")

    ask = decision_hook(tmp_path, "ask", "touches shared config")
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PreToolUse", ask, "Bash"),
                   permission_mode="bypassPermissions", can_use_tool=can_use_tool)
    result = results_by_id(await run(app, "go"))["toolu_1"]
    assert asked == [("Bash", {"command": "echo one"}, "Bash")]
    assert "is_error" not in result

    # With nobody to ask (print mode) the call is refused, and the model learns why.
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PreToolUse", ask, "Bash"),
                   permission_mode="bypassPermissions")
    result = results_by_id(await run(app, "go"))["toolu_1"]
    assert result["is_error"] is True and "touches shared config" in result["content"]


async def test_updated_input_is_validated_and_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rewrite = decision_hook(tmp_path, "allow", "quieter", updatedInput={"command": "echo rewritten"})
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PreToolUse", rewrite, "Bash"))
    result = results_by_id(await run(app, "go"))["toolu_1"]
    assert "rewritten" in str(result["content"]) and "one" not in str(result["content"])

    broken = decision_hook(tmp_path, "allow", "oops", updatedInput={"cmd": "echo"})
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PreToolUse", broken, "Bash"))
    result = results_by_id(await run(app, "go"))["toolu_1"]
    assert result["is_error"] is True and "InputValidationError" in result["content"]


async def test_post_tool_use_context_and_block_reach_the_model(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "post-input.json"
    post = script(tmp_path, "post.sh", f'cat > "{record}"\n'
                  """echo '{"decision": "block", "reason": "the linter found 2 problems", """
                  """"hookSpecificOutput": {"hookEventName": "PostToolUse", """
                  """"additionalContext": "run make lint to see them"}}'\n""")
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PostToolUse", post, "Bash"),
                   permission_mode="bypassPermissions")
    result = results_by_id(await run(app, "go"))["toolu_1"]
    content = str(result["content"])
    assert "one" in content and "the linter found 2 problems" in content and "run make lint" in content
    seen = json.loads(record.read_text())
    assert seen["hook_event_name"] == "PostToolUse" and seen["tool_input"] == {"command": "echo one"}
    assert seen["tool_use_id"] == "toolu_1" and seen["tool_response"] is not None
    assert seen["permission_mode"] == "bypassPermissions"


STOP_ONCE = """input=$(cat)
if echo "$input" | grep -q '"stop_hook_active": true'; then exit 0; fi
echo '{"decision": "block", "reason": "run the tests before you finish"}'
"""


async def test_stop_hook_forces_one_more_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stop = script(tmp_path, "stop.sh", STOP_ONCE)
    turns: list[dict[str, Any]] = [
        {"match": {"last_user_contains": "run the tests before you finish"},
         "content": [{"type": "text", "text": "tests pass, now done"}]},
        {"content": [{"type": "text", "text": "done early"}]},
    ]
    app = make_app(tmp_path, monkeypatch, turns, on("Stop", stop))
    events = await run(app, "do it")
    assert final(events).result == "tests pass, now done" and not final(events).is_error
    assert len(views(app)) == 2
    assert app.session.messages[-2]["role"] == "user"
    assert "run the tests before you finish" in str(app.session.messages[-2]["content"])


async def test_a_stop_hook_that_always_blocks_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stop = script(tmp_path, "stop.sh", """cat >/dev/null\necho '{"decision": "block", "reason": "more"}'\n""")
    turns = [{"content": [{"type": "text", "text": "again"}], "repeat": True}]
    app = make_app(tmp_path, monkeypatch, turns, on("Stop", stop))
    events = await run(app, "do it")
    assert len(views(app)) == MAX_STOP_HOOK_CONTINUATIONS + 1
    assert any(isinstance(e, ErrorEvent) and "stop_hook_active" in e.message for e in events)
    assert final(events).result == "again"


async def test_user_prompt_submit_adds_context_or_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = script(tmp_path, "gate.sh", """input=$(cat)
if echo "$input" | grep -q 'password'; then echo "prompts must not contain secrets" >&2; exit 2; fi
echo "The deploy freeze is on until Monday."
""")
    turns = [{"content": [{"type": "text", "text": "noted"}], "repeat": True}]
    app = make_app(tmp_path, monkeypatch, turns, on("UserPromptSubmit", gate))
    events = await run(app, "plan the release")
    assert final(events).result == "noted"
    assert "The deploy freeze is on until Monday." in views(app)[0].first_user_text

    app = make_app(tmp_path, monkeypatch, turns, on("UserPromptSubmit", gate))
    events = await run(app, "my password is hunter2")
    assert final(events).is_error and final(events).result == "prompts must not contain secrets"
    assert views(app) == [] and app.session.messages == []
    notices = [e for e in events if isinstance(e, SystemEvent) and e.subtype == "hook_response"]
    assert [n.data["outcome"] for n in notices] == ["blocked"]


async def test_session_start_context_and_a_failing_hook_notice(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    start = script(tmp_path, "start.sh", """input=$(cat)
echo "$input" | grep -q '"source": "startup"' && echo "Branch policy: never push to main."
""")
    broken = script(tmp_path, "broken.sh", "echo 'cannot reach the tracker' >&2\nexit 1\n")
    turns = [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]
    app = make_app(tmp_path, monkeypatch, turns, {**on("SessionStart", start), **on("UserPromptSubmit", broken)})
    events = await run(app, "hello")
    assert "Branch policy: never push to main." in views(app)[0].first_user_text
    notices = [e.data for e in events if isinstance(e, SystemEvent) and e.subtype == "hook_response"]
    assert len(notices) == 1 and notices[0]["hook_event"] == "UserPromptSubmit"
    assert notices[0]["outcome"] == "error" and "cannot reach the tracker" in notices[0]["message"]
    assert final(events).result == "ok" and not final(events).is_error


async def test_no_hooks_means_no_runner_on_the_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, {})
    assert app.session.config.hooks is None
    assert app.services.hooks is not None and app.services.hooks.config.is_empty  # the sub-agents' base all the same
    await app.aclose()


async def test_malformed_hooks_become_settings_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, {"PreToolUse": [{"matcher": "Bash"}]})
    assert any("'hooks.PreToolUse[0]' needs a 'hooks' list" in w for w in app.settings.warnings)
    await app.aclose()


AGENT_FILE = """---
name: checker
description: Checks things
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: {no_bash}
  Stop:
    - hooks:
        - type: command
          command: {summarise}
---
You check things.
"""


async def test_subagent_start_and_stop_hooks_and_agent_scoped_hooks(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    records = tmp_path / "records.jsonl"
    record = f'cat >> "{records}"\necho >> "{records}"\n'
    start = script(tmp_path, "start.sh", record + """echo '{"hookSpecificOutput": {"hookEventName": "SubagentStart", """
                   """"additionalContext": "Remember: staging DB only"}}'\n""")
    stop = script(tmp_path, "stop.sh", record)
    no_bash = script(tmp_path, "no-bash.sh", "cat >/dev/null\necho 'no shell in checker' >&2\nexit 2\n")
    summarise = script(tmp_path, "summarise.sh", STOP_ONCE.replace("run the tests before you finish",
                                                                   "summarise the diff"))
    agents = tmp_path / "project" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "checker.md").write_text(AGENT_FILE.format(no_bash=no_bash, summarise=summarise))
    child, parent = {"first_user_contains": "CHILD JOB"}, {"first_user_contains": "PARENT"}
    turns: list[dict[str, Any]] = [
        {"match": {**parent, "last_is_tool_result": False},
         "content": [tool_use("toolu_a", "Agent", description="check", prompt="CHILD JOB", subagent_type="checker")]},
        {"match": {**child, "last_user_contains": "summarise the diff"},
         "content": [{"type": "text", "text": "child summary"}]},
        {"match": {**child, "last_is_tool_result": False}, "content": [tool_use("toolu_c", "Bash", command="echo c")]},
        {"match": {**child, "last_is_tool_result": True}, "content": [{"type": "text", "text": "child first answer"}]},
        {"match": {**parent, "last_user_contains": "main-ran"}, "content": [{"type": "text", "text": "all done"}]},
        {"match": {**parent, "last_is_tool_result": True},
         "content": [tool_use("toolu_m", "Bash", command="echo main-ran")]},
    ]
    hooks = {**on("SubagentStart", start, "checker"), **on("SubagentStop", stop)}
    app = make_app(tmp_path, monkeypatch, turns, hooks, permission_mode="bypassPermissions")
    events = await run(app, "PARENT task")
    assert final(events).result == "all done"

    agent_result = results_by_id(events)["toolu_a"]
    assert "child summary" in str(agent_result["content"])
    data = next(e.tool_use_results["toolu_a"] for e in events
                if isinstance(e, UserMessageEvent) and "toolu_a" in e.tool_use_results)
    agent_id = data["agentId"]

    inputs = [json.loads(line) for line in records.read_text().splitlines() if line.strip()]
    assert [i["hook_event_name"] for i in inputs] == ["SubagentStart", "SubagentStop", "SubagentStop"]
    assert all(i["agent_id"] == agent_id and i["agent_type"] == "checker" for i in inputs)
    assert [i["stop_hook_active"] for i in inputs[1:]] == [False, True]
    assert inputs[1]["last_assistant_message"] == "child first answer"
    assert inputs[0]["session_id"] == app.session.session_id

    child_views = [v for v in views(app) if "CHILD JOB" in v.first_user_text]
    assert "Remember: staging DB only" in child_views[0].first_user_text
    # The agent's own PreToolUse hook refused the child's Bash call ...
    child_results = [b for e in events if isinstance(e, UserMessageEvent) and e.agent_id == agent_id
                     for b in blocks_of(e.message) if b.get("type") == "tool_result"]
    assert child_results[0]["is_error"] is True and child_results[0]["content"] == "no shell in checker"
    # ... but is not active in the main agent, whose Bash call ran.
    assert "main-ran" in str(results_by_id(events)["toolu_m"]["content"])


async def test_continue_false_ends_the_run_with_the_stop_reason(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    halt = script(tmp_path, "halt.sh", """cat >/dev/null
echo '{"continue": false, "stopReason": "Build is red; stopping for a human."}'
""")
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PostToolUse", halt),
                   permission_mode="bypassPermissions")
    events = await run(app, "go")
    assert final(events).result == "Build is red; stopping for a human."
    assert len(views(app)) == 1  # the model was not asked again
    notices = [e.data for e in events if isinstance(e, SystemEvent) and e.subtype == "hook_response"]
    assert [n["outcome"] for n in notices] == ["stopped"]


async def test_session_end_hooks_run_on_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = tmp_path / "end.json"
    end = script(tmp_path, "end.sh", f'cat > "{seen}"\n')
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("SessionEnd", end))
    await app.aclose("prompt_input_exit")
    await app.aclose()  # SessionEnd runs once
    data = json.loads(seen.read_text())
    assert data["hook_event_name"] == "SessionEnd" and data["reason"] == "prompt_input_exit"
    assert data["session_id"] == app.session.session_id


async def test_interrupting_the_agent_kills_a_running_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import os

    pid_file = tmp_path / "hook.pid"
    slow = script(tmp_path, "slow.sh", f'cat >/dev/null\nsleep 30 &\necho $! > "{pid_file}"\nwait\n')
    app = make_app(tmp_path, monkeypatch, CALL_THEN_DONE, on("PreToolUse", slow),
                   permission_mode="bypassPermissions")
    events: list[Event] = []

    async def consume() -> None:
        async for event in app.session.run("go"):
            events.append(event)

    task = asyncio.create_task(consume())
    for _ in range(500):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    app.session.abort()
    await asyncio.wait_for(task, timeout=10)
    await app.aclose()
    assert final(events).result == "Interrupted by the user."
    sleeper = int(pid_file.read_text())
    for _ in range(200):  # the killed sleep may take a moment to be reaped
        try:
            os.kill(sleeper, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the hook's child process is still running")


async def test_a_task_matcher_still_catches_the_agent_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deny = script(tmp_path, "deny.sh", "cat >/dev/null\necho 'no sub-agents in this repo' >&2\nexit 2\n")
    turns: list[dict[str, Any]] = [
        {"match": {"last_is_tool_result": False},
         "content": [tool_use("toolu_a", "Agent", description="d", prompt="CHILD", subagent_type="Explore")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "ok"}]},
    ]
    app = make_app(tmp_path, monkeypatch, turns, on("PreToolUse", deny, "Task"), permission_mode="bypassPermissions")
    result = results_by_id(await run(app, "go"))["toolu_a"]
    assert result["is_error"] is True and result["content"] == "no sub-agents in this repo"
    assert len(views(app)) == 2  # no child ever asked the model
