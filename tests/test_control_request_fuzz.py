"""Property-based fuzzing (Hypothesis) of the control protocol's boundary: odd ``control_request`` lines on the
stdin of the real ``catui --input-format stream-json --output-format stream-json``.

Whatever the request (wrong types, unknown or missing subtypes, huge values, missing or odd ids), catui
answers each with one ``control_response`` (an error names the problem on one line), prints no traceback,
keeps serving (a last, well-formed request is answered) and exits cleanly when stdin closes. A subprocess
per example, so the examples are few and each carries several requests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.loopback import started_servers

STREAM_FLAGS = ("--output-format", "stream-json", "--verbose", "--input-format", "stream-json")
FUZZ = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HUGE = "x" * 100_000
MISSING = object()

# The subtypes catui answers, some it refuses by name, and nonsense. No prompt is ever sent, so none of these
# reaches the model: the server only makes start-up possible.
SUBTYPES = ["interrupt", "set_permission_mode", "set_model", "stop_task", "rewind_files", "mcp_status",
            "get_context_usage", "mcp_reconnect", "mcp_toggle", "rename_session", "background_tasks",
            "get_settings", "mirror_error", "initialize", "set_max_thinking_tokens", "mcp_set_servers",
            "end_session", "hook_callback", "can_use_tool", "mcp_message", "", "no_such_request"]
FIELDS = ["mode", "model", "task_id", "user_message_id", "dry_run", "serverName", "enabled", "title",
          "tool_use_id", "error", "max_thinking_tokens", "servers", "hooks", "agents"]

json_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
                | st.sampled_from(["default", "plan", "bypassPermissions", "haiku", "opus", "x" * 300])
                | st.just(HUGE) | st.just(10**400) | st.just(1e308))
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
requests = st.one_of(
    json_values,
    st.fixed_dictionaries({"subtype": st.sampled_from(SUBTYPES) | json_values},
                          optional={name: json_values for name in FIELDS}),
)
request_ids = st.one_of(st.text(min_size=1, max_size=12), st.integers(), st.none(), st.booleans(),
                        st.floats(allow_nan=False), st.lists(st.integers(), max_size=2), st.just(MISSING),
                        st.just(HUGE))


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    for factory in started_servers(AnthropicTestServer):
        yield factory({"turns": [{"content": [{"type": "text", "text": "unused"}], "repeat": True}]})


def control_line(request_id: Any, request: Any) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "control_request", "request": request}
    if request_id is not MISSING:
        line["request_id"] = request_id
    return line


def strict_json(text: str) -> Any:
    """``json.loads`` that refuses NaN and Infinity, which are not JSON (a driver's parser would fail)."""
    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@FUZZ
@given(batch=st.lists(st.tuples(request_ids, requests), min_size=1, max_size=6))
def test_every_odd_control_request_gets_one_answer_and_the_session_goes_on(
        batch: list[tuple[Any, Any]], server: AnthropicTestServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp_path = tmp_path_factory.mktemp("fuzz")
    lines = [control_line("init", {"subtype": "initialize"}),
             *(control_line(request_id, request) for request_id, request in batch),
             control_line("last", {"subtype": "mcp_status"})]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    # a hang fails the example here instead of stalling the suite (not a timing assertion)
    done = subprocess.run([sys.executable, "-m", "catui", *STREAM_FLAGS, "--model", "claude-sonnet-4-6"],
                          input=stdin, cwd=tmp_path, env=cli_env(tmp_path, server), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    # lines end at "\n" only: a string may hold U+0085 or U+2028, which str.splitlines would also cut at
    out = [strict_json(line) for line in done.stdout.split("\n") if line.strip()]
    answers = [o["response"] for o in out if o.get("type") == "control_response"]
    assert len(answers) == len(lines)  # one answer per request (a malformed one at once, the others in turn)
    assert [a["subtype"] for a in answers if a["request_id"] == "init"][:1] == ["success"]
    assert {"subtype": "success", "request_id": "last", "response": {"mcpServers": []}} in answers
    for answer in answers:
        assert answer["subtype"] in {"success", "error"}
        if answer["subtype"] == "error":
            assert isinstance(answer["error"], str) and answer["error"].strip()
            assert "\n" not in answer["error"] and len(answer["error"]) < 1100  # one line, not an echo of HUGE
    sent_ids = {request_id for request_id, _ in batch if isinstance(request_id, str)}
    assert sent_ids <= {answer["request_id"] for answer in answers}


def test_a_control_request_without_a_usable_id_is_answered_with_the_problem(
        server: AnthropicTestServer, tmp_path: Path) -> None:
    lines = [control_line("init", {"subtype": "initialize"}),
             control_line(MISSING, {"subtype": "mcp_status"}),
             control_line(7, {"subtype": "mcp_status"}),
             control_line(float("inf"), {"subtype": "mcp_status"}),
             control_line("text", "mcp_status"),
             control_line("nosub", {"mode": "plan"})]
    done = subprocess.run([sys.executable, "-m", "catui", *STREAM_FLAGS, "--model", "claude-sonnet-4-6"],
                          input="".join(json.dumps(line) + "\n" for line in lines), cwd=tmp_path,
                          env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = [strict_json(line)["response"] for line in done.stdout.splitlines()
               if strict_json(line).get("type") == "control_response"]
    errors = [(a["request_id"], a["error"]) for a in answers if a["request_id"] != "init"]
    assert errors == [
        (None, "stdin line 2: a control_request needs a 'request_id' (a string unique to the request); "
               "this one has none"),
        (7, "stdin line 3: a control_request's 'request_id' must be a string, not int"),
        (None, "stdin line 4: a control_request's 'request_id' must be a string, not float"),
        ("text", "stdin line 5: control_request 'text' needs a 'request' object with a 'subtype', not str"),
        ("nosub", "a control request needs a 'subtype' string (such as 'interrupt'), not None"),
    ]


INITIALIZE_FIELDS = ["hooks", "agents", "sdkMcpServers", "mcpServers", "systemPrompt", "appendSystemPrompt",
                     "settings", "disallowedTools", "additionalDirectories", "plugins", "forwardSubagentText",
                     "jsonSchema", "promptSuggestions", "title", "skills"]


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(INITIALIZE_FIELDS), json_values, max_size=4))
def test_any_initialize_is_answered_once_and_never_crashes(
        fields: dict[str, Any], server: AnthropicTestServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp_path = tmp_path_factory.mktemp("fuzz-init")
    lines = [control_line("init", {"subtype": "initialize", **fields}), control_line("after", {"subtype": "mcp_status"})]
    # a hang fails the example here instead of stalling the suite (not a timing assertion)
    done = subprocess.run([sys.executable, "-m", "catui", *STREAM_FLAGS, "--model", "claude-sonnet-4-6"],
                          input="".join(json.dumps(line) + "\n" for line in lines), cwd=tmp_path,
                          env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    out = [strict_json(line) for line in done.stdout.split("\n") if line.strip()]
    (answer,) = [o["response"] for o in out if o.get("type") == "control_response" and
                 o["response"]["request_id"] == "init"]
    if answer["subtype"] == "error":
        # an initialize catui cannot apply ends the session with the reason, on one line (the SDK raises it)
        assert done.returncode == 1 and "\n" not in answer["error"] and answer["error"].strip()
    else:
        assert done.returncode == 0, done.stderr
        after = [o["response"] for o in out if o.get("type") == "control_response" and
                 o["response"]["request_id"] == "after"]
        assert [a["subtype"] for a in after] == ["success"]  # the session serves on
