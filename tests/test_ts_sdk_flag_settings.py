"""Settings and servers changed mid-session through the TypeScript Agent SDK, against the real ``catui`` CLI.

``applyFlagSettings`` adds and clears permission rules and switches the model, effort and output style from the
next request, as Claude Code 2.1.332 does; a key catui does not apply mid-session is refused by name and nothing of that call applies.
``updateSettings`` switches the output style and writes it. MCP servers a ``setMcpServers`` adds to a session
that started without any reach sub-agents as well as the main agent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.ts_sdk import ServerFactory, loopback, run_case
from tests.test_ts_sdk_controls import CONVERSATION, emitted
from tests.test_ts_sdk_live_changes import CALC, tool_names, tool_result_texts

__all__ = ["loopback"]  # fixtures used by name

TRY = """
const attempt = async (label, action) => {
  try { await action(); emit({ [label]: "applied" }); } catch (error) { emit({ [label]: String(error.message ?? error) }); }
};
"""


def echo(word: str) -> dict[str, Any]:
    return {"match": {"last_user_contains": word, "last_is_tool_result": False}, "repeat": True,
            "content": [{"type": "tool_use", "id": f"toolu_{word.lower()}", "name": "Bash",
                         "input": {"command": f"echo {word}", "description": "echo"}}]}


def request_after(bodies: list[dict[str, Any]], word: str) -> dict[str, Any]:
    """The first request whose last message is the prompt containing ``word``."""
    return next(b for b in bodies if word in json.dumps(b["messages"][-1]) and not answers([b], word))


def answers(bodies: list[dict[str, Any]], word: str) -> list[str]:
    """The tool results the model was sent for each echo of ``word``, in order."""
    found = []
    for body in bodies:
        last = body["messages"][-1]
        for block in last["content"] if isinstance(last.get("content"), list) else []:
            if block.get("type") == "tool_result" and block.get("tool_use_id") == f"toolu_{word.lower()}":
                content = block.get("content")
                found.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return found


def test_apply_flag_settings_changes_rules_and_model_from_the_next_request(loopback: ServerFactory,
                                                                         tmp_path: Path) -> None:
    server = loopback({"turns": [
        echo("RUNA"), echo("RUNB"), echo("RUNC"), echo("RUND"), echo("RUNE"),
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
        {"content": [{"type": "text", "text": "ok"}], "repeat": True},
    ]})
    run = run_case("current", CONVERSATION + TRY + """
const { q, send, end } = startConversation({ ...base, allowedTools: ["Bash"],
  systemPrompt: { type: "preset", preset: "claude_code" }, settings: { permissions: { deny: ["Bash(echo RUND)"] } } });
await send("RUNA");
await attempt("deny", () => q.applyFlagSettings({ permissions: { deny: ["Bash(echo RUNB)"] } }));
await send("RUNB");
await attempt("model", () => q.applyFlagSettings({ model: "claude-opus-4-6", effortLevel: "low", outputStyle: "Learning" }));
await attempt("hooks", () => q.applyFlagSettings({ model: "claude-haiku-4-5", hooks: { PreToolUse: [] } }));
await attempt("shape", () => q.applyFlagSettings({ permissions: { deny: "Bash" } }));
await attempt("rule", () => q.applyFlagSettings({ permissions: { deny: ["Bash(unclosed"] } }));
await attempt("style", () => q.applyFlagSettings({ outputStyle: "Nonesuch", effortLevel: "high" }));
await send("RUNC");
await attempt("clear", () => q.applyFlagSettings({ permissions: null, effortLevel: null, outputStyle: null }));
await send("RUNB again");
await send("RUND");
await attempt("update", () => q.updateSettings("localSettings", { outputStyle: "Explanatory" }));
await attempt("notallowed", () => q.updateSettings("localSettings", { model: "claude-opus-4-6" }));
await attempt("effort", () => q.updateSettings("userSettings", { effortLevel: "high" }));
await send("RUNE");
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert [emitted(run.lines, key) for key in ("deny", "model", "clear", "update")] == ["applied"] * 4
    # refused by name, and nothing of the call applied (the model stays opus below)
    assert "not hooks" in emitted(run.lines, "hooks") and "nothing in this request was applied" in emitted(
        run.lines, "hooks")
    assert "permissions.deny must be a list" in emitted(run.lines, "shape")
    assert "'Bash(unclosed'" in emitted(run.lines, "rule")
    assert "no output style named 'Nonesuch'" in emitted(run.lines, "style")
    assert "keys not allowed: model" in emitted(run.lines, "notallowed")
    assert "effortLevel" in emitted(run.lines, "effort")

    bodies = server.bodies()
    assert answers(bodies, "RUNA") == ["RUNA"]
    runb = answers(bodies, "RUNB")  # denied by the call's rule, then run once the call's rules are cleared
    assert len(runb) == 2 and "denied" in runb[0] and "Bash(echo RUNB)" in runb[0] and runb[1].startswith("RUNB")
    before, after, cleared = (request_after(bodies, word) for word in ("RUNB", "RUNC", "RUND"))
    assert (before["model"], "output_config" in before, "Learning" in json.dumps(before["system"])) == (
        "claude-sonnet-4-6", False, False)
    # the model, effort and style of the call, not those of the refused calls after it (haiku, high, Nonesuch)
    assert after["model"] == "claude-opus-4-6" and after["output_config"] == {"effort": "low"}
    assert "Learning" in json.dumps(after["system"])
    # null clears the effort and the style (back to the start's) but leaves the model
    assert (cleared["model"], "output_config" in cleared, "Learning" in json.dumps(cleared["system"])) == (
        "claude-opus-4-6", False, False)
    assert answers(bodies, "RUNC") == ["RUNC"]  # the malformed deny rule was not applied
    assert "denied" in answers(bodies, "RUND")[0]  # the start's settings rule stays in force
    # the output style applies from the next request and is written for later sessions
    system = json.dumps(request_after(bodies, "RUNE")["system"])
    assert "Explanatory" in system and "Explanatory" not in json.dumps(request_after(bodies, "RUND")["system"])
    local = json.loads((tmp_path / "work" / ".catui" / "settings.local.json").read_text(encoding="utf-8"))
    assert local["outputStyle"] == "Explanatory"


def test_servers_set_mid_session_reach_sub_agents(loopback: ServerFactory, tmp_path: Path) -> None:
    """A session that started without MCP servers: the child of an agent whose ``mcpServers`` names the added
    server is offered its tools and calls one, as it would a server given at start (before, it was told that no
    MCP server is configured)."""
    server = loopback({"turns": [
        {"match": {"first_user_contains": "CHILD-TASK", "last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_add", "name": "mcp__calc__add", "input": {"a": 2, "b": 40}}]},
        {"match": {"first_user_contains": "CHILD-TASK", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child done"}]},
        {"match": {"last_user_contains": "SPAWN", "last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_agent", "name": "Agent",
             "input": {"description": "add", "prompt": "CHILD-TASK: add", "subagent_type": "adder"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"content": [{"type": "text", "text": "ok"}], "repeat": True},
    ]})
    run = run_case("current", CONVERSATION + CALC + """
const adder = { description: "Adds numbers", prompt: "You add numbers.", tools: ["Read"], mcpServers: ["calc"] };
const { q, send, end } = startConversation({ ...base, allowedTools: ["Agent", "mcp__calc__add"],
  agents: { adder } });
await send("FIRST");
emit({ added: await q.setMcpServers({ calc }) });
await send("SPAWN");
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert emitted(run.lines, "added") == {"added": ["calc"], "removed": [], "errors": {}}
    child = [b for b in server.bodies() if "CHILD-TASK" in json.dumps(b["messages"][0])]
    assert child and {"Read", "mcp__calc__add"} <= tool_names(child[0])
    assert "sum=42" in tool_result_texts(child[-1])
