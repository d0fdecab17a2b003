"""The official TypeScript Agent SDK drives the real ``catui`` CLI on the loopback Anthropic server.

Each case is a small ES module using the SDK's own ``query()``, ``tool()``,
``createSdkMcpServer()`` and session readers, run under node with two
releases: the current one and the one of Claude Code 2.1.92's time
(tests/support/ts_sdk.py). They skip, saying why, only when node or the
package cannot be had.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.ts_sdk import ServerFactory, loopback, release, run_case

__all__ = ["loopback", "release"]  # fixtures used by name


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [block for message in body["messages"] if isinstance(message.get("content"), list)
            for block in message["content"] if block.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [])


def test_query_yields_catuis_answer(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "Hello from catui"}]}]})
    run = run_case(release, """
await collect(sdk.query({ prompt: "Say hello", options: { ...base } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert run.result()["result"] == "Hello from catui" and run.result()["is_error"] is False
    assert run.init()["model"] == "claude-sonnet-4-6"


def test_an_sdk_mcp_server_tool_is_listed_and_called(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_add", "name": "mcp__calc__add", "input": {"a": 2, "b": 40}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "It is 42."}]},
    ]})
    run = run_case(release, """
const add = sdk.tool("add", "Add two integers", { a: z.number(), b: z.number() },
  async (args) => { emit({ called: args }); return { content: [{ type: "text", text: `sum=${args.a + args.b}` }] }; });
const calc = sdk.createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
await collect(sdk.query({ prompt: "Add 2 and 40",
  options: { ...base, mcpServers: { calc }, allowedTools: ["mcp__calc__add"] } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert {"called": {"a": 2, "b": 40}} in run.lines
    assert {"name": "calc", "status": "connected"} in run.init()["mcp_servers"]
    assert "mcp__calc__add" in run.init()["tools"]
    first, second = server.bodies()
    assert "mcp__calc__add" in [t["name"] for t in first["tools"]]
    (answer,) = tool_results(second)
    assert result_text(answer) == "sum=42" and not answer.get("is_error")
    assert run.result()["result"] == "It is 42."


def test_a_system_prompt_string_replaces_catuis_and_the_preset_appends(release: str, loopback: ServerFactory,
                                                                        tmp_path: Path) -> None:
    server = loopback({"turns": [{"repeat": True, "content": [{"type": "text", "text": "ok"}]}]})
    run = run_case(release, """
await collect(sdk.query({ prompt: "one", options: { ...base, systemPrompt: "You are a terse pirate." } }));
await collect(sdk.query({ prompt: "two", options: { ...base,
  systemPrompt: { type: "preset", preset: "claude_code", append: "Always end with ARRR." } } }));
await collect(sdk.query({ prompt: "three", options: { ...base } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    replaced, preset, default = server.bodies()
    assert [block["text"] for block in replaced["system"]] == ["You are a terse pirate."]
    preset_text = "\n".join(block["text"] for block in preset["system"])
    assert preset_text.rstrip().endswith("Always end with ARRR.") and len(preset_text) > 1000  # catui's prompt + append
    assert "system" not in default  # no systemPrompt: the SDKs' minimal default sends none


def test_bypass_permissions_needs_allow_dangerously_skip_permissions(release: str, loopback: ServerFactory,
                                                                    tmp_path: Path) -> None:
    server = loopback({"turns": [{"repeat": True, "content": [{"type": "text", "text": "ok"}]}]})
    run = run_case(release, """
for (const allow of [false, true]) {
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  async function* prompts() { await held; }
  const q = sdk.query({ prompt: prompts(), options: { ...base, allowDangerouslySkipPermissions: allow } });
  try { await q.setPermissionMode("bypassPermissions"); emit({ allow, switched: true }); }
  catch (error) { emit({ allow, error: String(error.message || error) }); }
  release();
  for await (const _ of q) { /* drain until catui exits */ }
}
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    refused = next(line for line in run.lines if isinstance(line, dict) and line.get("allow") is False)
    assert "bypassPermissions" in refused["error"] and "--allow-dangerously-skip-permissions" in refused["error"]
    assert {"allow": True, "switched": True} in run.lines


def test_post_tool_use_sees_bash_output_and_a_failed_call_raises_post_tool_use_failure(
    release: str, loopback: ServerFactory, tmp_path: Path
) -> None:
    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_fail", "name": "Bash", "input": {"command": "echo broken; exit 4"}},
            {"type": "tool_use", "id": "toolu_stop", "name": "Bash", "input": {"command": "echo out; echo STOP >&2"}},
        ]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "should not be asked"}]},
    ]})
    run = run_case(release, """
const hooks = {
  PostToolUse: [{ matcher: "Bash", hooks: [async (input) => {
    emit({ post: input.tool_response, id: input.tool_use_id });
    return input.tool_response.stdout.includes("STOP") ? { continue: false, stopReason: "the command said STOP" } : {};
  }] }],
  PostToolUseFailure: [{ matcher: "Bash", hooks: [async (input) => { emit({ failure: input }); return {}; }] }],
};
await collect(sdk.query({ prompt: "Run them", options: { ...base, hooks, allowedTools: ["Bash"] } }));
""", tmp_path, server)
    assert run.returncode in (0, 1), run.stderr
    (post,) = [line for line in run.lines if isinstance(line, dict) and "post" in line]
    assert post["id"] == "toolu_stop"
    assert post["post"]["stdout"] == "out\nSTOP" and post["post"]["stderr"] == ""
    assert post["post"]["interrupted"] is False and post["post"]["isImage"] is False
    (failure,) = [line["failure"] for line in run.lines if isinstance(line, dict) and "failure" in line]
    assert failure["hook_event_name"] == "PostToolUseFailure" and failure["tool_use_id"] == "toolu_fail"
    assert "broken" in failure["error"] and "Exit code 4" in failure["error"]
    assert len(server.bodies()) == 1  # the hook's continue: false ended the run before another request


def test_the_sdks_session_readers_find_catuis_session(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "remembered"}]}]})
    run = run_case(release, """
const messages = await collect(sdk.query({ prompt: "Remember the word teapot", options: { ...base } }));
const sessionId = messages.find((m) => m.type === "result").session_id;
const sessions = await sdk.listSessions({ dir: base.cwd });
emit({ listed: sessions.map((s) => [s.sessionId, s.firstPrompt ?? s.summary]) });
const read = await sdk.getSessionMessages(sessionId, { dir: base.cwd });
emit({ read: read.map((m) => [m.type, JSON.stringify(m.message)]) , sessionId });
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    listed = next(line["listed"] for line in run.lines if isinstance(line, dict) and "listed" in line)
    read = next(line for line in run.lines if isinstance(line, dict) and "read" in line)
    assert [entry[0] for entry in listed] == [read["sessionId"]]
    assert [kind for kind, _ in read["read"]] == ["user", "assistant"]
    assert "teapot" in read["read"][0][1] and "remembered" in read["read"][1][1]
    # catui's own reader still finds it where catui wrote it
    import os

    import catui
    os.environ["CATUI_HOME"], saved = str(tmp_path / "catui-home"), os.environ.get("CATUI_HOME")
    try:
        assert [s.session_id for s in catui.list_sessions(directory=str(tmp_path / "work"))] == [read["sessionId"]]
    finally:
        os.environ["CATUI_HOME"] = saved or ""


def test_an_unknown_model_ends_in_claude_codes_api_error_result(release: str, loopback: ServerFactory,
                                                                tmp_path: Path) -> None:
    server = loopback({"turns": [{"repeat": True,
                                  "error": {"status": 404, "type": "not_found_error", "message": "model: claude-nope"}}]})
    run = run_case(release, """
try { await collect(sdk.query({ prompt: "hi", options: { ...base } })); } catch (error) { emit({ thrown: String(error) }); }
""", tmp_path, server, model="claude-nope")
    result = run.result()
    assert result["subtype"] == "success" and result["is_error"] is True
    assert result["api_error_status"] == 404 and result["terminal_reason"] == "api_error"
    assert result["result"].startswith("API Error") and "model: claude-nope" in result["result"]


def test_forward_subagent_text_is_asked_for_in_initialize(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"first_user_contains": "CHILD-TASK"}, "repeat": True,
         "content": [{"type": "text", "text": "child words"}]},
        {"match": {"last_is_tool_result": False}, "repeat": True, "content": [
            {"type": "tool_use", "id": "toolu_agent", "name": "Agent",
             "input": {"description": "talk", "prompt": "CHILD-TASK: say something", "subagent_type": "general-purpose"}}]},
        {"match": {"last_is_tool_result": True}, "repeat": True, "content": [{"type": "text", "text": "parent done"}]},
    ]})
    run = run_case("current", """
for (const forwardSubagentText of [false, true]) {
  const messages = [];
  for await (const m of sdk.query({ prompt: "Delegate", options: { ...base, forwardSubagentText,
      allowedTools: ["Agent"] } })) messages.push(m);
  const child = messages.filter((m) => m.parent_tool_use_id === "toolu_agent");
  emit({ forwardSubagentText, child: child.map((m) => [m.type, JSON.stringify(m.message?.content ?? "")]) });
}
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    by_flag = {line["forwardSubagentText"]: line["child"] for line in run.lines
               if isinstance(line, dict) and "child" in line}
    assert any(kind == "user" and "CHILD-TASK" in text for kind, text in by_flag[False])  # the prompt, always
    assert not any(kind == "assistant" and "child words" in text for kind, text in by_flag[False])
    assert any(kind == "assistant" and "child words" in text for kind, text in by_flag[True])


def test_an_external_mcp_server_sent_in_initialize(loopback: ServerFactory, tmp_path: Path) -> None:
    """The current SDK sends external servers in ``initialize`` with --await-initialize."""
    import sys

    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_echo", "name": "mcp__tools__echo", "input": {"text": "hi"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "echoed"}]},
    ]})
    root = Path(__file__).resolve().parents[1]
    config = {"command": sys.executable, "args": ["-m", "tests.support.mcp_servers.tools_server"],
              "env": {"PYTHONPATH": str(root)}}
    run = run_case("current", f"""
await collect(sdk.query({{ prompt: "Echo", options: {{ ...base, mcpServers: {{ tools: {json.dumps(config)} }},
  allowedTools: ["mcp__tools__echo"] }} }}));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert {"name": "tools", "status": "connected"} in run.init()["mcp_servers"]
    (answer,) = tool_results(server.bodies()[-1])
    assert "hi" in result_text(answer) and not answer.get("is_error")


def test_can_use_tool_denies_a_call_and_agents_come_through_initialize(release: str, loopback: ServerFactory,
                                                                        tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"first_user_contains": "REVIEW"}, "content": [{"type": "text", "text": "looks fine"}]},
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_rm", "name": "Bash", "input": {"command": "rm -rf build"}},
            {"type": "tool_use", "id": "toolu_review", "name": "Agent",
             "input": {"description": "review", "prompt": "REVIEW the change", "subagent_type": "reviewer"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "all done"}]},
    ]})
    run = run_case(release, """
const canUseTool = async (toolName, input, { toolUseID }) => {
  emit({ asked: toolName, toolUseID });
  return toolName === "Bash" ? { behavior: "deny", message: "no deleting here" } : { behavior: "allow", updatedInput: input };
};
const agents = { reviewer: { description: "Reviews changes.", prompt: "You review code.", tools: ["Read"] } };
await collect(sdk.query({ prompt: "Clean and review", options: { ...base, canUseTool, agents } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert {"asked": "Bash", "toolUseID": "toolu_rm"} in run.lines
    assert "reviewer" in run.init()["agents"]
    results = {block["tool_use_id"]: block for block in tool_results(server.bodies()[-1])}
    assert results["toolu_rm"].get("is_error") is True and "no deleting here" in result_text(results["toolu_rm"])
    assert "looks fine" in result_text(results["toolu_review"])
    assert run.result()["result"] == "all done"


def test_output_format_comes_back_as_structured_output(release: str, loopback: ServerFactory,
                                                       tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_out", "name": "StructuredOutput", "input": {"files": 3}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "reported"}]},
    ]})
    run = run_case(release, """
const outputFormat = { type: "json_schema", schema: { type: "object", properties: { files: { type: "integer" } },
  required: ["files"] } };
await collect(sdk.query({ prompt: "Count the files", options: { ...base, outputFormat } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert run.result()["structured_output"] == {"files": 3} and run.result()["is_error"] is False


def test_resume_with_fork_and_resume_session_at(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"last_user_contains": "first"}, "content": [{"type": "text", "text": "answer one"}]},
        {"match": {"last_user_contains": "second"}, "content": [{"type": "text", "text": "answer two"}]},
        {"match": {"last_user_contains": "third"}, "content": [{"type": "text", "text": "answer three"}]},
    ]})
    run = run_case(release, """
const one = await collect(sdk.query({ prompt: "first question", options: { ...base } }));
const sessionId = one.find((m) => m.type === "result").session_id;
await collect(sdk.query({ prompt: "second question", options: { ...base, resume: sessionId } }));
const stored = await sdk.getSessionMessages(sessionId, { dir: base.cwd });
const cut = stored.find((m) => m.type === "assistant" && JSON.stringify(m.message).includes("answer one")).uuid;
const forked = await collect(sdk.query({ prompt: "third question",
  options: { ...base, resume: sessionId, forkSession: true, resumeSessionAt: cut } }));
emit({ sessionId, forkedId: forked.find((m) => m.type === "result").session_id });
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    ids = next(line for line in run.lines if isinstance(line, dict) and "forkedId" in line)
    assert ids["forkedId"] != ids["sessionId"]
    sent = json.dumps(server.bodies()[-1]["messages"])
    assert "answer one" in sent and "second question" not in sent and "third question" in sent


def test_sub_agent_transcripts_and_a_rename_are_shared_with_catui(release: str, loopback: ServerFactory,
                                                                  tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"first_user_contains": "CHILD-TASK"}, "content": [{"type": "text", "text": "child done"}]},
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "id": "toolu_agent", "name": "Agent",
             "input": {"description": "look", "prompt": "CHILD-TASK: look", "subagent_type": "general-purpose"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "parent done"}]},
    ]})
    run = run_case(release, """
const messages = await collect(sdk.query({ prompt: "Delegate", options: { ...base, allowedTools: ["Agent"] } }));
const sessionId = messages.find((m) => m.type === "result").session_id;
const agents = await sdk.listSubagents(sessionId, { dir: base.cwd });
const child = agents.length ? await sdk.getSubagentMessages(sessionId, agents[0], { dir: base.cwd }) : [];
await sdk.renameSession(sessionId, "Renamed by the SDK", { dir: base.cwd });
emit({ sessionId, subagents: agents, child: child.map((m) => JSON.stringify(m.message)) });
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    seen = next(line for line in run.lines if isinstance(line, dict) and "subagents" in line)
    assert len(seen["subagents"]) == 1 and any("CHILD-TASK" in text for text in seen["child"])
    import os

    import catui

    saved = os.environ.get("CATUI_HOME")
    os.environ["CATUI_HOME"] = str(tmp_path / "catui-home")
    try:
        info = catui.get_session_info(seen["sessionId"], directory=str(tmp_path / "work"))
    finally:
        os.environ["CATUI_HOME"] = saved or ""
    assert info is not None and info.custom_title == "Renamed by the SDK"
