"""The SDK's ``compat=`` option (catui.config.compat) against the loopback Anthropic server."""

from __future__ import annotations

from pathlib import Path

import pytest

import catui
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.sdk_backend import collect, isolated_sdk_home  # noqa: F401 - isolated_sdk_home is a fixture


@pytest.mark.usefixtures("isolated_sdk_home")
@pytest.mark.parametrize(("compat", "env", "expected"), [
    ("2.1.332", {}, "2.1.332"), (None, {}, "2.1.92"), ("2.1.92", {"CATUI_COMPAT": "2.1.332"}, "2.1.92"),
])
async def test_compat_option(tmp_path: Path, compat: str | None, env: dict[str, str], expected: str) -> None:
    with AnthropicTestServer({"turns": [{"content": [{"type": "text", "text": "hi"}], "repeat": True}]}) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env={**server.env(), **env},
                                     compat=compat)
        messages = await collect("Hello", options)
        agent = next(t for t in server.bodies()[0]["tools"] if t["name"] == "Agent")
    init = messages[0]
    assert isinstance(init, catui.SystemMessage) and init.data["compat"] == expected
    assert ("effort" in agent["input_schema"]["properties"]) is (expected == "2.1.332")


@pytest.mark.usefixtures("isolated_sdk_home")
async def test_a_bad_compat_option_is_one_clear_error(tmp_path: Path) -> None:
    options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", compat="9.9")
    with pytest.raises(catui.CatuiError, match=r"CatuiOptions.compat='9\.9' is not a known compatibility profile"):
        await collect("Hello", options)


@pytest.mark.usefixtures("isolated_sdk_home")
@pytest.mark.parametrize("compat", ["2.1.332", "2.1.92"])
async def test_a_notification_turns_origin(tmp_path: Path, compat: str) -> None:
    """The result of a turn a background agent's notification started: its kind, and in the current profile
    the producer and the agent run's run_id (as in its task events)."""
    call = {"type": "tool_use", "id": "toolu_a", "name": "Agent", "input": {
        "description": "job", "prompt": "Child one", "subagent_type": "general-purpose", "run_in_background": True}}
    script = {"turns": [
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "noted"}],
         "repeat": True},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": [call]},
        {"match": {"first_user_contains": "Go"}, "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"match": {"first_user_contains": "Child one"}, "content": [{"type": "text", "text": "ok"}], "repeat": True},
    ]}
    with AnthropicTestServer(script) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env=server.env(), compat=compat,
                                     permission_mode="bypassPermissions")
        messages = await collect("Go", options)
    results = [m for m in messages if isinstance(m, catui.ResultMessage)]
    assert [r.result for r in results] == ["parent done", "noted"]
    origin = results[-1].origin
    if compat == "2.1.92":
        assert origin == {"kind": "task-notification"}
        return
    started = next(m for m in messages if isinstance(m, catui.SystemMessage) and m.subtype == "task_started")
    assert origin == {"kind": "task-notification", "producer": "session-task", "runId": started.data["run_id"]}
