"""``catui demo`` end to end: offline, no API key, real tools on a real copy of the sample project."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from catui.cli.commands.demo import DEMO_TASK, demo_script, packaged_path


def offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"))
    # a proxy that points nowhere: any attempt at the network would fail loudly
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")
    return env


def run_demo(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "catui", "demo", "--fast", "--dir", str(tmp_path / "work"), *args],
        cwd=tmp_path,
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp_path = tmp_path_factory.mktemp("demo")
    return run_demo(tmp_path), tmp_path


def test_demo_exits_zero_and_shows_every_tool(demo_run) -> None:
    done, _ = demo_run
    assert done.returncode == 0, done.stdout + done.stderr
    for tool_line in ("Glob(", "Grep(", "Read(", "Edit(calc/stats.py)", "Bash("):
        assert tool_line in done.stdout, f"{tool_line} missing from:\n{done.stdout}"
    assert "Traceback" not in done.stdout + done.stderr


def test_demo_runs_two_explore_agents_and_a_general_purpose_agent(demo_run) -> None:
    done, _ = demo_run
    out = done.stdout
    assert "Explore(Map the project layout)" in out
    assert "Explore(Find the tests)" in out
    assert "general-purpose(Review the fix)" in out
    # the sub-agents' own tool calls show as progress under them
    assert re.search(r"⎿ Explore › (Glob|Grep|Read)\(", out)
    assert re.search(r"⎿ general-purpose › (Read|Grep)\(", out)
    assert len(re.findall(r"⎿ Done \(\d+ tool uses? · ", out)) == 3


def test_demo_really_edits_the_copy_and_the_tests_pass_afterwards(demo_run) -> None:
    done, _ = demo_run
    found = re.search(r"Project copy \(edited\): (.+)", done.stdout)
    assert found, done.stdout
    project = Path(found.group(1).strip())
    stats = (project / "calc" / "stats.py").read_text(encoding="utf-8")
    assert "return sum(values) / len(values)" in stats
    assert "len(values) + 1" not in stats
    assert "Ran 5 tests" in done.stdout and "OK" in done.stdout
    tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=project, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stderr
    log = subprocess.run(["git", "log", "--oneline"], cwd=project, capture_output=True, text=True)
    assert "Sample project for catui demo" in log.stdout
    status = subprocess.run(["git", "status", "--short"], cwd=project, capture_output=True, text=True)
    assert "calc/stats.py" in status.stdout  # the edit is an uncommitted change on top of the commit
    # the packaged original is untouched
    assert "len(values) + 1" in (packaged_path("demo_project") / "calc" / "stats.py").read_text(encoding="utf-8")


def test_demo_prints_a_transcript_that_holds_the_edit(demo_run) -> None:
    done, tmp_path = demo_run
    found = re.search(r"Transcript: (.+\.jsonl)", done.stdout)
    assert found, done.stdout
    transcript = Path(found.group(1).strip())
    assert transcript.is_file()
    assert str(tmp_path / "home" / ".catui") in str(transcript)
    tool_uses = []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        content = json.loads(line).get("message", {}).get("content")
        if isinstance(content, list):
            tool_uses += [b for b in content if b.get("type") == "tool_use"]
    edits = [b for b in tool_uses if b["name"] == "Edit"]
    assert edits and edits[0]["input"]["new_string"] == "return sum(values) / len(values)"
    assert {b["name"] for b in tool_uses} >= {"Glob", "Grep", "Read", "Edit", "Bash", "Agent"}


def test_demo_help_explains_it() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "catui", "demo", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "offline demo" in text
    assert "no API key" in text
    assert "Explore agents" in text


def test_demo_script_fills_placeholders_and_can_leave_out_subagents(tmp_path: Path) -> None:
    full = demo_script(tmp_path, with_subagents=True, fast=True)
    text = json.dumps(full)
    assert "${PROJECT}" not in text and "${PYTHON}" not in text
    assert str(tmp_path) in text
    assert all("delay_ms" not in turn for turn in full["turns"])
    alone = demo_script(tmp_path, with_subagents=False, fast=False)
    assert not any(block.get("name") == "Agent" for turn in alone["turns"] for block in turn["content"])
    assert any("delay_ms" in turn for turn in demo_script(tmp_path, with_subagents=True, fast=False)["turns"])
    # the main agent's turns all key on the task the demo sends
    main_turns = [t for t in full["turns"] if "Find the bug, fix it" in json.dumps(t.get("match", {}))]
    assert main_turns and "Find the bug, fix it" in DEMO_TASK
