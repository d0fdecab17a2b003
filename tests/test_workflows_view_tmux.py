"""The terminal's ``/workflows`` view as tmux renders it: a workflow launched by the model runs in the background;
the view shows its phases, its agents running and done with their tokens, closes on a key, and when opened again
follows the run to its end (then the run's notification turn goes on)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.test_background_permission_tmux import Tmux, pytestmark  # noqa: F401  (skipped without tmux)

STATUS = "scripted (script.yaml) · "
WORKFLOW = """export const meta = {name: "survey", description: "Survey two areas", phases: [{title: "Scan"}, {title: "Report"}]}
phase("Scan")
const found = await parallel([() => agent("Scan area north"), () => agent("Scan area south", {label: "south"})])
phase("Report")
return await agent("Write the report")
"""
SCRIPT = {"turns": [
    {"match": {"last_user_contains": "<task-notification>"}, "repeat": True,
     "content": [{"type": "text", "text": "Survey finished."}]},
    {"match": {"first_user_contains": "Scan area north"}, "usage": {"input_tokens": 1234, "output_tokens": 10},
     "content": [{"type": "text", "text": "north is calm"}]},
    # still running while the test looks at the view (the delay is not a timing assertion)
    {"match": {"first_user_contains": "Scan area south"}, "delay_ms": 15000,
     "usage": {"input_tokens": 2000, "output_tokens": 10}, "content": [{"type": "text", "text": "south is busy"}]},
    {"match": {"first_user_contains": "Write the report"}, "content": [{"type": "text", "text": "the report"}]},
    {"match": {"last_user_contains": "run the survey", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_wf", "name": "Workflow", "input": {"script": WORKFLOW}}]},
    {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Survey started."}]},
]}


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Tmux]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(SCRIPT, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(home), CATUI_HOME=str(home / ".catui"), TERM="xterm-256color", CATUI_COMPAT="2.1.332",
               CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS="4")
    session = Tmux([sys.executable, "-m", "catui", "--model", f"scripted:{script}",
                    "--permission-mode", "bypassPermissions"], project, env)
    yield session
    session.close()


def line_with(lines: list[str], *parts: str) -> str:
    found = [line for line in lines if all(part in line for part in parts)]
    assert found, f"no line with {parts}; the screen:\n" + "\n".join(lines)
    return found[-1]


def test_the_workflows_view_shows_phases_agents_and_tokens_live(terminal: Tmux) -> None:
    tmux = terminal
    tmux.wait_for(STATUS, at_start=True)
    tmux.send("please run the survey", "Enter")
    tmux.wait_for("Survey started.")
    tmux.wait_for(STATUS, at_start=True)
    tmux.send("/workflows", "Enter")
    lines = tmux.wait_for("1 running, 1 done")
    header = line_with(lines, "◆ survey · Survey two areas · running · 1 running, 1 done")
    assert "1,244 tokens" in header
    assert "phases: ▸ Scan  · Report" in line_with(lines, "phases:")
    assert "done" in line_with(lines, "✓ Scan area north") and "1,244 tokens" in line_with(lines, "Scan area north")
    assert "running" in line_with(lines, "◐ south") and "[Scan]" in line_with(lines, "◐ south")
    assert "(any key closes this view)" in "\n".join(lines)

    tmux.send("q")  # closes the view; the run goes on and the prompt comes back
    lines = tmux.wait_for(STATUS, at_start=True)
    assert not any("any key closes" in line for line in lines)

    tmux.send("/workflows", "Enter")  # follows the run to its end, then gives the screen back
    lines = tmux.wait_for("✓ survey · Survey two areas · completed")
    assert "phases: ✓ Scan  ✓ Report" in line_with(lines, "phases:")
    assert "done" in line_with(lines, "✓ south") and "2,010 tokens" in line_with(lines, "✓ south")
    assert "done" in line_with(lines, "✓ Write the report")
    tmux.wait_for("Survey finished.")  # the run's notification turn
