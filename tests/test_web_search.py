"""WebSearch through the real CLI: the Anthropic API's server-side search (loopback Anthropic server emitting
server tool blocks), a SearXNG-compatible endpoint (loopback JSON server), and neither (not offered)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from catui.agents.builtin import explore_agent, general_purpose_agent
from catui.app import RunOptions, build_app
from catui.permissions.context import PermissionContext
from catui.subagents.tool_filter import filter_tools_for_agent
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.searxng_server import SearxngTestServer

QUERY = "catui release notes"


def run_catui(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "catui", "-p", "Search the web", "--allowedTools", "WebSearch", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)


def search_result(url: str, title: str) -> dict[str, Any]:
    return {"type": "web_search_result", "url": url, "title": title, "encrypted_content": "opaque", "page_age": None}


def test_anthropic_server_side_search(tmp_path: Path) -> None:
    script = {"turns": [
        {"match": {"tools_include": ["WebSearch"], "last_is_tool_result": False}, "content": [
            {"type": "tool_use", "name": "WebSearch", "input": {"query": QUERY, "allowed_domains": ["example.com"]}},
        ]},
        # the WebSearch call's own request: the server searches, pauses, and is sent its blocks back
        {"match": {"tools_include": ["web_search"]}, "stop_reason": "pause_turn", "usage": {"web_search_requests": 1},
         "content": [
             {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": QUERY}},
             {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
              "content": [search_result("https://example.com/a", "Release A")]},
         ]},
        {"match": {"tools_include": ["web_search"]}, "usage": {"web_search_requests": 1}, "content": [
            {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": QUERY + " 1.0"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2",
             "content": [search_result("https://docs.example.com/b", "Docs B")]},
            {"type": "text", "text": "catui 1.0 came out in March."},
        ]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Found it."}]},
    ]}
    with AnthropicTestServer(script) as server:
        out = run_catui(tmp_path, "--output-format", "stream-json", "--verbose", env=cli_env(tmp_path, server))
        bodies = server.bodies()
    assert out.returncode == 0, out.stderr
    assert len(bodies) == 4
    main_tools = [t["name"] for t in bodies[0]["tools"]]
    assert "WebSearch" in main_tools and "web_search" not in main_tools
    schema = next(t for t in bodies[0]["tools"] if t["name"] == "WebSearch")["input_schema"]
    assert schema["required"] == ["query"] and schema["properties"]["query"]["minLength"] == 2
    [server_tool] = bodies[1]["tools"]
    assert {k: v for k, v in server_tool.items() if k != "cache_control"} == {
        "type": "web_search_20250305", "name": "web_search", "max_uses": 8, "allowed_domains": ["example.com"]}
    sent_back = bodies[2]["messages"][-1]
    assert sent_back["role"] == "assistant"
    assert [b["type"] for b in sent_back["content"]] == ["server_tool_use", "web_search_tool_result"]
    assert sent_back["content"][1]["content"][0]["encrypted_content"] == "opaque"  # unchanged, as the API needs

    [result] = [b for b in bodies[3]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert not result.get("is_error")
    assert "[Release A](https://example.com/a)" in text and "[Docs B](https://docs.example.com/b)" in text
    assert "catui 1.0 came out in March." in text

    events = stream_events(out)
    final = events[-1]
    assert final["result"] == "Found it."
    assert sum(m["webSearchRequests"] for m in final["modelUsage"].values()) == 2
    [structured] = [e["tool_use_result"] for e in events if e["type"] == "user" and "tool_use_result" in e]
    assert structured["searches"] == 2 and structured["backend"] == "anthropic"
    assert [b["type"] for b in structured["server_blocks"]] == [
        "server_tool_use", "web_search_tool_result", "server_tool_use", "web_search_tool_result", "text"]
    # The count is in the result's usage (print mode json), and the server blocks are in the transcript file.
    assert final["usage"]["server_tool_use"]["web_search_requests"] == 2
    [transcript] = (tmp_path / "catui-home" / "projects").glob("*/*.jsonl")
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    recorded = [line["toolUseResult"] for line in lines if "toolUseResult" in line]
    assert [b["type"] for b in recorded[0]["server_blocks"]] == [
        "server_tool_use", "web_search_tool_result", "server_tool_use", "web_search_tool_result", "text"]
    assert recorded[0]["server_blocks"][1]["content"][0]["encrypted_content"] == "opaque"


def scripted_search(tmp_path: Path, args: dict[str, Any]) -> Path:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": [
        {"match": {"last_is_tool_result": False}, "content": [{"type": "tool_use", "name": "WebSearch", "input": args}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Done."}]},
    ]}))
    return script


def stream_events(out: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def tool_result_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    [block] = [b for e in events if e["type"] == "user" for b in e["message"]["content"] if b["type"] == "tool_result"]
    return block


def block_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_searxng_backend_from_settings(tmp_path: Path) -> None:
    results = [
        {"title": "Good", "url": "https://good.example/page", "content": "A good page."},
        {"title": "Bad", "url": "https://ads.bad.example/x", "content": "Spam."},
    ]
    script = scripted_search(tmp_path, {"query": QUERY, "blocked_domains": ["bad.example"]})
    with SearxngTestServer(results) as searx, AnthropicTestServer({"turns": []}) as unused:
        settings = json.dumps({"webSearch": {"searxngUrl": searx.url}})
        out = run_catui(tmp_path, "--model", f"scripted:{script}", "--settings", settings, "--output-format",
                        "stream-json", "--verbose", env=cli_env(tmp_path, unused))
        queries = searx.queries
    events = stream_events(out)
    init = events[0]
    assert "WebSearch" in init["tools"] and init["unavailable_tools"] == []
    assert queries == [{"q": [QUERY], "format": ["json"]}]
    result = tool_result_of(events)
    text = block_text(result)
    assert not result.get("is_error")
    assert "[Good](https://good.example/page): A good page." in text and "bad.example" not in text


def test_searxng_failure_is_an_error_result(tmp_path: Path) -> None:
    script = scripted_search(tmp_path, {"query": QUERY})
    with SearxngTestServer([], status=503) as searx, AnthropicTestServer({"turns": []}) as unused:
        settings = json.dumps({"webSearch": {"searxngUrl": searx.url}})
        out = run_catui(tmp_path, "--model", f"scripted:{script}", "--settings", settings, "--output-format",
                        "stream-json", "--verbose", env=cli_env(tmp_path, unused))
    result = tool_result_of(stream_events(out))
    assert result.get("is_error") and "HTTP 503" in block_text(result) and searx.url in block_text(result)


def test_bad_arguments_are_error_results(tmp_path: Path) -> None:
    script = scripted_search(tmp_path, {"query": "x"})
    with SearxngTestServer([]) as searx, AnthropicTestServer({"turns": []}) as unused:
        settings = json.dumps({"webSearch": {"searxngUrl": searx.url}})
        out = run_catui(tmp_path, "--model", f"scripted:{script}", "--settings", settings, "--output-format",
                        "stream-json", "--verbose", env=cli_env(tmp_path, unused))
        queries = searx.queries
    result = tool_result_of(stream_events(out))
    assert result.get("is_error") and "query" in block_text(result) and queries == []


def test_without_a_backend_websearch_is_not_offered_and_init_says_why(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": [
        {"match": {"tools_exclude": ["WebSearch"]}, "content": [{"type": "text", "text": "No search here."}]},
    ]}))
    with AnthropicTestServer({"turns": []}) as unused:
        out = run_catui(tmp_path, "--model", f"scripted:{script}", "--output-format", "stream-json", "--verbose",
                        env=cli_env(tmp_path, unused))
    events = stream_events(out)
    init = events[0]
    assert init["subtype"] == "init" and "WebSearch" not in init["tools"]
    [entry] = init["unavailable_tools"]
    assert entry["name"] == "WebSearch" and "searxngUrl" in entry["reason"]
    assert events[-1]["result"] == "No search here."


def test_a_bad_search_setting_is_a_one_line_error(tmp_path: Path) -> None:
    script = scripted_search(tmp_path, {"query": QUERY})
    with AnthropicTestServer({"turns": []}) as unused:
        out = run_catui(tmp_path, "--settings", json.dumps({"webSearch": {"searxngUrl": "localhost:8888"}}),
                        "--model", f"scripted:{script}", env=cli_env(tmp_path, unused))
    assert out.returncode != 0
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "webSearch.searxngUrl" in lines[0]


def test_children_get_the_new_tools_as_observed(tmp_path: Path, monkeypatch: Any) -> None:
    """Explore gets WebSearch and the Cron tools (observed §2), minus the ones other engineers still build."""
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    with AnthropicTestServer({"turns": []}) as server:
        app = build_app(RunOptions(cwd=project, model="claude-sonnet-4-6", env=server.env(), write_transcript=False))
    explore = [t.name for t in filter_tools_for_agent(explore_agent(), app.session.tools, PermissionContext())]
    general = [t.name for t in filter_tools_for_agent(general_purpose_agent(), app.session.tools, PermissionContext())]
    new = {"CronCreate", "CronDelete", "CronList", "WebSearch"}
    assert new <= set(explore) and new <= set(general)
    assert not {"Edit", "Write", "NotebookEdit"} & set(explore)
