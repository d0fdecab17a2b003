"""Plan approval at the terminal: ExitPlanMode shows the plan file and its allowedPrompts, and a numbered answer approves."""

from __future__ import annotations

import re
from pathlib import Path

from catui.tools.plan_file import plan_slug
from tests.test_cli_interactive_pty import PROMPT_READY, launch, workspace  # noqa: F401 - fixtures


def test_exit_plan_mode_shows_the_plan_and_approval_leaves_plan_mode(launch, workspace) -> None:  # noqa: F811
    script = {
        "turns": [
            {"match": {"last_user_contains": "hello", "last_is_tool_result": False},
             "content": [{"type": "text", "text": "Hi there."}]},
            {"match": {"last_user_contains": "plan it", "last_is_tool_result": False},
             "content": [{"type": "tool_use", "name": "EnterPlanMode", "input": {}}]},
            {"match": {"last_user_contains": "Entered plan mode"},
             "content": [{"type": "tool_use", "name": "ExitPlanMode",
                          "input": {"allowedPrompts": [{"tool": "Bash", "prompt": "run the tests"}]}}]},
            {"match": {"last_user_contains": "approved the plan"},
             "content": [{"type": "text", "text": "Implementing the approved plan."}]},
        ]
    }
    tui = launch(script)
    tui.expect(PROMPT_READY)
    tui.send("hello\r")
    tui.expect(r"Hi there\.")
    tui.expect(PROMPT_READY)

    # The session's plan file follows from its id (the transcript's name); write the plan there.
    transcripts = list((workspace["catui_home"] / "projects").glob("*/*.jsonl"))
    assert len(transcripts) == 1
    plan_file: Path = workspace["catui_home"] / "plans" / f"{plan_slug(transcripts[0].stem)}.md"
    plan_file.parent.mkdir(parents=True)
    plan_file.write_text("# Plan\n1. Add the PLAN-STEP-ONE function\n", encoding="utf-8")

    tui.send("plan it\r")
    tui.expect(r"Plan \(" + re.escape(str(plan_file)) + r"\)")
    tui.expect(r"1\. Add the PLAN-STEP-ONE function")
    tui.expect(r"run the tests[\s\S]*Approve this plan[\s\S]*1\. Yes, proceed[\s\S]*Answer")
    tui.send("1\r")
    tui.expect(r"Implementing the approved plan\.")
    tui.expect(PROMPT_READY)
    tui.send(b"\x04")
    assert tui.wait_exit() == 0
