"""``/output-style`` in the terminal: lists the styles, switches the running session, remembers the choice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_cli_interactive_pty import PROMPT_READY, PtyProcess, start_catui

SCRIPT = {"turns": [
    {"match": {"system_contains": "# Output Style: Pirate\nAnswer as a pirate would."}, "repeat": True,
     "content": [{"type": "text", "text": "Arr, styled answer."}]},
    {"repeat": True, "content": [{"type": "text", "text": "Plain answer."}]},
]}


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    project = tmp_path / "project"
    styles = project / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "pirate.md").write_text("---\nname: Pirate\ndescription: Talks like a pirate\n---\n"
                                      "Answer as a pirate would.\n")
    (tmp_path / "home").mkdir()
    return {"home": tmp_path / "home", "catui_home": tmp_path / "home" / ".catui", "project": project, "tmp": tmp_path}


@pytest.fixture
def tui(workspace: dict[str, Path]) -> Iterator[PtyProcess]:
    proc = start_catui(workspace, SCRIPT)
    yield proc
    proc.close()


def test_output_style_lists_switches_and_remembers(tui: PtyProcess, workspace: dict[str, Path]) -> None:
    tui.expect(PROMPT_READY)
    tui.send("hello\r")
    tui.expect(r"Plain answer\.")
    tui.expect(PROMPT_READY)
    tui.send("/output-style\r")
    tui.expect(r"❯ default · ")
    tui.expect(r"Explanatory · .*\[built-in\]")
    tui.expect(r"Pirate · Talks like a pirate \[projectSettings\]")
    tui.send("/output-style Nope\r")
    tui.expect(r"/output-style: no output style named 'Nope'")
    tui.send("/output-style Pirate\r")
    tui.expect(r"Output style set to Pirate")
    tui.send("hello again\r")
    tui.expect(r"Arr, styled answer\.")
    saved = json.loads((workspace["project"] / ".catui" / "settings.local.json").read_text())
    assert saved == {"outputStyle": "Pirate"}
