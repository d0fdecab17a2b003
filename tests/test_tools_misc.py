"""TodoWrite, WebFetch (against a 127.0.0.1 server), AskUserQuestion, plan mode, the tool registry and schemas."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from catui.messages import result_text
from catui.tools.ask_user_question import AskUserQuestionTool
from catui.tools.ask_user_question_input import AskUserQuestionInput
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult
from catui.tools.html_markdown import html_to_markdown
from catui.tools.plan_mode import APPROVE_LABEL, EnterPlanModeTool, ExitPlanModeTool
from catui.tools.plan_mode_input import EnterPlanModeInput, ExitPlanModeInput
from catui.tools.registry import builtin_tools, find_tool, tool_names
from catui.tools.todo_write import TodoWriteTool
from catui.tools.todo_write_input import TodoWriteInput
from catui.tools.web_fetch import WebFetchTool
from catui.tools.web_fetch_input import WebFetchInput


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, project_root=tmp_path)


def text(result: ToolResult) -> str:
    return result_text(result.content)


# ------------------------------------------------------------------ registry and schemas

EXPECTED = [
    "Bash",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "Glob",
    "Grep",
    "NotebookEdit",
    "Read",
    "TaskOutput",
    "TaskStop",
    "TodoWrite",
    "WebFetch",
    "Write",
]


def test_builtin_tools_sorted_and_ask_only_interactive() -> None:
    assert tool_names(builtin_tools()) == EXPECTED
    assert tool_names(builtin_tools(interactive=True)) == sorted([*EXPECTED, "AskUserQuestion"])


def test_find_tool_by_name_alias_and_extra() -> None:
    class AgentInput(ToolInput):
        prompt: str

    class FakeAgent(Tool):
        name = "Agent"
        input_model = AgentInput
        aliases = ("Task",)

        @property
        def description(self) -> str:
            return "agent"

        async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
            return ToolResult("")

    tools = builtin_tools(extra=[FakeAgent()])
    assert tool_names(tools)[0] == "Agent"
    found = find_tool(tools, "Task")
    assert found is not None and found.name == "Agent"
    stop = find_tool(tools, "KillShell")
    assert stop is not None and stop.name == "TaskStop"
    assert find_tool(tools, "Nope") is None


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


@pytest.mark.parametrize("tool", builtin_tools(interactive=True), ids=lambda t: t.name)
def test_every_schema_is_clean(tool: Tool) -> None:
    schema = tool.to_api()["input_schema"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert "$defs" not in schema and "$ref" not in json.dumps(schema)
    for node in _walk(schema):
        assert "title" not in node
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is False  # records are closed; maps give a value schema
        assert "anyOf" not in node
    for name, prop in schema["properties"].items():
        assert prop.get("description"), f"{tool.name}.{name} has no description"
    assert len(tool.description) > 80


def test_specific_schema_shapes() -> None:
    tools = {t.name: t.input_schema() for t in builtin_tools(interactive=True)}
    assert tools["Edit"]["required"] == ["file_path", "old_string", "new_string"]
    assert tools["Edit"]["properties"]["replace_all"]["default"] is False
    todo_item = tools["TodoWrite"]["properties"]["todos"]["items"]
    assert todo_item["required"] == ["content", "status", "activeForm"]
    assert todo_item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    question = tools["AskUserQuestion"]["properties"]["questions"]["items"]
    assert question["required"] == ["question", "header", "options", "multiSelect"]
    assert question["properties"]["multiSelect"]["default"] is False
    assert (
        question["properties"]["options"]["minItems"] == 2
        and question["properties"]["options"]["maxItems"] == 4
    )
    assert tools["NotebookEdit"]["properties"]["edit_mode"]["enum"] == ["replace", "insert", "delete"]
    assert tools["EnterPlanMode"]["properties"] == {}
    exit_schema = tools["ExitPlanMode"]
    assert "required" not in exit_schema and list(exit_schema["properties"]) == ["allowedPrompts"]
    assert tools["WebFetch"]["required"] == ["url", "prompt"]
    assert tools["TaskStop"]["properties"].keys() == {"task_id", "shell_id"}


# ------------------------------------------------------------------ TodoWrite


async def test_todo_write_stores_list(ctx: ToolContext) -> None:
    todos = [
        {"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"},
        {"content": "Fix bug", "status": "pending", "activeForm": "Fixing bug"},
    ]
    result = await TodoWriteTool().call(TodoWriteInput.model_validate({"todos": todos}), ctx)
    assert not result.is_error and ctx.todos == todos
    assert "1 pending" in text(result) and "1 in progress" in text(result)
    with pytest.raises(Exception, match="status"):
        TodoWriteInput.model_validate({"todos": [{"content": "x", "status": "done", "activeForm": "x"}]})


# ------------------------------------------------------------------ WebFetch


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE),
            "/plain": (200, "text/plain", "just text"),
            "/missing": (404, "text/plain", "nope"),
        }
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.end_headers()
            return
        if self.path == "/away":
            self.send_response(301)
            self.send_header("Location", "http://example.invalid/elsewhere")
            self.end_headers()
            return
        status, ctype, body = routes.get(self.path, (404, "text/plain", "unknown"))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


PAGE = """<!doctype html><html><head><title>Docs</title><style>body{}</style><script>alert(1)</script></head>
<body><h1>Install</h1><p>Run the <strong>installer</strong> and read <a href="/guide">the guide</a>.</p>
<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>
<pre><code>pip install catui
catui --help</code></pre><p>Use <code>catui demo</code>.</p></body></html>"""


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


async def fetch(ctx: ToolContext, url: str) -> ToolResult:
    return await WebFetchTool().call(WebFetchInput(url=url, prompt="How do I install it?"), ctx)


async def test_web_fetch_converts_html(ctx: ToolContext, server: str) -> None:
    result = await fetch(ctx, f"{server}/page")
    body = text(result)
    assert not result.is_error
    assert "How do I install it?" in body and "no second model" in body
    assert "# Install" in body and "**installer**" in body and f"[the guide]({server}/guide)" in body
    assert "- one\n- two" in body and "1. first\n2. second" in body
    assert "```\npip install catui\ncatui --help\n```" in body and "`catui demo`" in body
    assert "alert" not in body and "body{}" not in body


async def test_web_fetch_redirects_and_errors(ctx: ToolContext, server: str) -> None:
    moved = await fetch(ctx, f"{server}/moved")
    assert not moved.is_error and "# Install" in text(moved)
    away = await fetch(ctx, f"{server}/away")
    assert "redirects to another host" in text(away) and "http://example.invalid/elsewhere" in text(away)
    missing = await fetch(ctx, f"{server}/missing")
    assert missing.is_error and "404" in text(missing)
    plain = await fetch(ctx, f"{server}/plain")
    assert "just text" in text(plain)
    invalid = await fetch(ctx, "ftp://x")
    assert invalid.is_error and "http" in text(invalid)


async def test_web_fetch_unreachable(ctx: ToolContext) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens here now
    result = await fetch(ctx, f"http://127.0.0.1:{port}/")
    assert result.is_error and "Could not fetch" in text(result)


def test_web_fetch_permission_subject(ctx: ToolContext) -> None:
    request = WebFetchTool().permission_request(
        WebFetchInput(url="https://docs.example.com/a?b", prompt="p"), ctx
    )
    assert request.subject == "domain:docs.example.com" and request.read_only


def test_html_to_markdown_nested_lists_and_title() -> None:
    md = html_to_markdown(
        "<html><head><title>T</title></head><body><ul><li>a<ul><li>b</li></ul></li></ul></body></html>"
    )
    assert md.startswith("# T") and "- a" in md and "  - b" in md


# ------------------------------------------------------------------ AskUserQuestion and plan mode

QUESTION = {
    "question": "Which database?",
    "header": "DB",
    "options": [
        {"label": "SQLite", "description": "embedded"},
        {"label": "Postgres", "description": "server"},
    ],
}


async def test_ask_user_question(ctx: ToolContext) -> None:
    seen: list[Any] = []

    async def ask(questions: list[dict[str, Any]]) -> dict[str, str]:
        seen.append(questions)
        return {questions[0]["question"]: "SQLite"}

    args = AskUserQuestionInput.model_validate({"questions": [QUESTION]})
    refused = await AskUserQuestionTool().call(args, ctx)
    assert refused.is_error and "not interactive" in text(refused)

    ctx.interactive = True
    ctx.ask_user = ask
    result = await AskUserQuestionTool().call(args, ctx)
    assert not result.is_error and '"Which database?"="SQLite"' in text(result)
    assert seen[0][0]["multiSelect"] is False
    with pytest.raises(Exception, match="at least 2"):
        AskUserQuestionInput.model_validate({"questions": [{**QUESTION, "options": QUESTION["options"][:1]}]})


async def test_plan_mode_enter_and_exit(ctx: ToolContext, tmp_path: Path) -> None:
    plan_file = tmp_path / "plans" / "keen-stirring-sunbeam.md"
    ctx.permissions = ctx.permissions.with_plan_file(plan_file)
    outside = await ExitPlanModeTool().call(ExitPlanModeInput(), ctx)
    assert outside.is_error and "not in plan mode" in text(outside)

    ctx.permissions = ctx.permissions.with_mode("acceptEdits")
    entered = await EnterPlanModeTool().call(EnterPlanModeInput(), ctx)
    assert entered.data == {"permission_mode": "plan", "planFilePath": str(plan_file)}
    assert str(plan_file) in text(entered) and "ExitPlanMode" in text(entered)
    ctx.permissions = ctx.permissions.with_mode("plan")  # what the session does with that data

    missing = await ExitPlanModeTool().call(ExitPlanModeInput(), ctx)
    assert missing.is_error and str(plan_file) in text(missing) and "does not exist" in text(missing)
    plan_file.parent.mkdir(parents=True)
    plan_file.write_text("  \n", encoding="utf-8")
    empty = await ExitPlanModeTool().call(ExitPlanModeInput(), ctx)
    assert empty.is_error and "is empty" in text(empty) and "Write" in text(empty)
    plan_file.write_text("1. do it\n", encoding="utf-8")

    printed = await ExitPlanModeTool().call(ExitPlanModeInput(), ctx)
    # approval returns to the mode plan mode was entered from
    assert printed.data["permission_mode"] == "acceptEdits" and printed.data["plan"] == "1. do it\n"
    assert printed.data["filePath"] == str(plan_file) and "1. do it" in text(printed)

    answers = iter([APPROVE_LABEL, "No, keep planning"])
    asked: list[dict[str, Any]] = []

    async def ask(questions: list[dict[str, Any]]) -> dict[str, str]:
        asked.extend(questions)
        return {questions[0]["question"]: next(answers)}

    ctx.interactive = True
    ctx.ask_user = ask
    args = ExitPlanModeInput.model_validate({"allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}]})
    approved = await ExitPlanModeTool().call(args, ctx)
    assert not approved.is_error and approved.data["permission_mode"] == "default"
    assert asked[0]["plan"] == "1. do it\n" and asked[0]["allowedPrompts"] == [{"tool": "Bash", "prompt": "run tests"}]
    assert ctx.plan.allowed_prompts == [{"tool": "Bash", "prompt": "run tests"}]
    rejected = await ExitPlanModeTool().call(ExitPlanModeInput(), ctx)
    assert rejected.is_error and "permission_mode" not in rejected.data and rejected.data["approved"] is False


async def test_ask_user_question_takes_answers_the_host_already_collected(tmp_path: Path) -> None:
    from catui.tools.ask_user_question import AskUserQuestionTool
    from catui.tools.ask_user_question_input import AskUserQuestionInput

    tool = AskUserQuestionTool()
    schema = tool.input_schema()
    assert {"questions", "answers", "annotations", "metadata"} <= set(schema["properties"])
    assert schema["required"] == ["questions"]
    option = schema["properties"]["questions"]["items"]["properties"]["options"]["items"]
    assert "markdown" in option["properties"] and option["required"] == ["label", "description"]
    args = AskUserQuestionInput.model_validate({
        "questions": [{"question": "Which?", "header": "Pick", "multiSelect": False,
                       "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]}],
        "answers": {"Which?": "B"},
    })
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)  # not interactive: nobody to ask
    result = await tool.call(args, ctx)
    assert not result.is_error and result.data["answers"] == {"Which?": "B"}
