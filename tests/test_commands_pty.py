"""Custom slash commands in the terminal: /help lists them, Tab completes their names, typing one runs it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_cli_interactive_pty import PROMPT_READY, PtyProcess, start_catui

SCRIPT = {"turns": [
    {"match": {"last_user_contains": "<command-name>/review:deep</command-name>"}, "repeat": True,
     "content": [{"type": "text", "text": "Reviewed as asked."}]},
    {"repeat": True, "content": [{"type": "text", "text": "plain answer"}]},
]}


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    project = tmp_path / "project"
    commands = project / ".claude" / "commands" / "review"
    commands.mkdir(parents=True)
    (commands / "deep.md").write_text("---\ndescription: Review deeply\nargument-hint: <path>\n---\n"
                                      "Review $ARGUMENTS with care.\n")
    (tmp_path / "home").mkdir()
    return {"home": tmp_path / "home", "catui_home": tmp_path / "home" / ".catui", "project": project, "tmp": tmp_path}


@pytest.fixture
def tui(workspace: dict[str, Path]) -> Iterator[PtyProcess]:
    proc = start_catui(workspace, SCRIPT)
    yield proc
    proc.close()


def test_help_completion_and_running_a_command(tui: PtyProcess, workspace: dict[str, Path]) -> None:
    tui.expect(PROMPT_READY)
    tui.send("/help\r")
    tui.expect(r"Custom commands and skills:")
    tui.expect(r"/review:deep <path>\s+Review deeply \(project command\)")
    tui.expect(PROMPT_READY)
    tui.send("/rev\t")  # one match: completed, with a space to type the arguments after
    tui.expect(r"/review:deep ")
    tui.send("src/app.py\r")
    tui.expect(r"Reviewed as asked\.")
    tui.expect(PROMPT_READY)
    (transcript,) = (workspace["catui_home"] / "projects").glob("*/*.jsonl")
    lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    sent = next(line for line in lines if line.get("type") == "user")
    blocks = [b["text"] for b in sent["message"]["content"] if b.get("type") == "text"]
    assert blocks[-2:] == [
        "<command-message>review:deep</command-message>\n<command-name>/review:deep</command-name>\n"
        "<command-args>src/app.py</command-args>\n",
        "Review src/app.py with care.\n"]
