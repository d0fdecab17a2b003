"""The TypeScript Agent SDK's methods that change a running session, against the real ``catui`` CLI.

``setMcpServers`` answers the McpSetServersResult Claude Code 2.1.332 answers (added, removed, errors), a
new server's tools are offered from the next request and a removed one's no longer, and an unchanged server
stays connected (its stdio process is the same). ``reloadSkills`` and ``reloadOutputStyles`` read files
written while the session runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.support.ts_sdk import ServerFactory, loopback, release, run_case
from tests.test_ts_sdk_controls import CONVERSATION, emitted

__all__ = ["loopback", "release"]  # fixtures used by name

TOOLS_SERVER = Path(__file__).resolve().parent / "support" / "mcp_servers" / "tools_server.py"
STDIO = {"command": sys.executable, "args": [str(TOOLS_SERVER)]}
CALC = """
const add = sdk.tool("add", "Add two integers", { a: z.number(), b: z.number() },
  async (args) => ({ content: [{ type: "text", text: `sum=${args.a + args.b}` }] }));
const calc = sdk.createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
"""


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools") or []}


def tool_result_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return texts


def call(tool: str, prompt: str) -> dict[str, Any]:
    return {"match": {"last_user_contains": prompt, "last_is_tool_result": False},
            "content": [{"type": "tool_use", "id": f"toolu_{prompt.lower()}", "name": tool, "input": {}}]}


def test_set_mcp_servers_replaces_the_added_servers(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        call("mcp__tools__pid", "PID1"),
        call("mcp__tools__pid", "PID2"),
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
        {"content": [{"type": "text", "text": "ok"}], "repeat": True},
    ]})
    stdio = json.dumps(STDIO)
    run = run_case(release, CONVERSATION + CALC + f"""
const tools = {stdio};
const {{ q, send, end }} = startConversation({{ ...base, mcpServers: {{ calc }},
  allowedTools: ["mcp__tools__pid", "mcp__calc__add"] }});
await send("FIRST");
emit({{ swap: await q.setMcpServers({{ tools }}) }});
await send("PID1");
emit({{ more: await q.setMcpServers({{ tools, broken: {{ command: "/nonexistent/mcp-server" }},
  odd: {{ type: "ws", url: "ws://127.0.0.1:9/" }} }}) }});
await send("PID2");
emit({{ status: (await q.mcpServerStatus()).map((s) => [s.name, s.status]) }});
emit({{ none: await q.setMcpServers({{}}) }});
await send("LAST");
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    # the in-process server given at start is replaced; the stdio one connects
    assert emitted(run.lines, "swap") == {"added": ["tools"], "removed": ["calc"], "errors": {}}
    more = emitted(run.lines, "more")  # the unchanged server is neither added nor removed
    assert (more["added"], more["removed"], sorted(more["errors"])) == (["broken", "odd"], [], ["broken", "odd"])
    assert "/nonexistent/mcp-server" in more["errors"]["broken"]
    assert "'ws' is not supported" in more["errors"]["odd"]  # a config catui cannot use: the reason, no server
    assert sorted(emitted(run.lines, "status")) == [["broken", "failed"], ["tools", "connected"]]
    assert emitted(run.lines, "none") == {"added": [], "removed": ["broken", "tools"], "errors": {}}

    bodies = server.bodies()
    first, pid1, pid2, last = (next(b for b in bodies if any(
        m.get("role") == "user" and word in json.dumps(m) for m in b["messages"][-1:])) for word in
        ("FIRST", "PID1", "PID2", "LAST"))
    assert "mcp__calc__add" in tool_names(first) and "mcp__tools__pid" not in tool_names(first)
    assert "mcp__tools__pid" in tool_names(pid1) and "mcp__calc__add" not in tool_names(pid1)
    assert not any(name.startswith("mcp__") for name in tool_names(last))
    # the unchanged server stayed connected: the same process answered both calls
    answers = [texts[-1] for texts in (tool_result_texts(b) for b in bodies) if texts]
    pids = [answer for answer in answers if answer.isdigit()]
    assert len(pids) >= 2 and len(set(pids)) == 1, answers
    assert "mcp__tools__pid" in tool_names(pid2)


def test_set_mcp_servers_adds_an_in_process_server_to_a_session_without_mcp(loopback: ServerFactory,
                                                                           tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_user_contains": "ADD", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_add", "name": "mcp__calc__add", "input": {"a": 2, "b": 40}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
        {"content": [{"type": "text", "text": "ok"}], "repeat": True},
    ]})
    run = run_case("current", CONVERSATION + CALC + """
const { q, send, end } = startConversation({ ...base, allowedTools: ["mcp__calc__add"] });
await send("FIRST");
emit({ added: await q.setMcpServers({ calc }) });
await send("ADD");
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert emitted(run.lines, "added") == {"added": ["calc"], "removed": [], "errors": {}}
    first, add = server.bodies()[0], server.bodies()[1]
    assert not any(name.startswith("mcp__") for name in tool_names(first))
    assert "mcp__calc__add" in tool_names(add)
    assert "sum=42" in tool_result_texts(server.bodies()[-1])


def test_reload_skills_and_output_styles_read_the_files_again(loopback: ServerFactory, tmp_path: Path) -> None:
    """The current SDK's methods (0.2.92's Query has neither)."""
    server = loopback({"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]})
    work = tmp_path / "work"
    skill = work / ".claude" / "skills" / "greet" / "SKILL.md"
    style = work / ".claude" / "output-styles" / "terse.md"
    run = run_case("current", CONVERSATION + f"""
import {{ mkdirSync, writeFileSync }} from "node:fs";
import {{ dirname }} from "node:path";
const write = (path, text) => {{ mkdirSync(dirname(path), {{ recursive: true }}); writeFileSync(path, text); }};
const {{ q, send, end }} = startConversation({{ ...base, settingSources: ["project"] }});
await send("FIRST");
emit({{ before: await q.reloadSkills() }});
write({json.dumps(str(skill))}, "---\\nname: greet\\ndescription: Greets people\\nargument-hint: <name>\\n---\\nSay hi.\\n");
write({json.dumps(str(style))}, "---\\nname: Terse\\ndescription: Short answers\\n---\\nAnswer in few words.\\n");
emit({{ skills: await q.reloadSkills() }});
emit({{ styles: await q.reloadOutputStyles() }});
await send("SECOND");
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert emitted(run.lines, "before") == {"skills": []}
    assert emitted(run.lines, "skills") == {"skills": [
        {"name": "greet", "description": "Greets people", "argumentHint": "<name>"}]}
    styles = emitted(run.lines, "styles")["available_output_styles"]
    assert styles[0] == "default" and styles[-1] == "Terse"
    first, second = server.bodies()
    assert "Skill" not in tool_names(first) and "Skill" in tool_names(second)  # offered once there is a skill


def test_reload_plugins_reads_a_plugins_agents_and_skills_again(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]})
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "helpers", "version": "1.0.0"}))
    agent = plugin / "agents" / "checker.md"
    skill = plugin / "skills" / "tidy" / "SKILL.md"
    run = run_case("current", CONVERSATION + f"""
import {{ mkdirSync, writeFileSync }} from "node:fs";
import {{ dirname }} from "node:path";
const write = (path, text) => {{ mkdirSync(dirname(path), {{ recursive: true }}); writeFileSync(path, text); }};
const {{ q, send, end }} = startConversation({{ ...base, plugins: [{{ type: "local", path: {json.dumps(str(plugin))} }}] }});
await send("FIRST");
write({json.dumps(str(agent))}, "---\\nname: checker\\ndescription: Checks things\\n---\\nCheck.\\n");
write({json.dumps(str(skill))}, "---\\nname: tidy\\ndescription: Tidies up\\n---\\nTidy.\\n");
emit({{ reloaded: await q.reloadPlugins() }});
try {{ await q.reloadPlugins({{ addPlugins: [{{ type: "local", path: "/elsewhere" }}] }}); emit({{ refused: null }}); }}
catch (error) {{ emit({{ refused: String(error.message ?? error) }}); }}
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    reloaded = emitted(run.lines, "reloaded")
    assert reloaded["plugins"] == [{"name": "helpers", "path": str(plugin.resolve())}]
    # the files written after start are read: the plugin's agent and skill, named under the plugin
    assert {"name": "helpers:checker", "description": "Checks things", "model": None} in reloaded["agents"]
    assert {"name": "helpers:tidy", "description": "Tidies up", "argumentHint": ""} in reloaded["commands"]
    assert reloaded["mcpServers"] == [] and reloaded["error_count"] == 0
    assert "add_plugins" in emitted(run.lines, "refused")
