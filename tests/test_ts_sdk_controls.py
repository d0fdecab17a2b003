"""The TypeScript Agent SDK's ``Query`` control methods against the real ``catui`` CLI: what each resolves
with is what the SDK's types promise (``rewindFiles``' RewindFilesResult and its ``dryRun``,
``accountInfo()``, ``setPermissionMode``'s mode in effect, ``backgroundTasks(toolUseId)``).

Each case is a small ES module run under node with the SDK releases of tests/support/ts_sdk.py, on the
loopback Anthropic server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.ts_sdk import ServerFactory, loopback, release, run_case

__all__ = ["loopback", "release"]  # fixtures used by name


# A streamed conversation whose prompts are sent one at a time: ``send(text)`` resolves with that prompt's
# messages up to its result, so a case can call a control method between prompts.
CONVERSATION = """
const inbox = [];
let wake = null;
async function* prompts() {
  while (true) {
    while (inbox.length === 0) await new Promise((resolve) => { wake = resolve; });
    const next = inbox.shift();
    if (next === null) return;
    yield { type: "user", message: { role: "user", content: next }, parent_tool_use_id: null };
  }
}
const push = (value) => { inbox.push(value); if (wake) { const w = wake; wake = null; w(); } };
const startConversation = (options) => {
  const q = sdk.query({ prompt: prompts(), options });
  const iterator = q[Symbol.asyncIterator]();
  const send = async (text) => {
    push(text);
    const out = [];
    while (true) {
      const { value, done } = await iterator.next();
      if (done) return out;
      out.push(value);
      if (value.type === "result") return out;
    }
  };
  const end = async () => { push(null); while (!(await iterator.next()).done) { } };
  return { q, send, end };
};
"""


def emitted(lines: list[Any], key: str) -> Any:
    """The value of the first ``{key: value}`` line a case emitted."""
    return next(line[key] for line in lines if isinstance(line, dict) and key in line)


def test_rewind_files_dry_run_previews_and_changes_nothing(release: str, loopback: ServerFactory,
                                                           tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "kept.txt").write_text("one\ntwo\nthree\n")
    server = loopback({"turns": [
        {"match": {"last_user_contains": "EDIT"}, "content": [
            {"type": "tool_use", "name": "Read", "input": {"file_path": str(work / "kept.txt")}},  # Write needs it
            {"type": "tool_use", "name": "Write", "input": {"file_path": str(work / "kept.txt"),
                                                            "content": "one\nTWO\nthree\nfour\n"}},
            {"type": "tool_use", "name": "Write", "input": {"file_path": str(work / "new.txt"),
                                                            "content": "made\n"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]})
    run = run_case(release, CONVERSATION + """
const { q, send, end } = startConversation({ ...base, permissionMode: "bypassPermissions",
  allowDangerouslySkipPermissions: true, enableFileCheckpointing: true,
  extraArgs: { "replay-user-messages": null } });
const messages = await send("EDIT the files");
const prompt = messages.find((m) => m.type === "user" && JSON.stringify(m.message).includes("EDIT the files"));
emit({ preview: await q.rewindFiles(prompt.uuid, { dryRun: true }) });
emit({ unknown: await q.rewindFiles("not-a-prompt", { dryRun: true }) });
emit({ rewound: await q.rewindFiles(prompt.uuid) });
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    preview = emitted(run.lines, "preview")
    assert preview["canRewind"] is True
    assert sorted(preview["filesChanged"]) == [str(work / "kept.txt"), str(work / "new.txt")]
    # the changes the rewind undoes: TWO and four and made added, two removed
    assert (preview["insertions"], preview["deletions"]) == (3, 1)
    unknown = emitted(run.lines, "unknown")
    assert unknown["canRewind"] is False and "not-a-prompt" in unknown["error"]
    assert emitted(run.lines, "rewound") == preview  # the real rewind did what the preview said
    assert (work / "kept.txt").read_text() == "one\ntwo\nthree\n" and not (work / "new.txt").exists()


def test_a_dry_run_leaves_the_files_as_they_are(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server = loopback({"turns": [
        {"match": {"last_user_contains": "EDIT"}, "content": [
            {"type": "tool_use", "name": "Write", "input": {"file_path": str(work / "new.txt"), "content": "made\n"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "done"}], "repeat": True},
    ]})
    run = run_case(release, CONVERSATION + """
const { q, send, end } = startConversation({ ...base, permissionMode: "bypassPermissions",
  allowDangerouslySkipPermissions: true, enableFileCheckpointing: true,
  extraArgs: { "replay-user-messages": null } });
const messages = await send("EDIT the files");
const prompt = messages.find((m) => m.type === "user" && JSON.stringify(m.message).includes("EDIT the files"));
await q.rewindFiles(prompt.uuid, { dryRun: true });
emit({ after: "dry run" });
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert emitted(run.lines, "after") == "dry run"
    assert (work / "new.txt").read_text() == "made\n"


def test_account_info_names_the_api_key_source(release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "hi"}], "repeat": True}]})
    run = run_case(release, CONVERSATION + """
const { q, send, end } = startConversation({ ...base });
await send("hello");
emit({ account: (await q.accountInfo()) ?? null });
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert emitted(run.lines, "account") == {"apiKeySource": "ANTHROPIC_API_KEY", "apiProvider": "firstParty",
                                             "tokenSource": "none"}


def test_set_permission_mode_resolves_with_the_mode_in_effect(loopback: ServerFactory, tmp_path: Path) -> None:
    # only the current release reads the answer (0.2.92's resolves to undefined whatever the CLI says)
    server = loopback({"turns": [{"content": [{"type": "text", "text": "hi"}], "repeat": True}]})
    run = run_case("current", CONVERSATION + """
const { q, send, end } = startConversation({ ...base });
await send("hello");
emit({ mode: (await q.setPermissionMode("acceptEdits")) ?? null });
try { await q.setPermissionMode("bypassPermissions"); emit({ refused: null }); }
catch (error) { emit({ refused: String(error.message ?? error) }); }
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert emitted(run.lines, "mode") == {"mode": "acceptEdits"}
    assert "Cannot set permission mode to bypassPermissions" in emitted(run.lines, "refused")


def test_background_tasks_with_a_tool_use_id_moves_only_that_agent(loopback: ServerFactory, tmp_path: Path) -> None:
    # The sub-agent waits inside an in-process tool until the case releases it, so both calls find it running
    # in the foreground: the order is set by the tool's promise, not by time.
    server = loopback({"turns": [
        {"match": {"last_user_contains": "start"}, "content": [
            {"type": "tool_use", "id": "toolu_agent", "name": "Agent",
             "input": {"description": "wait at the gate", "prompt": "GATE: wait", "subagent_type": "general-purpose"}}]},
        {"match": {"last_user_contains": "GATE", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "mcp__gate__wait", "input": {}}]},
        {"match": {"last_user_contains": "released"}, "content": [{"type": "text", "text": "sub-agent done"}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "main carries on"}]},
        {"content": [{"type": "text", "text": "noted"}], "repeat": True},
    ]})
    run = run_case("current", CONVERSATION + """
let entered; const inside = new Promise((resolve) => { entered = resolve; });
let release; const released = new Promise((resolve) => { release = resolve; });
const wait = sdk.tool("wait", "Wait at the gate", {}, async () => {
  entered(); await released; return { content: [{ type: "text", text: "released" }] }; });
const gate = sdk.createSdkMcpServer({ name: "gate", version: "1.0.0", tools: [wait] });
const { q, send, end } = startConversation({ ...base, mcpServers: { gate }, allowedTools: ["mcp__gate__wait"] });
const turn = send("start");
await inside;
emit({ other: await q.backgroundTasks("toolu_other") });
emit({ agent: await q.backgroundTasks("toolu_agent") });
const first = await turn;
release();
emit({ firstResult: first.at(-1).result });
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert emitted(run.lines, "other") is False  # no foreground agent of that call: nothing moved
    assert emitted(run.lines, "agent") is True
    # the prompt's turn ended while the agent, now in the background, still waited at the gate
    assert emitted(run.lines, "firstResult") == "main carries on"


def test_set_max_thinking_tokens_changes_the_next_requests_thinking(release: str, loopback: ServerFactory,
                                                                    tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]})
    run = run_case(release, CONVERSATION + """
const { q, send, end } = startConversation({ ...base, maxThinkingTokens: 2048 });
await send("one");
await q.setMaxThinkingTokens(4096);
await send("two");
await q.setMaxThinkingTokens(0);
await send("three");
await q.setMaxThinkingTokens(null);
await send("four");
try { await q.setMaxThinkingTokens(12); emit({ tooSmall: null }); }
catch (error) { emit({ tooSmall: String(error.message ?? error) }); }
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    sent = [body.get("thinking") for body in server.bodies()]
    # 0 turns thinking off (no thinking field at all); null goes back to the session's starting budget
    assert sent == [{"type": "enabled", "budget_tokens": 2048}, {"type": "enabled", "budget_tokens": 4096}, None,
                    {"type": "enabled", "budget_tokens": 2048}]
    assert "below the API's minimum of 1024 tokens" in emitted(run.lines, "tooSmall")


def test_supported_models_and_commands_list_what_set_model_and_prompts_take(
        release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [
        {"match": {"system_contains": "working memory of a coding agent"},
         "content": [{"type": "text", "text": "Summary."}]},
        {"content": [{"type": "text", "text": "ok"}], "repeat": True}]})
    run = run_case(release, CONVERSATION + """
const { q, send, end } = startConversation({ ...base });
await send("one");
const models = await q.supportedModels();
emit({ models });
emit({ commands: await q.supportedCommands() });
await q.setModel(models.find((m) => m.value === "haiku").value);
await send("two");
emit({ compacted: (await send("/compact")).at(-1).result });
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    models = emitted(run.lines, "models")
    assert models[0]["value"] == "claude-sonnet-4-6"  # the session's model first
    by_value = {m["value"]: m for m in models}
    assert by_value["haiku"]["resolvedModel"] == "claude-haiku-4-5-20251001"
    assert {"sonnet", "opus", "haiku"} <= set(by_value)
    assert [body["model"] for body in server.bodies()][:2] == ["claude-sonnet-4-6", "claude-haiku-4-5-20251001"]
    (compact,) = [c for c in emitted(run.lines, "commands") if c["name"] == "compact"]
    assert compact["builtin"] is True and compact["description"]
    assert emitted(run.lines, "compacted").startswith("Compacted:")


def test_read_file_reads_what_the_read_tool_may_read(loopback: ServerFactory, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("héllo notes\n", encoding="utf-8")
    (work / "secret.txt").write_text("s3cret\n")
    (work / "bytes.bin").write_bytes(b"\xff\x00ab")
    (tmp_path / "outside.txt").write_text("not in the working folder\n")
    server = loopback({"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]})
    run = run_case("current", CONVERSATION + f"""
const {{ q, send, end }} = startConversation({{ ...base,
  settings: {{ permissions: {{ deny: ["Read(./secret.txt)"] }} }} }});
await send("one");
emit({{ notes: await q.readFile("notes.txt") }});
emit({{ cut: await q.readFile("notes.txt", {{ maxBytes: 3 }}) }});
emit({{ binary: await q.readFile("bytes.bin", {{ encoding: "base64" }}) }});
emit({{ lossy: await q.readFile("bytes.bin") }});
emit({{ denied: await q.readFile("secret.txt") }});
emit({{ outside: await q.readFile({json.dumps(str(tmp_path / "outside.txt"))}) }});
emit({{ missing: await q.readFile("nope.txt") }});
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert emitted(run.lines, "notes") == {"absPath": str(work / "notes.txt"), "truncated": False,
                                           "contents": "héllo notes\n", "lossy": False}
    cut = emitted(run.lines, "cut")
    assert cut["truncated"] is True and cut["contents"] == "hé" and cut["lossy"] is False
    assert emitted(run.lines, "binary") == {"absPath": str(work / "bytes.bin"), "truncated": False,
                                            "contents": "/wBhYg==", "encoding": "base64"}
    assert emitted(run.lines, "lossy")["lossy"] is True
    # a deny rule, a path outside the working folders and a missing file: the SDK's null
    assert [emitted(run.lines, key) for key in ("denied", "outside", "missing")] == [None, None, None]


def test_seed_read_state_lets_an_edit_skip_the_read_unless_the_file_changed(
        release: str, loopback: ServerFactory, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = work / "notes.txt"
    target.write_text("one\n")
    seen_ms = target.stat().st_mtime_ns // 1_000_000

    def edit(new: str) -> dict[str, Any]:
        return {"type": "tool_use", "name": "Edit",
                "input": {"file_path": str(target), "old_string": "one", "new_string": new}}

    server = loopback({"turns": [
        {"match": {"last_user_contains": "FIRST", "last_is_tool_result": False}, "content": [edit("uno")]},
        {"match": {"last_user_contains": "SECOND", "last_is_tool_result": False}, "content": [edit("eins")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "edited"}], "repeat": True},
    ]})
    run = run_case(release, CONVERSATION + f"""
const {{ q, send, end }} = startConversation({{ ...base, permissionMode: "acceptEdits" }});
await q.seedReadState("notes.txt", {seen_ms - 60_000});  // seen a minute before its last change: skipped
await send("FIRST edit");
await q.seedReadState("notes.txt", {seen_ms});
await send("SECOND edit");
await end();
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    first, second = [block for body in server.bodies() for block in tool_results(body)][-2:]
    assert first.get("is_error") and "has not been read yet" in str(first["content"])
    assert not second.get("is_error")
    assert target.read_text() == "eins\n"


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    content = last.get("content")
    return [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
