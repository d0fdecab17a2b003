"""The official TypeScript Agent SDK (``@anthropic-ai/claude-agent-sdk``) driving the real ``catui`` CLI.

``.ci/run`` installs two releases with npm into a folder outside the
repository (``$CATUI_TS_SDK_DIR``, by default ``~/.cache/catui-ts-sdk``):
``current/`` (the release of today) and ``cc-2.1.92/`` (the one whose bundled
CLI is Claude Code 2.1.92). A test writes a small ES module that imports the
SDK, runs it with node and reads back the JSON lines it prints. The SDK starts
catui through ``pathToClaudeCodeExecutable``: a shell wrapper that runs
``python -m catui`` from this checkout (a path without ``.js`` is executed
directly, as the SDK does for a native binary).

A test case script gets these globals from the prelude: ``sdk`` (the SDK
module), ``z`` (zod, for ``tool()`` schemas), ``emit(value)`` (one JSON line
back to the test), ``collect(query)`` (emits every message of a query and returns them) and ``base`` (the options every case needs: the wrapper,
``cwd``, the environment). Top-level ``await`` works.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.loopback import started_servers

SRC = Path(__file__).resolve().parents[2] / "src"
RELEASES = ("current", "cc-2.1.92")

ServerFactory = Callable[..., AnthropicTestServer]


@pytest.fixture
def loopback() -> Iterator[ServerFactory]:
    """Loopback Anthropic servers started for a test (a test module imports this fixture by name)."""
    yield from started_servers(AnthropicTestServer)


@pytest.fixture(params=RELEASES)
def release(request: pytest.FixtureRequest) -> str:
    """Each installed TypeScript SDK release in turn (a test module imports this fixture by name)."""
    return str(request.param)
"""The folders under the SDK dir: the current release, and 0.2.92 (Claude Code 2.1.92's)."""
GUARD_S = 120  # a broken protocol stops the case here instead of hanging the suite (not a timing assertion)

PRELUDE = """\
import * as sdk from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
const emit = (value) => process.stdout.write(JSON.stringify(value) + "\\n");
const base = JSON.parse(process.env.CATUI_TS_CASE_BASE);
base.stderr = (text) => process.stderr.write(text);
const collect = async (q) => { const out = []; for await (const m of q) { out.push(m); emit(m); } return out; };
"""


def sdk_dir() -> Path:
    return Path(os.environ.get("CATUI_TS_SDK_DIR") or Path.home() / ".cache" / "catui-ts-sdk")


def unavailable(release: str) -> str | None:
    """Why the TypeScript SDK ``release`` cannot run here (None: it can)."""
    if shutil.which("node") is None:
        return "node is not installed (.ci/run installs it with apt-get)"
    package = sdk_dir() / release / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"
    if not package.is_file():
        return f"@anthropic-ai/claude-agent-sdk ({release}) is not installed in {sdk_dir()}; run .ci/run"
    return None


def sdk_version(release: str) -> str:
    package = sdk_dir() / release / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"
    return str(json.loads(package.read_text(encoding="utf-8"))["version"])


@dataclass
class TsRun:
    """What a case printed (``lines``: its ``emit`` values) and what catui wrote on stderr."""

    lines: list[Any]
    stderr: str
    returncode: int

    def messages(self) -> list[dict[str, Any]]:
        """The SDK messages the case emitted (dicts with a ``type``)."""
        return [line for line in self.lines if isinstance(line, dict) and "type" in line]

    def result(self) -> dict[str, Any]:
        return next(m for m in reversed(self.messages()) if m["type"] == "result")

    def init(self) -> dict[str, Any]:
        return next(m for m in self.messages() if m["type"] == "system" and m.get("subtype") == "init")


def catui_wrapper(folder: Path) -> Path:
    """A shell script that runs this checkout's catui with this interpreter (the SDK's CLI path)."""
    wrapper = folder / "catui-cli"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m catui "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper


def case_env(tmp_path: Path, server: Any, **extra: str) -> dict[str, str]:
    """The environment of node and so of catui: a fresh HOME, CATUI_HOME and CLAUDE_CONFIG_DIR in ``tmp_path``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CATUI_HOME": str(tmp_path / "catui-home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"),
        "PYTHONPATH": str(SRC),
        "CATUI_MAX_RETRIES": "0",
        "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
        **server.env(),
        **extra,
    }


def run_case(release: str, body: str, tmp_path: Path, server: Any, *, env: dict[str, str] | None = None,
             model: str = "claude-sonnet-4-6") -> TsRun:
    """Run ``body`` (an ES module's statements after the prelude) with SDK ``release`` against ``server``."""
    reason = unavailable(release)
    if reason is not None:
        pytest.skip(reason)
    case = tmp_path / f"case-{release}"
    case.mkdir(exist_ok=True)
    modules = case / "node_modules"
    if not modules.exists():
        modules.symlink_to(sdk_dir() / release / "node_modules", target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    script = case / "case.mjs"
    script.write_text(PRELUDE + body, encoding="utf-8")
    full_env = env if env is not None else case_env(tmp_path, server)
    base = {"pathToClaudeCodeExecutable": str(catui_wrapper(case)), "cwd": str(work), "model": model,
            "env": full_env}
    done = subprocess.run(["node", str(script)], cwd=case, env={**full_env, "CATUI_TS_CASE_BASE": json.dumps(base)},
                          capture_output=True, text=True, timeout=GUARD_S)
    lines = []
    for line in done.stdout.splitlines():
        line = line.strip()
        if line:
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                lines.append(line)
    return TsRun(lines=lines, stderr=done.stderr, returncode=done.returncode)
