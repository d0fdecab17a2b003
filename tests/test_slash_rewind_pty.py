"""``/rewind`` in a terminal: catui in a pseudo-terminal on the scripted model, file checkpointing turned on
by the project's settings; the files of later prompts are put back, and bad choices are one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.test_cli_interactive_pty import PROMPT_READY, start_catui


def script(project: Path) -> dict[str, Any]:
    def write(name: str, content: str) -> dict[str, Any]:
        return {"type": "tool_use", "name": "Write", "input": {"file_path": str(project / name), "content": content}}

    return {"turns": [
        {"match": {"last_user_contains": "make notes"}, "content": [write("notes.txt", "first draft\n")]},
        {"match": {"last_user_contains": "rewrite notes"},
         "content": [write("notes.txt", "second draft\n"), write("extra.txt", "more\n")]},
        {"match": {"last_is_tool_result": True}, "repeat": True, "content": [{"type": "text", "text": "Written."}]},
    ]}


def test_rewind_lists_the_prompts_that_changed_files_and_restores_them(tmp_path: Path) -> None:
    ws = {"home": tmp_path / "home", "catui_home": tmp_path / "home" / ".catui", "project": tmp_path / "project",
          "tmp": tmp_path}
    ws["home"].mkdir()
    (ws["project"] / ".claude").mkdir(parents=True)
    (ws["project"] / ".claude" / "settings.json").write_text(json.dumps({"env": {"CATUI_FILE_CHECKPOINTING": "1"}}))
    notes, extra = ws["project"] / "notes.txt", ws["project"] / "extra.txt"
    tui = start_catui(ws, script(ws["project"]), "--permission-mode", "acceptEdits")
    try:
        tui.expect(PROMPT_READY)
        tui.send("/rewind\r")
        tui.expect(r"No file has been changed by a file tool in this session yet\.")
        tui.send("make notes please\r")
        tui.expect(r"Written\.")
        tui.expect(PROMPT_READY)
        tui.send("now rewrite notes\r")
        tui.expect(r"Written\.")
        tui.expect(PROMPT_READY)
        assert notes.read_text() == "second draft\n" and extra.exists()

        tui.send("/rewind\r")
        tui.expect(r"1\. make notes please\s+· 1 file")
        tui.expect(r"2\. now rewrite notes\s+· 2 files")
        tui.expect(r"Rewind files to before which prompt\?")
        tui.send("2\r")
        tui.expect(r"Files as before .now rewrite notes.: restored 1, removed 1\.")
        assert notes.read_text() == "first draft\n" and not extra.exists()

        tui.send("/rewind 7\r")
        tui.expect(r"'7' is not one of the prompts listed \(1 to 2\)")
        tui.send("/rewind 1\r")
        tui.expect(r"restored 0, removed 1\.")
        assert not notes.exists()
    finally:
        tui.close()
