"""The SDK's ``compat=`` option (catui.config.compat) against the loopback Anthropic server."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import catui
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import CURRENT, stream_run
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


TIMINGS = ("time_to_request_ms", "ttft_stream_ms", "first_content_frame_ms", "ttft_ms")
CURRENT_KEYS = ("result_index", "subagent_stats", "safety_stops", "queued_turn_count",
                "model_usage_since_last_result", *TIMINGS)


def background_agent_script() -> dict[str, Any]:
    """The main agent starts a background agent and answers; the agent's notification turn is answered at once."""
    call = {"type": "tool_use", "id": "toolu_a", "name": "Agent", "input": {
        "description": "job", "prompt": "Child one", "subagent_type": "general-purpose", "run_in_background": True}}
    return {"turns": [
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "noted"}],
         "repeat": True},
        {"match": {"first_user_contains": "Go", "last_is_tool_result": False}, "content": [call]},
        {"match": {"first_user_contains": "Go"}, "content": [{"type": "text", "text": "parent done"}], "repeat": True},
        {"match": {"first_user_contains": "Child one"}, "content": [{"type": "text", "text": "ok"}], "repeat": True},
    ]}


def inits_and_results(messages: list[Any]) -> list[str]:
    """The order of the main agent's init and result messages: "init", or the result's text."""
    return ["init" if isinstance(m, catui.SystemMessage) and m.subtype == "init" else str(m.result)
            for m in messages
            if isinstance(m, catui.ResultMessage) or (isinstance(m, catui.SystemMessage) and m.subtype == "init")]


@pytest.mark.usefixtures("isolated_sdk_home")
@pytest.mark.parametrize("compat", ["2.1.332", "2.1.92"])
async def test_a_notification_turn_is_opened_by_init_and_counts_its_own_requests(tmp_path: Path,
                                                                                compat: str) -> None:
    """As catui's stream-json: the current profile opens the notification turn with a second init and its result
    counts that turn's one request; the 2.1.92 profile sends one init and counts the session's requests."""
    with AnthropicTestServer(background_agent_script()) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env=server.env(), compat=compat,
                                     permission_mode="bypassPermissions")
        messages = await collect("Go", options)
    results = [m for m in messages if isinstance(m, catui.ResultMessage)]
    if compat == "2.1.92":
        assert inits_and_results(messages) == ["init", "parent done", "noted"]
        assert [r.num_turns for r in results] == [2, 3]
        assert all(getattr(r, key) is None for r in results for key in CURRENT_KEYS)
        return
    assert inits_and_results(messages) == ["init", "parent done", "init", "noted"]
    # The second init comes after the agent's notification, as the notification turn starts.
    inits = [i for i, m in enumerate(messages) if isinstance(m, catui.SystemMessage) and m.subtype == "init"]
    notified = next(i for i, m in enumerate(messages) if isinstance(m, catui.TaskNotificationMessage))
    second_init = messages[inits[1]]
    assert isinstance(second_init, catui.SystemMessage) and notified < inits[1]
    assert second_init.data["compat"] == "2.1.332" and "Agent" in second_init.data["tools"]
    assert [r.num_turns for r in results] == [2, 1]


@pytest.mark.usefixtures("isolated_sdk_home")
async def test_results_carry_the_current_keys_the_cli_stamps(tmp_path: Path) -> None:
    """result_index, subagent_stats, safety_stops, queued_turn_count, model_usage_since_last_result and the
    first request's timings reach the SDK's ResultMessage, with the values catui's stream-json gives them."""
    with AnthropicTestServer(background_agent_script()) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env=server.env(), compat="2.1.332",
                                     permission_mode="bypassPermissions")
        messages = await collect("Go", options)
    first, second = [m for m in messages if isinstance(m, catui.ResultMessage)]
    assert (first.result_index, second.result_index) == (0, 1)
    assert (first.safety_stops, first.queued_turn_count, second.safety_stops, second.queued_turn_count) == (0, 0, 0, 0)
    assert first.api_error_status is None and second.api_error_status is None
    assert first.subagent_stats is not None and first.subagent_stats["spawned"] == 1
    assert second.subagent_stats is not None and second.subagent_stats["completed"] == 1
    assert first.model_usage_since_last_result == first.model_usage
    since = second.model_usage_since_last_result
    assert since and second.model_usage is not None and first.model_usage is not None
    for model, total in second.model_usage.items():
        earlier = first.model_usage.get(model, {}).get("outputTokens", 0)
        assert earlier + since.get(model, {}).get("outputTokens", 0) == total["outputTokens"]
    for result in (first, second):
        timings = [getattr(result, key) for key in TIMINGS]
        assert all(isinstance(value, int) for value in timings) and timings == sorted(timings)
        assert timings[-1] <= result.duration_ms


@pytest.mark.usefixtures("isolated_sdk_home")
@pytest.mark.parametrize(("compat", "counted"), [("2.1.332", [1, 1]), ("2.1.92", [1, 2])])
async def test_a_clients_second_prompt_counts_from_zero(tmp_path: Path, compat: str, counted: list[int]) -> None:
    script = {"turns": [
        {"match": {"last_user_contains": "second"}, "content": [{"type": "text", "text": "two"}], "repeat": True},
        {"content": [{"type": "text", "text": "one"}], "repeat": True},
    ]}
    with AnthropicTestServer(script) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env=server.env(), compat=compat)
        results: list[catui.ResultMessage] = []
        async with catui.CatuiClient(options) as client:
            for prompt in ("first", "second"):
                await client.query(prompt)
                results += [m async for m in client.receive_response() if isinstance(m, catui.ResultMessage)]
    assert [r.result for r in results] == ["one", "two"]
    assert [r.num_turns for r in results] == counted
    assert [r.result_index for r in results] == ([0, 1] if compat == "2.1.332" else [None, None])


@pytest.mark.usefixtures("isolated_sdk_home")
@pytest.mark.parametrize("compat", ["2.1.332", "2.1.92"])
async def test_a_background_shells_notification_turn(tmp_path: Path, compat: str) -> None:
    """The main agent's background Bash: in the current profile the SDK waits for it and its notification turn
    is opened by a second init, its result naming the shell's run and counting one request."""
    shell = {"type": "tool_use", "id": "toolu_bg", "name": "Bash", "input": {
        "command": "sleep 0.3; echo done-bg", "description": "Sleepy job", "run_in_background": True}}
    script = {"turns": [
        {"match": {"last_user_contains": "<task-notification>"}, "content": [{"type": "text", "text": "noted"}],
         "repeat": True},
        {"match": {"last_is_tool_result": False}, "content": [shell]},
        {"content": [{"type": "text", "text": "waiting"}], "repeat": True},
    ]}
    with AnthropicTestServer(script) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env=server.env(), compat=compat,
                                     permission_mode="bypassPermissions")
        messages = await collect("Go", options)
    results = [m for m in messages if isinstance(m, catui.ResultMessage)]
    if compat == "2.1.92":
        assert inits_and_results(messages)[:2] == ["init", "waiting"]
        assert results[0].num_turns == 2 and results[0].result_index is None
        return
    assert inits_and_results(messages) == ["init", "waiting", "init", "noted"]
    started = next(m for m in messages if isinstance(m, catui.SystemMessage) and m.subtype == "task_started"
                   and m.data.get("task_type") == "local_bash")
    assert results[1].origin == {"kind": "task-notification", "producer": "session-task",
                                 "runId": started.data["run_id"]}
    assert [r.num_turns for r in results] == [2, 1] and [r.result_index for r in results] == [0, 1]


@pytest.mark.usefixtures("isolated_sdk_home")
async def test_a_compaction_between_prompts_counts_no_requests_of_the_prompts(tmp_path: Path) -> None:
    """``/compact``'s result sends no turn request (num_turns 0) and does not disturb the next prompt's count."""
    script = {"turns": [
        {"match": {"system_contains": "working memory of a coding agent"},
         "content": [{"type": "text", "text": "The user likes MANGO."}]},
        {"content": [{"type": "text", "text": "Still here."}], "repeat": True},
    ]}
    with AnthropicTestServer(script) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env=server.env(), compat="2.1.332")
        results: list[catui.ResultMessage] = []
        async with catui.CatuiClient(options) as client:
            for prompt in ("My favourite fruit is the mango", "/compact keep the fruit", "What next?"):
                await client.query(prompt)
                results += [m async for m in client.receive_response() if isinstance(m, catui.ResultMessage)]
    assert str(results[1].result).startswith("Compacted:")
    assert [r.num_turns for r in results] == [1, 0, 1]
    assert [r.result_index for r in results] == [0, 1, 2]


def shown_keys(result: dict[str, Any]) -> dict[str, Any]:
    """What a result says beyond its run's own figures: the same for stream-json and the SDK. (Whether the
    background agent has completed by the first result is a race, in both: ``completed`` is left out.)"""
    stats = {key: value for key, value in result["subagent_stats"].items() if key != "completed"}
    return {"num_turns": result["num_turns"], "result_index": result["result_index"],
            "safety_stops": result["safety_stops"], "queued_turn_count": result["queued_turn_count"],
            "api_error_status": result["api_error_status"], "subagent_stats": stats,
            "origin": sorted(result.get("origin") or {}), "is_error": result["is_error"],
            "timings": sorted(key for key in TIMINGS if result.get(key) is not None),
            "models_since": sorted(result["model_usage_since_last_result"])}


@pytest.mark.usefixtures("isolated_sdk_home")
@pytest.mark.parametrize("failing", [False, True], ids=["agent", "api-error"])
async def test_the_sdks_results_say_what_stream_json_says(tmp_path: Path, failing: bool) -> None:
    """The same script through ``catui -p --output-format stream-json`` and through ``catui.query``: each result's
    current keys agree (a background agent's two turns; a prompt whose request fails with HTTP 400)."""
    script = background_agent_script()
    if failing:
        script = {"turns": [{"error": {"status": 400, "type": "invalid_request_error", "message": "bad prompt"},
                             "repeat": True}]}
    with AnthropicTestServer(script) as server:
        (tmp_path / "cli").mkdir()
        done, lines = stream_run(git_repo(tmp_path / "cli"), cli_env(tmp_path, server, **CURRENT), "Go",
                                 "--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-6")
    assert done.returncode == (1 if failing else 0), done.stderr
    from_cli = [line for line in lines if line.get("type") == "result"]
    project = tmp_path / "sdk"
    project.mkdir()
    with AnthropicTestServer(script) as server:
        options = catui.CatuiOptions(cwd=project, model="claude-sonnet-4-6", env=server.env(), compat="2.1.332",
                                     permission_mode="bypassPermissions")
        results: list[catui.ResultMessage] = []
        async with catui.CatuiClient(options) as client:
            await client.query("Go")
            async for message in client.receive_messages():
                if isinstance(message, catui.ResultMessage):
                    results.append(message)
                if len(results) == len(from_cli):
                    break
    from_sdk = [{**dataclasses.asdict(r), "origin": r.origin or {}} for r in results]
    assert len(from_cli) == (1 if failing else 2)
    for sdk_result, cli_result in zip(from_sdk, from_cli, strict=True):
        assert shown_keys(sdk_result) == shown_keys(cli_result), (shown_keys(sdk_result), shown_keys(cli_result))
    if failing:
        assert from_sdk[0]["api_error_status"] == 400 and from_sdk[0]["result_index"] == 0
        return
    assert from_sdk[-1]["subagent_stats"]["completed"] == from_cli[-1]["subagent_stats"]["completed"] == 1
