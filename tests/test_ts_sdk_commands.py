"""Custom slash commands and output styles through the official TypeScript Agent SDK driving the real CLI.

Issue 27, points 7 and 10, with both SDK releases (tests/support/ts_sdk.py) on the loopback Anthropic
server: what the init message reports, and what the model was actually sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.ts_sdk import ServerFactory, loopback, release, run_case

__all__ = ["loopback", "release"]  # fixtures used by name

OK = {"turns": [{"repeat": True, "content": [{"type": "text", "text": "ok"}]}]}


def project_file(tmp_path: Path, relative: str, text: str) -> None:
    """Write ``text`` under the case's project folder (``work``, the SDK's ``cwd``)."""
    path = tmp_path / "work" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def last_texts(body: dict[str, Any]) -> list[str]:
    return [block["text"] for block in body["messages"][-1]["content"] if block.get("type") == "text"]


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or []
    return system if isinstance(system, str) else "\n".join(block["text"] for block in system)


def test_a_project_command_is_listed_and_its_expansion_reaches_the_model(release: str, loopback: ServerFactory,
                                                                         tmp_path: Path) -> None:
    project_file(tmp_path, ".claude/commands/greet.md", "---\ndescription: Greets\n---\nSay hello to $ARGUMENTS.\n")
    server = loopback(OK)
    run = run_case(release, """
await collect(sdk.query({ prompt: "/greet Ada", options: { ...base, settingSources: ["project"] } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    assert "greet" in run.init()["slash_commands"]
    (body,) = server.bodies()
    assert last_texts(body)[-2:] == [
        "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>Ada</command-args>\n",
        "Say hello to Ada.\n"]
    assert run.result()["result"] == "ok" and run.result()["is_error"] is False


def test_the_output_style_setting_is_reported_and_its_prompt_is_sent(release: str, loopback: ServerFactory,
                                                                     tmp_path: Path) -> None:
    project_file(tmp_path, ".claude/output-styles/pirate.md",
                 "---\nname: Pirate\ndescription: Talks like a pirate\n---\nAnswer as a pirate would.\n")
    project_file(tmp_path, ".claude/output-styles/teacher.md",
                 "---\ndescription: Teaches\nkeep-coding-instructions: true\n---\nTeach as you go.\n")
    project_file(tmp_path, ".claude/settings.json", json.dumps({"outputStyle": "Pirate"}))
    server = loopback(OK)
    run = run_case(release, """
const options = { ...base, settingSources: ["project"], systemPrompt: { type: "preset", preset: "claude_code" } };
await collect(sdk.query({ prompt: "from the project settings", options }));
await collect(sdk.query({ prompt: "from the settings option", options: { ...options, settings: { outputStyle: "teacher" } } }));
""", tmp_path, server)
    assert run.returncode == 0, run.stderr
    inits = [m for m in run.messages() if m["type"] == "system" and m.get("subtype") == "init"]
    assert [init["output_style"] for init in inits] == ["Pirate", "teacher"]
    from_project, from_option = (system_text(body) for body in server.bodies())
    assert "# Output Style: Pirate\nAnswer as a pirate would." in from_project and "Teach as you go." not in from_project
    assert "# Output Style: teacher\nTeach as you go." in from_option and "pirate" not in from_option
