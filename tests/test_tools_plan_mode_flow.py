"""Plan mode end to end: the plan file, the reminder, ExitPlanMode's approval through can_use_tool and print mode.

Runs in process through the SDK on the scripted provider, with a fixed session id so
the test knows the plan file (``<CATUI_HOME>/plans/<slug>.md``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

import catui
from catui.messages import result_text
from catui.permissions.context import PermissionContext, PermissionRequest
from catui.permissions.decide import decide
from catui.tools.plan_file import plan_file_for_session, plan_slug
from catui.tools.plan_mode import ExitPlanModeTool
from tests.support.sdk_backend import isolated_sdk_home  # noqa: F401 - an autouse fixture

GUARD_S = 20  # a broken scenario fails here instead of hanging the suite (not a timing assertion)
SESSION_ID = "plan-flow-session"
REMINDER = "<system-reminder>"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def options(tmp_path: Path, project: Path, turns: list[dict[str, Any]], **fields: Any) -> catui.CatuiOptions:
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return catui.CatuiOptions(model=f"scripted:{script}", cwd=str(project), session_id=SESSION_ID,
                              setting_sources=[], write_transcript=False, **fields)


async def collect(prompt: str, opts: catui.CatuiOptions) -> list[Any]:
    async def run() -> list[Any]:
        return [m async for m in catui.query(prompt, opts)]

    return await asyncio.wait_for(run(), GUARD_S)


def tool_results(messages: list[Any]) -> dict[str, catui.ToolResultBlock]:
    found: dict[str, catui.ToolResultBlock] = {}
    for message in messages:
        if isinstance(message, catui.UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, catui.ToolResultBlock):
                    found[block.tool_use_id] = block
    return found


def reminders(messages: list[Any]) -> list[str]:
    """The plan-mode reminders the model was sent (text blocks of user messages)."""
    texts: list[str] = []
    for message in messages:
        if not isinstance(message, catui.UserMessage):
            continue
        blocks = message.content if isinstance(message.content, list) else [catui.TextBlock(message.content)]
        texts.extend(b.text for b in blocks if isinstance(b, catui.TextBlock) and REMINDER in b.text)
    return texts


def text_of(block: catui.ToolResultBlock) -> str:
    return result_text(block.content) if block.content is not None else ""


def tool_use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


# ------------------------------------------------------------------ the tools' schema and the plan file


def test_exit_plan_mode_schema_is_claude_codes() -> None:
    schema = ExitPlanModeTool().input_schema()
    item = schema["properties"]["allowedPrompts"]["items"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False and "required" not in schema
    assert list(schema["properties"]) == ["allowedPrompts"]
    assert schema["properties"]["allowedPrompts"]["type"] == "array"
    assert item["required"] == ["tool", "prompt"] and item["additionalProperties"] is False
    assert {k: v for k, v in item["properties"]["tool"].items() if k != "description"} == {
        "type": "string", "enum": ["Bash"]}
    assert item["properties"]["prompt"]["type"] == "string"


def test_plan_file_is_per_session_under_the_catui_home(tmp_path: Path) -> None:
    path = plan_file_for_session(SESSION_ID)
    assert path.parent == tmp_path / "catui-home" / "plans" and path.suffix == ".md"
    assert path == plan_file_for_session(SESSION_ID) and path.stem == plan_slug(SESSION_ID)
    assert len(path.stem.split("-")) == 3 and plan_slug("another-session") != path.stem


def test_plan_mode_writes_only_the_plan_file(tmp_path: Path) -> None:
    plan_file = tmp_path / "home" / "plans" / "a-b-c.md"
    project = tmp_path / "project"
    base = PermissionContext(mode="plan", working_directories=(project,)).with_plan_file(plan_file)

    def call(tool: str, path: Path, **extra: Any) -> str:
        request = PermissionRequest(tool, {"file_path": str(path), **extra}, file_path=path, is_edit=True)
        return decide(base, request).behavior

    assert call("Write", plan_file) == "allow" and call("Edit", plan_file) == "allow"
    assert call("Write", tmp_path / "home" / "plans" / "other.md") == "deny"
    assert call("Write", project / "a.py") == "deny" and call("NotebookEdit", plan_file) == "deny"
    bash = PermissionRequest("Bash", {"command": f"echo x > {plan_file}"}, subject=f"echo x > {plan_file}")
    assert decide(base, bash).behavior == "deny"
    denied = base.with_rules(catui_rule("Write", "deny"))
    assert decide(denied, PermissionRequest("Write", {}, file_path=plan_file, is_edit=True)).behavior == "deny"
    # Outside plan mode the plan file is an ordinary file outside the working directories.
    assert decide(base.with_mode("default"), PermissionRequest("Write", {}, file_path=plan_file,
                                                                is_edit=True)).behavior == "ask"


def catui_rule(tool: str, behavior: str) -> Any:
    from catui.permissions.context import PermissionRule

    return PermissionRule(tool, None, behavior, "session")  # type: ignore[arg-type]


# ------------------------------------------------------------------ the whole flow through can_use_tool


@pytest.mark.parametrize(
    ("start_mode", "edit_after"),
    [("default", "asked"), ("acceptEdits", "allowed"), ("bypassPermissions", "allowed")],
)
async def test_plan_then_approve_through_can_use_tool(
    tmp_path: Path, project: Path, start_mode: str, edit_after: str
) -> None:
    plan_file = plan_file_for_session(SESSION_ID)
    impl = project / "impl.txt"
    turns = [
        {"match": {"last_is_tool_result": False}, "content": [tool_use("t_enter", "EnterPlanMode", {})]},
        {"match": {"last_user_contains": "Entered plan mode"}, "content": [
            tool_use("t_plan", "Write", {"file_path": str(plan_file), "content": "# Plan\n1. write impl.txt\n"}),
            tool_use("t_early", "Write", {"file_path": str(impl), "content": "too early"}),
        ]},
        {"match": {"last_user_contains": "plan mode is on"}, "content": [
            tool_use("t_exit", "ExitPlanMode", {"allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}]})]},
        {"match": {"last_user_contains": "approved the plan"}, "content": [
            tool_use("t_impl", "Write", {"file_path": str(impl), "content": "done"})]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "finished"}]},
    ]
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, tool_input))
        if name == "ExitPlanMode":
            return catui.PermissionResultAllow(updated_input=tool_input)  # echoing the shown input is fine
        return catui.PermissionResultDeny(message="not now")

    opts = options(tmp_path, project, turns, permission_mode=start_mode, can_use_tool=can_use_tool)
    messages = await collect("build it", opts)
    results = tool_results(messages)

    assert not results["t_enter"].is_error and str(plan_file) in text_of(results["t_enter"])
    assert not results["t_plan"].is_error and plan_file.read_text() == "# Plan\n1. write impl.txt\n"
    assert results["t_early"].is_error and "plan mode is on" in text_of(results["t_early"])
    # the reminder went out once, with the tool round that entered plan mode
    sent = reminders(messages)
    assert len(sent) == 1 and str(plan_file) in sent[0]

    exit_asks = [i for n, i in asked if n == "ExitPlanMode"]
    assert exit_asks == [{"allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}],
                          "plan": "# Plan\n1. write impl.txt\n", "planFilePath": str(plan_file)}]
    assert not results["t_exit"].is_error and "1. write impl.txt" in text_of(results["t_exit"])
    assert "run tests" in text_of(results["t_exit"])

    write_asks = [i for n, i in asked if n == "Write"]
    if edit_after == "allowed":
        assert not results["t_impl"].is_error and impl.read_text() == "done" and write_asks == []
    else:  # back in default mode: the edit is asked for again (and this callback says no)
        assert results["t_impl"].is_error and not impl.exists() and write_asks == [{"file_path": str(impl),
                                                                                     "content": "done"}]
    result = messages[-1]
    assert isinstance(result, catui.ResultMessage) and result.result == "finished"
    denied = [d["tool_use_id"] for d in result.permission_denials or []]
    assert denied == (["t_early"] if edit_after == "allowed" else ["t_early", "t_impl"])


async def test_exit_plan_mode_without_a_plan_file_says_where_to_write_it(tmp_path: Path, project: Path) -> None:
    plan_file = plan_file_for_session(SESSION_ID)
    turns = [
        # started in plan mode: the reminder rides on the prompt itself (the SDK does not echo prompts)
        {"match": {"last_is_tool_result": False, "last_user_contains": [REMINDER, str(plan_file)]},
         "content": [tool_use("t_exit", "ExitPlanMode", {})]},
        {"match": {"last_user_contains": "No plan to present"}, "content": [
            tool_use("t_write", "Write", {"file_path": str(project / "x.txt"), "content": "x"})]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "finished"}]},
    ]
    asked: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        return catui.PermissionResultAllow()

    messages = await collect("go", options(tmp_path, project, turns, permission_mode="plan",
                                           can_use_tool=can_use_tool))
    results = tool_results(messages)
    message = text_of(results["t_exit"])
    assert results["t_exit"].is_error and str(plan_file) in message and "does not exist" in message
    assert "Write" in message
    assert asked == []  # nothing to approve, so nobody was asked
    assert results["t_write"].is_error and "plan mode is on" in text_of(results["t_write"])  # still in plan mode
    assert reminders(messages) == []  # once per entry into plan mode: not repeated on later rounds


async def test_print_mode_denies_exit_plan_mode_and_lists_it(tmp_path: Path, project: Path) -> None:
    plan_file = plan_file_for_session(SESSION_ID)
    plan_file.parent.mkdir(parents=True)
    plan_file.write_text("1. change things\n", encoding="utf-8")
    turns = [
        {"match": {"last_is_tool_result": False}, "content": [tool_use("t_exit", "ExitPlanMode", {})]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "finished"}]},
    ]
    messages = await collect("go", options(tmp_path, project, turns, permission_mode="plan"))
    results = tool_results(messages)
    assert results["t_exit"].is_error and "plan mode stays on" in text_of(results["t_exit"])
    result = messages[-1]
    assert isinstance(result, catui.ResultMessage)
    assert [(d["tool_name"], d["tool_use_id"]) for d in result.permission_denials or []] == [
        ("ExitPlanMode", "t_exit")]


async def test_legacy_plan_argument_is_refused(tmp_path: Path, project: Path) -> None:
    turns = [
        {"match": {"last_is_tool_result": False}, "content": [tool_use("t_exit", "ExitPlanMode", {"plan": "p"})]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "finished"}]},
    ]
    messages = await collect("go", options(tmp_path, project, turns, permission_mode="plan"))
    message = text_of(tool_results(messages)["t_exit"])
    assert "InputValidationError" in message and "`plan`" in message


async def test_sdk_set_permission_mode_plan_then_approval_returns_to_the_previous_mode(
    tmp_path: Path, project: Path
) -> None:
    plan_file = plan_file_for_session(SESSION_ID)
    impl = project / "impl.txt"
    turns = [
        {"match": {"last_user_contains": "first"}, "content": [{"type": "text", "text": "ok"}]},
        # the reminder rides on the next prompt after set_permission_mode("plan")
        {"match": {"last_user_contains": ["plan it", REMINDER, str(plan_file)], "last_is_tool_result": False},
         "content": [
            tool_use("t_plan", "Write", {"file_path": str(plan_file), "content": "1. impl\n"})]},
        {"match": {"last_user_contains": "File created successfully"},
         "content": [tool_use("t_exit", "ExitPlanMode", {})]},
        {"match": {"last_user_contains": "approved the plan"}, "content": [
            tool_use("t_impl", "Write", {"file_path": str(impl), "content": "done"})]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "finished"}]},
    ]

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        return catui.PermissionResultAllow() if name == "ExitPlanMode" else catui.PermissionResultDeny(message="no")

    opts = options(tmp_path, project, turns, permission_mode="acceptEdits", can_use_tool=can_use_tool)
    async with catui.CatuiClient(opts) as client:
        await client.query("first")
        first = [m async for m in client.receive_response()]
        await client.set_permission_mode("plan")
        await client.query("plan it")
        second = await asyncio.wait_for(_drain(client), GUARD_S)
    assert reminders(first) == [] and reminders(second) == []
    results = tool_results(second)
    assert not results["t_exit"].is_error
    assert not results["t_impl"].is_error and impl.read_text() == "done"  # back in acceptEdits


async def _drain(client: catui.CatuiClient) -> list[Any]:
    return [m async for m in client.receive_response()]


# ------------------------------------------------------------------ the terminal side


async def test_terminal_shows_the_plan_and_later_the_plans_allowed_prompts(tmp_path: Path) -> None:
    import io
    from types import SimpleNamespace

    from catui.cli.tui.ask import QuestionAsker
    from catui.cli.tui.permission import PermissionPrompter
    from catui.cli.tui.screen import Screen
    from catui.tools.base import ToolContext

    out = io.StringIO()
    screen = Screen(out, tty=False, color=False)

    async def read_line(*_: Any) -> str | None:
        return "1"

    question = {"question": "Approve this plan?", "header": "Plan", "multiSelect": False,
                "options": [{"label": "Yes"}, {"label": "No"}], "plan": "# Plan\n1. PLAN-LINE\n",
                "planFilePath": "/h/plans/a-b-c.md", "allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}]}
    answers = await QuestionAsker(screen, read_line)([question])
    assert answers == {"Approve this plan?": "Yes"}
    shown = out.getvalue()
    assert "Plan (/h/plans/a-b-c.md):" in shown and "  1. PLAN-LINE" in shown and "run tests (Bash)" in shown
    assert shown.index("PLAN-LINE") < shown.index("Approve this plan?")

    main_ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    main_ctx.plan.allowed_prompts = [{"tool": "Bash", "prompt": "run tests"}]
    prompter = PermissionPrompter(screen, keys=None, editor=None, read_plain_line=lambda: read_line(),
                                  on_interrupt=lambda: None, main_context=lambda: main_ctx)
    request = PermissionRequest(tool_name="Bash", subject="pytest -q")
    decision = await prompter(SimpleNamespace(name="Bash"), {"command": "pytest -q"}, request,  # type: ignore[arg-type]
                              main_ctx)
    assert decision.behavior == "allow"
    assert "The approved plan asked to run commands that: run tests" in out.getvalue()
