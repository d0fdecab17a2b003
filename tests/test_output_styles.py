"""Output styles: the built-in and Markdown styles, the ``outputStyle`` setting, what the model's system prompt
becomes, and what the init message and the official SDK report. Through the real CLI on the loopback server."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from catui.session.prompt import CODING_INSTRUCTIONS, MAIN_AGENT_INTRO, main_system_prompt
from catui.styles.active import session_style, style_catalog
from catui.styles.model import OutputStyle
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, run_catui

OK = {"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]}


def write_style(folder: Path, stem: str, front: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.md").write_text(f"---\n{front}---\n{body}\n")


def make_project(tmp_path: Path, setting: str | None) -> Path:
    project = tmp_path / "project"
    styles = project / ".claude" / "output-styles"
    write_style(styles, "pirate", "name: Pirate\ndescription: Talks like a pirate\n", "Answer as a pirate would.")
    write_style(styles, "teacher", "description: Teaches\nkeep-coding-instructions: true\n", "Teach as you go.")
    if setting is not None:
        (project / ".claude" / "settings.json").write_text(json.dumps({"outputStyle": setting}))
    return project


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or []
    return system if isinstance(system, str) else "\n".join(b["text"] for b in system)


def test_catalog_order_precedence_and_fields(tmp_path: Path) -> None:
    project = make_project(tmp_path, None)
    home = tmp_path / "home"
    write_style(home / ".claude" / "output-styles", "pirate", "name: Pirate\n", "The user's pirate.")
    catalog = style_catalog(project, home=home)
    assert catalog.names() == ["default", "Explanatory", "Learning", "Pirate", "teacher"]
    pirate = catalog.get("Pirate")
    assert pirate is not None and pirate.prompt == "Answer as a pirate would." and pirate.source == "projectSettings"
    assert pirate.keep_coding_instructions is False and catalog.get("teacher").keep_coding_instructions is True  # type: ignore[union-attr]
    assert catalog.get("default") is None and catalog.get("Nope") is None
    explanatory = catalog.get("Explanatory")
    assert explanatory is not None and explanatory.keep_coding_instructions and "Insight" in explanatory.prompt
    unknown = session_style(project, {"outputStyle": "Nope"})
    assert unknown.style is None and unknown.name == "Nope" and "Nope" in (unknown.warning or "")


def test_the_style_replaces_or_extends_the_main_prompt() -> None:
    plain = main_system_prompt("ENV", "GIT")[0]["text"]
    assert plain.startswith(MAIN_AGENT_INTRO) and "Output Style" not in plain
    kept = OutputStyle("Kept", "d", "KEPT-PROMPT", "projectSettings", keep_coding_instructions=True)
    dropped = OutputStyle("Dropped", "d", "DROPPED-PROMPT", "projectSettings")
    with_kept = main_system_prompt("ENV", "GIT", "APPENDIX", kept)[0]["text"]
    assert CODING_INSTRUCTIONS in with_kept and with_kept.index("GIT") < with_kept.index("# Output Style: Kept\nKEPT")
    assert with_kept.endswith("APPENDIX") and not with_kept.startswith(MAIN_AGENT_INTRO)
    with_dropped = main_system_prompt("ENV", None, None, dropped)[0]["text"]
    assert CODING_INSTRUCTIONS not in with_dropped and "ENV" in with_dropped
    assert with_dropped.endswith("# Output Style: Dropped\nDROPPED-PROMPT")


@pytest.mark.parametrize(("setting", "reported", "expect_style", "coding"), [
    (None, "default", None, True),
    ("Explanatory", "Explanatory", "# Output Style: Explanatory", True),
    ("Pirate", "Pirate", "# Output Style: Pirate\nAnswer as a pirate would.", False),
    ("teacher", "teacher", "# Output Style: teacher\nTeach as you go.", True),
])
def test_print_mode_sends_the_configured_style(tmp_path: Path, setting: str | None, reported: str,
                                               expect_style: str | None, coding: bool) -> None:
    project = make_project(tmp_path, setting)
    with AnthropicTestServer(OK) as server:
        done = run_catui(project, cli_env(tmp_path, server), "-p", "hi", "--output-format", "stream-json",
                         "--verbose", timeout=60)
        assert done.returncode == 0, done.stderr
        system = system_text(server.requests[0].body)
    init = json.loads(done.stdout.splitlines()[0])
    assert init["output_style"] == reported
    assert (CODING_INSTRUCTIONS in system) is coding
    if expect_style is None:
        assert "# Output Style" not in system
    else:
        assert expect_style in system


def test_an_unknown_style_is_a_warning_and_the_default_is_used(tmp_path: Path) -> None:
    project = make_project(tmp_path, "Nope")
    with AnthropicTestServer(OK) as server:
        done = run_catui(project, cli_env(tmp_path, server), "-p", "hi", timeout=60)
        assert done.returncode == 0, done.stderr
        assert "# Output Style" not in system_text(server.requests[0].body)
    assert "outputStyle 'Nope' matches no output style" in done.stderr


def test_the_official_sdk_sees_the_styles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    project = make_project(tmp_path, None)
    with AnthropicTestServer(OK) as server:
        options = sdk.ClaudeAgentOptions(cli_path=str(Path(sys.executable).with_name("catui")), cwd=str(project),
                                         model="claude-sonnet-4-6", env=server.env(),
                                         system_prompt={"type": "preset", "preset": "claude_code"},
                                         settings=json.dumps({"outputStyle": "Learning"}))

        async def converse() -> tuple[Any, list[Any]]:
            async with sdk.ClaudeSDKClient(options) as client:
                info = await client.get_server_info()
                await client.query("hi")
                return info, [m async for m in client.receive_response()]

        info, messages = asyncio.run(asyncio.wait_for(converse(), 60))
        system = system_text(server.requests[0].body)
    assert info["output_style"] == "Learning"
    assert info["available_output_styles"] == ["default", "Explanatory", "Learning", "Pirate", "teacher"]
    init = next(m for m in messages if isinstance(m, sdk.SystemMessage) and m.subtype == "init")
    assert init.data["output_style"] == "Learning" and "# Output Style: Learning" in system
