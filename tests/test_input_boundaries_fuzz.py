"""Property-based fuzzing (Hypothesis) of catui's input boundaries.

Every boundary that reads what someone else wrote is fed arbitrary input and
must answer with its own one-line error type (or a result), never another
exception: stream-json stdin lines and the line splitter, prompt content
blocks, settings files and what is read from them, agent files (Markdown and
JSON), and the SSE decoder (whatever the bytes and however they are split).
"""

from __future__ import annotations

import asyncio
import json
import os
import string
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catui.agents.agent_file_io import AgentFileError
from catui.agents.json_agents import agents_from_json_mapping
from catui.agents.markdown import load_markdown_agent, load_markdown_agent_bytes
from catui.cli.stream.input import LineSplitter, StreamInputError, parse_line, user_input_from
from catui.config.json_input import JsonInputError, loads_bounded
from catui.config.settings import load_settings, settings_env
from catui.errors import ConfigurationError
from catui.models.http_api.sse import SSEDecoder, SSEStreamError
from catui.models.resolve import model_aliases
from catui.prompt_blocks import PromptBlockError, block_problem, check_prompt_blocks, check_tool_results
from catui.session.context_window import context_policy
from catui.session.transcript import encode_line
from catui.subagents.executors.choice import executor_name

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
block_types = st.sampled_from(["text", "image", "document", "tool_result", "search_result", "tool_use",
                               "thinking", "weird", ""])
blocks = st.one_of(
    json_values,
    st.fixed_dictionaries({"type": block_types}, optional={
        "text": json_values, "source": json_values | st.fixed_dictionaries(
            {"type": st.sampled_from(["base64", "url", "file", "text", "content", "x"])},
            optional={"media_type": st.sampled_from(["image/png", "application/pdf", "text/plain", "x"]),
                      "data": json_values, "url": json_values, "content": json_values}),
        "tool_use_id": json_values, "content": json_values, "is_error": json_values,
        "cache_control": json_values, "title": json_values}),
)


# ------------------------------------------------------------------ stream-json stdin


@FUZZ
@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_stdin_line_is_a_message_or_a_stream_input_error(raw: bytes) -> None:
    try:
        message = parse_line(raw, 7)
    except StreamInputError as exc:
        assert str(exc).startswith("stdin line 7")
        return
    if message is not None and message.get("type") == "user":
        try:
            user_input_from(message, 7)
        except StreamInputError as exc:
            assert str(exc).startswith("stdin line 7")


@FUZZ
@given(st.lists(blocks, min_size=1, max_size=4))
def test_any_user_line_with_blocks_is_a_prompt_or_a_stream_input_error(content: list[Any]) -> None:
    message = {"type": "user", "message": {"role": "user", "content": content}}
    try:
        prompt = user_input_from(message, 3)
    except StreamInputError as exc:
        assert str(exc).startswith("stdin line 3: ")
        return
    # Accepted: every block passes the API's rules as catui knows them.
    assert all(block_problem(block) is None for block in prompt.content)


@FUZZ
@given(st.lists(blocks, max_size=4), st.lists(json_values, max_size=3))
def test_prompt_block_checks_raise_only_their_own_error(content: list[Any], history: list[Any]) -> None:
    messages = [m for m in history if isinstance(m, dict)]
    for check in (lambda: check_prompt_blocks(content), lambda: check_tool_results(content, messages)):
        try:
            check()
        except PromptBlockError as exc:
            assert str(exc)


@FUZZ
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8),
       st.lists(st.integers(min_value=1, max_value=17), min_size=1, max_size=10),
       st.integers(min_value=1, max_value=30))
def test_the_line_splitter_gives_each_line_once_whatever_the_chunks(lines: list[bytes], cuts: list[int],
                                                                     limit: int) -> None:
    data = b"".join(line + b"\n" for line in lines)
    splitter = LineSplitter(limit)
    got: list[bytes | None] = []
    position, turn = 0, 0
    while position < len(data):
        size = cuts[turn % len(cuts)]
        got.extend(splitter.feed(data[position:position + size]))
        position += size
        turn += 1
    got.extend(splitter.finish())
    # One entry per line, in order: the line itself, or None when it was over the limit (never held).
    assert got == [line + b"\n" if len(line) <= limit else None for line in lines]


# ------------------------------------------------------------------ JSON inputs


@FUZZ
@given(st.integers(min_value=0, max_value=3000), st.sampled_from("[{"))
def test_nesting_is_refused_by_depth_not_by_a_recursion_crash(depth: int, bracket: str) -> None:
    text = ("[" * depth + "1" + "]" * depth) if bracket == "[" else ('{"a":' * depth + "1" + "}" * depth)
    try:
        value = loads_bounded(text)
    except JsonInputError:
        assert depth > 200
        return
    assert depth <= 200 and value is not None


def check_settings_file(project: Path, data: Any) -> None:
    (project / ".claude").mkdir(exist_ok=True)
    settings_file = project / ".claude" / "settings.json"
    settings_file.write_text(json.dumps(data), encoding="utf-8")
    try:
        loaded = load_settings(project, sources=("project",), home=project / "home")
    except ConfigurationError as exc:
        assert str(settings_file) in str(exc) and "\n" not in str(exc)
        return
    merged = loaded.merged
    # What start-up reads from them: a value of the wrong type is a ConfigurationError naming the file.
    for read in (lambda: settings_env(loaded), lambda: context_policy({}, merged),
                 lambda: model_aliases(merged, {}), lambda: executor_name(None, merged, {})):
        try:
            read()
        except ConfigurationError as exc:
            assert str(settings_file) in str(exc), str(exc)


@FUZZ
@given(json_values)
def test_settings_files_load_or_fail_with_one_line_naming_the_file(tmp_path_factory: pytest.TempPathFactory,
                                                                   data: Any) -> None:
    check_settings_file(tmp_path_factory.mktemp("proj"), data)


@FUZZ
@given(st.dictionaries(st.sampled_from(["model", "executor", "modelAliases", "contextWindow", "env",
                                        "permissions", "hooks", "sandbox"]), json_values, min_size=1))
def test_known_settings_keys_with_any_value_never_crash_start_up_readers(
        tmp_path_factory: pytest.TempPathFactory, data: dict[str, Any]) -> None:
    check_settings_file(tmp_path_factory.mktemp("proj"), data)


# ------------------------------------------------------------------ agent files

frontmatter_keys = st.sampled_from(["name", "description", "tools", "model", "color", "maxTurns", "cwd",
                                    "isolation", "memory", "hooks", "mcpServers", "permissionMode", "x"])
yaml_text = st.text(alphabet=string.printable + "éü\u2028\ufeff", max_size=60)


@FUZZ
@given(st.dictionaries(frontmatter_keys, yaml_text, max_size=6), yaml_text, st.booleans())
def test_any_markdown_agent_file_loads_or_reports_a_problem(fields: dict[str, str], body: str,
                                                            as_bytes: bool) -> None:
    text = "---\n" + "".join(f"{key}: {value}\n" for key, value in fields.items()) + "---\n" + body
    if as_bytes:
        try:
            result = load_markdown_agent_bytes(text.encode("utf-8", "surrogatepass"), path="/p/x.md",
                                               source="projectSettings")
        except AgentFileError:
            return
    else:
        result = load_markdown_agent(text, path="/p/x.md", source="projectSettings")
    assert result.error is None or isinstance(result.error, str)


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_as_an_agent_file_load_or_report_a_problem(data: bytes) -> None:
    try:
        result = load_markdown_agent_bytes(b"---\n" + data, path="/p/x.md", source="projectSettings")
    except AgentFileError as exc:
        assert str(exc)
        return
    assert result.error is None or isinstance(result.error, str)


@FUZZ
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=3))
def test_any_json_agents_mapping_gives_agents_or_failed_entries(mapping: dict[str, Any]) -> None:
    agents, failed, _ = agents_from_json_mapping(mapping, source="flagSettings", origin="--agents")
    assert len(agents) + len(failed) <= len(mapping)


# ------------------------------------------------------------------ SSE


async def _chunks(data: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    position, turn = 0, 0
    while position < len(data):
        size = cuts[turn % len(cuts)]
        yield data[position:position + size]
        position += size
        turn += 1


def _decode(data: bytes, cuts: list[int]) -> list[tuple[str | None, str]]:
    async def run() -> list[tuple[str | None, str]]:
        return [(e.event, e.data) async for e in SSEDecoder().aiter_events(_chunks(data, cuts))]
    return asyncio.run(run())


sse_bytes = st.one_of(
    st.binary(max_size=400),
    st.lists(st.sampled_from([b"event: x", b"data: {\"a\":1}", b"data:", b": comment", b"id: 7", b"retry: 9",
                              b"retry: x", b"", b"data: \xff\xfe bad utf-8", b"\r", b"data: z\r\n"]),
             max_size=12).map(lambda parts: b"\n".join(parts) + b"\n\n"),
)


@FUZZ
@given(sse_bytes, st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=8))
def test_the_sse_decoder_takes_any_bytes_and_any_split_the_same_way(data: bytes, cuts: list[int]) -> None:
    whole = _decode(data, [max(len(data), 1)])
    assert _decode(data, cuts) == whole  # where the network splits the bytes never changes the events
    for _event, payload in whole:
        payload.encode("utf-8")  # decoded text, never a crash: bad bytes are U+FFFD


def test_an_endless_sse_line_is_a_stream_error_not_unbounded_memory() -> None:
    async def endless() -> AsyncIterator[bytes]:
        chunk = b"x" * (1024 * 1024)
        for _ in range(64):  # 64 MB without a line end
            yield chunk

    async def run() -> None:
        async for _ in SSEDecoder().aiter_events(endless()):
            pass

    with pytest.raises(SSEStreamError, match="over 16777216 bytes"):
        asyncio.run(run())


# ------------------------------------------------------------------ transcript lines


@FUZZ
@given(st.text(alphabet=st.characters(blacklist_categories=()), max_size=40))
def test_any_text_round_trips_through_a_transcript_line(text: str) -> None:
    line = encode_line({"message": {"role": "user", "content": text}})
    line.decode("utf-8")  # always valid UTF-8, lone surrogates included
    assert json.loads(line)["message"]["content"] == text


# ------------------------------------------------------------------ special files where config is expected


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_plugin_manifest_or_agent_file_that_is_no_regular_file_is_refused_without_blocking(
        tmp_path: Path, kind: str) -> None:
    from catui.agents.agent_file_io import read_agent_bytes
    from catui.agents.plugins import MANIFEST_PATH, read_manifest

    manifest = tmp_path / "plugin" / MANIFEST_PATH
    manifest.parent.mkdir(parents=True)
    agent = tmp_path / "agent.md"
    for path in (manifest, agent):
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
    data, error = read_manifest(tmp_path / "plugin")
    assert data is None and error is not None
    assert ("is a named pipe (FIFO)" if kind == "fifo" else "is a character device") in error
    with pytest.raises(AgentFileError, match="not a regular file"):
        read_agent_bytes(agent)


@pytest.mark.parametrize("nested", ["[" * 5000 + "]" * 5000, "{a: " * 3000 + "1" + "}" * 3000,
                                    "\n" + "".join("  " * i + "a:\n" for i in range(3000))])
def test_deeply_nested_yaml_in_an_agent_file_is_a_problem_not_a_crash(nested: str) -> None:
    text = "---\nname: x\ndescription: d\nhooks: " + nested + "\n---\nbody"
    for result in (load_markdown_agent(text, path="/p/x.md", source="projectSettings"),
                   load_markdown_agent_bytes(text.encode(), path="/p/x.md", source="projectSettings")):
        # Refused with a clear problem either way: by catui's own depth check, or by libyaml's (PyYAML
        # 6.0.4 bundles a libyaml with a nesting limit), or the over-deep value of `hooks` is dropped
        # with a warning naming the field.
        if result.error is not None:
            assert "nested too deeply" in result.error or "maximum nesting depth" in result.error
        else:
            assert result.definition is not None and not result.definition.hooks
            assert any("hooks" in str(warning) for warning in result.warnings)


# ------------------------------------------------------------------ a model's stream body, end to end over HTTP


@pytest.fixture(scope="module")
def garbage_server() -> Any:
    from tests.support.anthropic_server import AnthropicTestServer

    with AnthropicTestServer({"turns": [{"repeat": True, "content": [{"type": "text", "text": "fine"}]}]}) as running:
        yield running


valid_events = [b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
                b'"role":"assistant","model":"x","content":[],"usage":{"input_tokens":1,"output_tokens":0}}}\n\n',
                b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
                b'"content_block":{"type":"text","text":""}}\n\n',
                b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n',
                b'data: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n']


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(max_size=200) | st.sampled_from(valid_events), max_size=6))
def test_any_stream_body_is_an_answer_or_a_provider_error(garbage_server: Any, parts: list[bytes]) -> None:
    """Whatever bytes a server streams, the Anthropic provider yields events or raises a ProviderError (a
    RetryableFailure for a broken stream, retried and then reported), never another exception."""
    from catui.errors import ProviderError
    from catui.models.base import ModelRequest
    from catui.models.http_api.anthropic import AnthropicProvider
    from catui.models.http_api.retry import RetryPolicy
    from tests.support.anthropic_server import Fault
    from tests.support.transports import transport_env

    garbage_server.faults.clear()  # one example's faults never leak into the next
    garbage_server.inject(Fault(raw_body=b"".join(parts)), Fault(raw_body=b"".join(parts)))
    provider = AnthropicProvider(base_url=garbage_server.url, api_key="sk-ant-test-key", env=transport_env(),
                                 retry=RetryPolicy(max_retries=1, base_delay_s=0.001, max_delay_s=0.002))
    request = ModelRequest(model="claude-sonnet-4-6", system=[], messages=[{"role": "user", "content": "hi"}],
                           tools=[], max_tokens=64)

    async def run() -> None:
        try:
            async for _event in provider.stream(request):
                pass
        except ProviderError as exc:
            assert str(exc) and "Traceback" not in str(exc)

    asyncio.run(run())
