"""``catui -p --json-schema SCHEMA``: print mode's result carries the object the agent handed back.

The real CLI against the loopback Anthropic server: the StructuredOutput tool is
offered with the given schema, its calls are validated, and the json result has
``structured_output`` (or is an error saying why not).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.loopback import started_servers

SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["pass", "fail"]}}, "required": ["verdict"]}
ServerFactory = Callable[..., AnthropicTestServer]


@pytest.fixture
def loopback() -> Iterator[ServerFactory]:
    yield from started_servers(AnthropicTestServer)


def run_print(tmp_path: Path, server: AnthropicTestServer, *args: str) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "catui", "-p", "Judge it", "--model", "claude-sonnet-4-6", *args],
                          cwd=project, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60)


def call(verdict: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": "StructuredOutput", "input": {"verdict": verdict}}]}


def test_the_json_result_carries_the_validated_object(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [call("maybe"), call("pass"), {"content": [{"type": "text", "text": "ok"}]}]})
    done = run_print(tmp_path, server, "--output-format", "json", "--json-schema", json.dumps(SCHEMA))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["structured_output"] == {"verdict": "pass"} and not result["is_error"]
    first, second, _ = server.bodies()
    offered = next(t for t in first["tools"] if t["name"] == "StructuredOutput")
    assert offered["input_schema"]["properties"] == SCHEMA["properties"]
    repair = [b for m in second["messages"] if isinstance(m["content"], list) for b in m["content"]
              if b.get("type") == "tool_result"]
    assert repair[-1].get("is_error")


def test_a_run_that_never_hands_the_object_back_is_an_error(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": [{"content": [{"type": "text", "text": "I think it passes"}]}]})
    done = run_print(tmp_path, server, "--output-format", "json", "--json-schema", json.dumps(SCHEMA))
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["is_error"] and "structured_output" not in result
    assert "never called StructuredOutput" in result["result"]


def test_the_flag_needs_print_mode(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback({"turns": []})
    project = tmp_path / "proj"
    project.mkdir()
    done = subprocess.run([sys.executable, "-m", "catui", "--json-schema", json.dumps(SCHEMA)], cwd=project,
                          env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "--json-schema needs print mode" in done.stderr
