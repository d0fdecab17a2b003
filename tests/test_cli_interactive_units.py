"""The interactive UI's parts on their own: labels, key decoding, line editing, the turn view, prompts."""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path

import pytest

from catui.cli.tui.ask import parse_answer
from catui.cli.tui.format import (
    agent_done_line,
    cell_width,
    fit,
    format_duration,
    format_tokens,
    tool_call_label,
    tool_result_lines,
)
from catui.cli.tui.permission import PermissionPrompter, call_preview, denial_message, session_rule_for
from catui.cli.tui.progress import SUBAGENT_LINE_DELAY_S, TurnView
from catui.cli.tui.screen import Screen
from catui.cli.tui.status import run_status_command, status_command
from catui.cli.tui.terminal import _EditState, key, split_keys
from catui.permissions.context import PermissionContext, PermissionRequest
from catui.session.events import (
    ResultEvent,
    TextDelta,
    ThinkingDelta,
    ToolEndEvent,
    ToolStartEvent,
    UsageEvent,
)
from catui.tools.base import ToolContext

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def plain_screen() -> tuple[Screen, io.StringIO]:
    out = io.StringIO()
    return Screen(out, tty=False, color=False), out


# -- labels -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "tool_input", "label"),
    [
        ("Read", {"file_path": "/p/src/app.py"}, "Read(src/app.py)"),
        ("Read", {"file_path": "/elsewhere/x.py"}, "Read(/elsewhere/x.py)"),
        ("Bash", {"command": "pytest -q\necho done"}, "Bash(pytest -q …)"),
        ("Grep", {"pattern": "def main", "path": "/p/src"}, "Grep(def main in src)"),
        ("Glob", {"pattern": "**/*.py", "path": "/p"}, "Glob(**/*.py)"),
        ("Agent", {"subagent_type": "Explore", "description": "Find it", "prompt": "x"}, "Explore(Find it)"),
        ("Task", {"description": "Do it", "prompt": "x"}, "general-purpose(Do it)"),
        ("TodoWrite", {"todos": [{}, {}]}, "TodoWrite(2 items)"),
        ("WebFetch", {"url": "https://example.com", "prompt": "p"}, "WebFetch(https://example.com)"),
    ],
)
def test_tool_call_labels(name: str, tool_input: dict, label: str) -> None:
    assert tool_call_label(name, tool_input, Path("/p")) == label


def test_result_lines_summarise_by_tool() -> None:
    assert tool_result_lines("Read", "     1\ta\n     2\tb\n", False) == ["Read 2 lines"]
    assert tool_result_lines("Glob", "/a.py\n/b.py\n/c.py", False) == ["Found 3 files"]
    assert tool_result_lines("Grep", "/a.py:3:def x\n/b.py:9:def y", False) == ["Found 2 lines"]
    assert tool_result_lines("Grep", "No matches found", False) == ["No matches found"]
    edit = tool_result_lines("Edit", "ok", False, tool_input={"file_path": "/p/a.py", "old_string": "x",
                                                              "new_string": "y\nz"}, cwd=Path("/p"))
    assert edit == ["Updated a.py (+2 -1 lines)"]
    error = tool_result_lines("Write", "<tool_use_error>File has not been read yet</tool_use_error>", True)
    assert error == ["File has not been read yet"]


def test_bash_results_show_the_tail_of_the_output() -> None:
    output = "\n".join(["=" * 20, "line 1", "line 2", "line 3", "-" * 20, "Ran 5 tests", "", "FAILED (failures=1)"])
    assert tool_result_lines("Bash", output, True) == ["… +2 lines", "line 3", "Ran 5 tests", "FAILED (failures=1)"]
    assert tool_result_lines("Bash", "", False) == ["(no output)"]


def test_agent_done_line_and_number_formats() -> None:
    data = {"totalToolUseCount": 3, "totalTokens": 12345, "totalDurationMs": 75_000}
    assert agent_done_line(data) == "Done (3 tool uses · 12.3k tokens · 1m 15s)"
    assert agent_done_line({"status": "async_launched"}) == "Running in the background"
    assert format_tokens(950) == "950" and format_tokens(2_500_000) == "2.5M"
    assert format_duration(4.9) == "4s"


def test_fit_counts_wide_characters_and_keeps_styles_closed() -> None:
    assert cell_width("日本") == 4
    assert fit("日本語のテキスト", 7) == "日本語…"
    styled = fit("\x1b[2m" + "x" * 50 + "\x1b[0m", 10)
    assert ANSI.sub("", styled) == "x" * 9 + "…"
    assert styled.endswith("\x1b[0m")


# -- keys and line editing --------------------------------------------------------------------------


def test_split_keys_decodes_controls_arrows_and_text() -> None:
    assert split_keys("ab\x1b[Dc\r") == ["ab", key("left"), "c", key("enter")]
    assert split_keys("\x03\x02\x04") == [key("ctrl-c"), key("ctrl-b"), key("ctrl-d")]
    assert split_keys("\x1b") == [key("esc")]
    assert split_keys("\x1b[3~\x7f") == [key("delete"), key("backspace")]
    assert split_keys("enter") == ["enter"]  # typed words are text, never keys
    assert split_keys("\x1b[200~x") == ["x"]  # unknown CSI sequences are skipped


def test_edit_state_moves_inserts_and_deletes() -> None:
    state = _EditState([], 0, 0)
    for token in ("hello world", key("ctrl-w"), "there", key("home"), "X", key("end"), key("backspace")):
        state.apply(token)
    assert state.text == "Xhello ther"
    state.apply(key("ctrl-a"))
    state.apply(key("right"))
    state.apply(key("ctrl-k"))
    assert state.text == "X"


# -- the turn view ----------------------------------------------------------------------------------


def agent_start(tool_use_id: str, description: str, parent: str | None = None) -> ToolStartEvent:
    return ToolStartEvent(
        tool_use_id=tool_use_id, name="Agent",
        input={"subagent_type": "Explore", "description": description, "prompt": "p"},
        parent_tool_use_id=parent, agent_id="child" if parent else None,
    )


def test_subagent_lines_appear_after_two_seconds_nested_under_their_calls() -> None:
    clock = FakeClock()
    out = io.StringIO()
    screen = Screen(out, tty=True, color=False)
    view = TurnView(screen, cwd=Path("/p"), clock=clock)
    view.start_turn()
    view.handle(agent_start("call_a", "Survey alpha"))
    view.handle(agent_start("call_b", "Survey beta"))
    view.handle(ToolStartEvent(tool_use_id="t1", name="Grep", input={"pattern": "x"},
                               parent_tool_use_id="call_a", agent_id="a1"))
    view.handle(UsageEvent(model="m", usage={"input_tokens": 1500, "output_tokens": 20},
                           parent_tool_use_id="call_a", agent_id="a1"))
    view.handle(agent_start("call_c", "Nested look", parent="call_b"))
    lines = view.live_lines(clock.now + 1)
    assert not any("⎿" in line for line in lines)  # not yet two seconds
    clock.now += SUBAGENT_LINE_DELAY_S + 1
    lines = [ANSI.sub("", line) for line in view.live_lines(clock.now)]
    a, b = lines.index("● Explore(Survey alpha)"), lines.index("● Explore(Survey beta)")
    assert lines[a + 1].startswith("  ⎿ Explore · Survey alpha · 1 tool use · 1.5k tokens · 3s · Grep(x)")
    assert lines[b + 1].startswith("  ⎿ Explore · Survey beta · 1 tool use · 0 tokens · 3s")
    assert lines[b + 2].startswith("     ⎿ Explore · Nested look · 0 tool uses")  # nested one level deeper
    assert "Working" in lines[-1]
    view.handle(ToolEndEvent(tool_use_id="call_a", name="Agent", is_error=False, content="ok",
                             data={"totalToolUseCount": 1, "totalTokens": 1520, "totalDurationMs": 3000}))
    lines = [ANSI.sub("", line) for line in view.live_lines(clock.now)]
    assert "● Explore(Survey alpha)" not in lines and "● Explore(Survey beta)" in lines
    assert "Explore(Survey alpha)\n  ⎿ Done (1 tool use · 1.5k tokens · 3s)" in ANSI.sub("", out.getvalue())


def test_the_spinner_says_thinking_while_thinking_deltas_stream() -> None:
    clock = FakeClock()
    view = TurnView(Screen(io.StringIO(), tty=True, color=False), cwd=Path("/p"), clock=clock)
    view.start_turn()
    view.handle(ThinkingDelta(text="Let me see"))
    assert ANSI.sub("", view.live_lines(clock.now)[-1]).split(" (")[0].endswith("Thinking…")
    view.handle(TextDelta(text="Answer"))
    assert ANSI.sub("", view.live_lines(clock.now)[-1]).split(" (")[0].endswith("Working…")


def test_plain_output_streams_text_and_prints_calls_with_outcomes() -> None:
    clock = FakeClock()
    screen, out = plain_screen()
    view = TurnView(screen, cwd=Path("/p"), clock=clock)
    view.start_turn()
    for part in ("Looking", " around.\nSecond line"):
        view.handle(TextDelta(text=part))
    view.handle(ToolStartEvent(tool_use_id="t1", name="Read", input={"file_path": "/p/a.py"}))
    view.handle(ToolEndEvent(tool_use_id="t1", name="Read", is_error=False, content="     1\tx\n"))
    view.handle(agent_start("call_a", "Survey"))
    view.handle(ToolStartEvent(tool_use_id="t2", name="Glob", input={"pattern": "*"},
                               parent_tool_use_id="call_a", agent_id="a1"))
    clock.now += SUBAGENT_LINE_DELAY_S
    view.tick()
    view.handle(ResultEvent(subtype="error_during_execution", is_error=True, result="Interrupted by the user.",
                            session_id="s", num_turns=1, duration_ms=1, duration_api_ms=1, usage={},
                            model_usage={}, total_cost_usd=0))
    text = out.getvalue()
    assert "\x1b" not in text
    assert "● Looking around.\n  Second line\n● Read(a.py)\n  ⎿ Read 1 line\n" in text
    assert "● Explore(Survey) …\n    ⎿ Explore › Glob(*)\n" in text
    assert "  ⎿ Explore · Survey · 1 tool use · 0 tokens · 2s · Glob(*) (running)" in text
    assert text.rstrip().endswith("⎿ Interrupted by the user.")


# -- permission prompt ------------------------------------------------------------------------------


def test_session_rules_cover_one_folder_for_files_and_the_exact_command_for_bash() -> None:
    edit = PermissionRequest(tool_name="Edit", file_path=Path("/p/src/a.py"), subject="/p/src/a.py", is_edit=True)
    assert str(session_rule_for(edit, (Path("/w"), Path("/p")))) == "Edit(//p/**)"
    outside = session_rule_for(edit, (Path("/w"),))
    assert str(outside) == "Edit(//p/src/**)"
    context = PermissionContext(working_directories=(Path("/w"),)).with_rules(outside)
    assert context.decide(PermissionRequest("Edit", file_path=Path("/p/src/b.py"), is_edit=True)).behavior == "allow"
    assert context.decide(PermissionRequest("Edit", file_path=Path("/etc/passwd"), is_edit=True)).behavior == "ask"
    bash = PermissionRequest(tool_name="Bash", subject="npm test")
    rule = session_rule_for(bash)
    assert str(rule) == "Bash(npm test)" and rule.behavior == "allow" and rule.source == "session"


def test_denial_message_carries_the_reason() -> None:
    assert "use the staging database" in denial_message("Bash", "use the staging database")
    assert "did not run" in denial_message("Bash", "")


def test_call_preview_shows_what_would_change() -> None:
    assert call_preview("Edit", {"old_string": "a", "new_string": "b"}) == ["- a", "+ b"]
    long = call_preview("Write", {"content": "\n".join(str(i) for i in range(20))})
    assert long[-1] == "… 12 more lines" and len(long) == 9


class FakeTool:
    name = "Bash"


async def test_plain_prompt_answers_allow_always_and_deny_with_reason(tmp_path: Path) -> None:
    screen, out = plain_screen()
    answers = iter(["y", "always", "no because it deletes data"])

    async def read_line() -> str | None:
        return next(answers)

    interrupted: list[bool] = []
    main_ctx = ToolContext(cwd=tmp_path, project_root=tmp_path, permissions=PermissionContext())
    child_ctx = ToolContext(cwd=tmp_path, project_root=tmp_path, permissions=PermissionContext(),
                            agent_type="general-purpose")
    prompter = PermissionPrompter(screen, keys=None, editor=None, read_plain_line=read_line,
                                  on_interrupt=lambda: interrupted.append(True), main_context=lambda: main_ctx)
    request = PermissionRequest(tool_name="Bash", subject="rm -rf build")
    tool = FakeTool()
    first = await prompter(tool, {"command": "rm -rf build"}, request, main_ctx)  # type: ignore[arg-type]
    assert first.behavior == "allow" and main_ctx.permissions.rules == ()
    second = await prompter(tool, {"command": "rm -rf build"}, request, child_ctx)  # type: ignore[arg-type]
    assert second.behavior == "allow"
    # "don't ask again" given to a sub-agent's call covers the main agent too
    assert [str(r) for r in child_ctx.permissions.rules] == ["Bash(rm -rf build)"]
    assert list(map(str, main_ctx.permissions.rules)) == ["Bash(rm -rf build)"]
    third = await prompter(tool, {"command": "rm -rf build"}, request, main_ctx)  # type: ignore[arg-type]
    assert third.behavior == "deny" and "because it deletes data" in third.reason
    assert "asked by the general-purpose agent" in out.getvalue()
    assert "Bash(rm -rf build)" in out.getvalue()
    assert not interrupted


async def test_concurrent_permission_prompts_are_asked_one_at_a_time(tmp_path: Path) -> None:
    screen, out = plain_screen()
    gate = asyncio.Event()
    asked: list[int] = []

    async def read_line() -> str | None:
        asked.append(out.getvalue().count("Permission needed"))
        await gate.wait()
        return "y"

    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    prompter = PermissionPrompter(screen, keys=None, editor=None, read_plain_line=read_line, on_interrupt=lambda: None)
    request = PermissionRequest(tool_name="Bash", subject="make")
    both = asyncio.gather(*(prompter(FakeTool(), {"command": "make"}, request, ctx) for _ in range(2)))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    assert asked == [1]  # the second prompt waits for the first answer
    gate.set()
    decisions = await both
    assert [d.behavior for d in decisions] == ["allow", "allow"] and asked == [1, 2]


# -- status line and questions ----------------------------------------------------------------------


def test_status_command_reads_claude_codes_setting_shape() -> None:
    assert status_command({"statusLine": {"type": "command", "command": "echo hi"}}) == "echo hi"
    assert status_command({"statusLine": {"type": "command", "command": "  "}}) is None
    assert status_command({"statusLine": "echo hi"}) is None
    assert status_command({}) is None


async def test_status_command_gets_json_on_stdin_and_shows_its_first_line(tmp_path: Path) -> None:
    line = await run_status_command("python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"cwd\"]); print(2)'",
                                    {"cwd": "/somewhere"}, tmp_path)
    assert line == "/somewhere"
    with pytest.raises(RuntimeError, match="exit status 3"):
        await run_status_command("exit 3", {}, tmp_path)


def test_question_answers_by_number_or_own_words() -> None:
    options = [{"label": "Postgres"}, {"label": "SQLite"}, {"label": "None"}]
    assert parse_answer("2", options, multi=False) == "SQLite"
    assert parse_answer("1, 3", options, multi=True) == "Postgres, None"
    assert parse_answer("a flat file", options, multi=False) == "a flat file"
    assert parse_answer("7", options, multi=False) == "7"
    assert json.dumps(parse_answer("", options, multi=False)) == '""'


# -- the screen's live region, checked on a small virtual terminal -----------------------------------


class VirtualTerminal:
    """Just enough of a VT100 to replay what Screen writes: text, CR, LF, EL, ED, CUU, CUF."""

    def __init__(self) -> None:
        self.lines: list[str] = [""]
        self.row = 0
        self.col = 0

    def feed(self, data: str) -> None:
        i = 0
        while i < len(data):
            ch = data[i]
            if ch == "\x1b":
                found = re.match(r"\x1b\[(\d*)([A-Za-z])", data[i:])
                assert found, f"unexpected escape at {data[i:i + 10]!r}"
                count = int(found.group(1) or 1)
                op = found.group(2)
                if op == "A":
                    self.row = max(0, self.row - count)
                elif op == "C":
                    self.col += count
                elif op == "K":
                    self.lines[self.row] = ""
                elif op == "J":
                    self.lines[self.row] = self.lines[self.row][: self.col]
                    del self.lines[self.row + 1 :]
                elif op != "m":
                    raise AssertionError(f"unsupported sequence {found.group(0)!r}")
                i += len(found.group(0))
                continue
            if ch == "\r":
                self.col = 0
            elif ch == "\n":
                self.row += 1
                self.col = 0
                if self.row == len(self.lines):
                    self.lines.append("")
            else:
                line = self.lines[self.row].ljust(self.col)
                self.lines[self.row] = line[: self.col] + ch + line[self.col + 1 :]
                self.col += 1
            i += 1

    def text(self) -> list[str]:
        """The screen's lines, without the blank rows an erased region leaves at the bottom."""
        lines = [line.rstrip() for line in self.lines]
        while lines and not lines[-1]:
            lines.pop()
        return lines


class TerminalStream(io.StringIO):
    def __init__(self, terminal: VirtualTerminal) -> None:
        super().__init__()
        self.terminal = terminal

    def write(self, s: str) -> int:
        self.terminal.feed(s)
        return len(s)


def test_live_region_is_redrawn_in_place_and_output_goes_above_it() -> None:
    term = VirtualTerminal()
    screen = Screen(TerminalStream(term), tty=True, color=False)
    screen.print("first line")
    screen.set_live(["● Read(a.py)", "✻ Working…"])
    assert term.text() == ["first line", "● Read(a.py)", "✻ Working…"]
    screen.stream_text("● Streaming te")
    assert term.text() == ["first line", "● Streaming te", "● Read(a.py)", "✻ Working…"]
    screen.stream_text("xt.\nNext")
    assert term.text() == ["first line", "● Streaming text.", "Next", "● Read(a.py)", "✻ Working…"]
    screen.set_live(["✻ Working… 2s"])
    screen.end_text()
    assert term.text() == ["first line", "● Streaming text.", "Next", "✻ Working… 2s"]
    screen.print("● Read(a.py)\n  ⎿ Read 3 lines", live=[])
    screen.suspend_live()
    assert term.text() == ["first line", "● Streaming text.", "Next", "● Read(a.py)", "  ⎿ Read 3 lines"]


async def test_line_editor_draws_the_status_line_under_the_input_and_clears_it_on_enter() -> None:
    from catui.cli.tui.terminal import KeyReader, LineEditor

    term = VirtualTerminal()
    screen = Screen(TerminalStream(term), tty=True, color=False)
    keys = KeyReader(fd=0)  # never started: the test hands it keys directly
    editor = LineEditor(screen, keys)
    reading = asyncio.ensure_future(editor.read_line("› ", "model · ~/p · 0 tokens"))
    await asyncio.sleep(0)
    assert term.text() == ["›", "model · ~/p · 0 tokens"]
    for token in ("abc", key("left"), "X"):
        keys._dispatch(token)
    assert term.text() == ["› abXc", "model · ~/p · 0 tokens"]
    assert (term.row, term.col) == (0, len("› abX"))
    keys._dispatch(key("enter"))
    keys._dispatch("typed early")  # arrives before the next prompt: kept for it
    assert await reading == "abXc"
    assert term.text() == ["› abXc"]
    again = asyncio.ensure_future(editor.read_line("› ", ""))
    await asyncio.sleep(0)
    keys._dispatch(key("enter"))
    assert await again == "typed early"
    third = asyncio.ensure_future(editor.read_line("› ", ""))
    await asyncio.sleep(0)
    keys._dispatch(key("up"))
    keys._dispatch(key("up"))
    keys._dispatch(key("enter"))
    assert await third == "abXc"  # history: two steps back


def test_markdown_styler_styles_code_bold_headings_and_fences() -> None:
    from catui.cli.tui.format import MarkdownLineStyler

    styler = MarkdownLineStyler()
    assert styler("● Use `mean()` and **never** guess") == (
        "● Use \x1b[36mmean()\x1b[39m and \x1b[1mnever\x1b[22m guess"
    )
    assert styler("  ## Summary") == "  \x1b[1mSummary\x1b[0m"
    assert styler("  ```python") == "  \x1b[2m```python\x1b[0m"
    assert styler("  x = **not bold in code**") == "  \x1b[36mx = **not bold in code**\x1b[0m"
    assert styler("  ```") == "  \x1b[2m```\x1b[0m"
    assert styler("  2 * 3 * 4") == "  2 * 3 * 4"
    assert ANSI.sub("", styler("● a `b` **c**")) == "● a b c"


def test_interrupted_tool_calls_get_results_so_the_conversation_stays_valid() -> None:
    from types import SimpleNamespace

    from catui.cli.interrupted_turn import INTERRUPTED_TOOL_RESULT, close_interrupted_tool_calls

    assistant = {"role": "assistant", "content": [
        {"type": "text", "text": "Running two things."},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}},
        {"type": "tool_use", "id": "toolu_2", "name": "WebFetch", "input": {}},
    ]}
    session = SimpleNamespace(messages=[{"role": "user", "content": "go"}, assistant],
                              config=SimpleNamespace(transcript=None))
    close_interrupted_tool_calls(session)
    last = session.messages[-1]
    assert last["role"] == "user"
    assert [(b["tool_use_id"], b["is_error"], b["content"]) for b in last["content"]] == [
        ("toolu_1", True, INTERRUPTED_TOOL_RESULT), ("toolu_2", True, INTERRUPTED_TOOL_RESULT)]
    close_interrupted_tool_calls(session)  # nothing left to close: unchanged
    assert len(session.messages) == 3


async def test_bracketed_paste_arrives_as_one_text_with_its_line_breaks() -> None:
    from catui.cli.tui.terminal import KeyReader, LineEditor

    term = VirtualTerminal()
    screen = Screen(TerminalStream(term), tty=True, color=False)
    keys = KeyReader(fd=0)
    received: list[str] = []
    with keys.focus(received.append):
        keys._feed("x\x1b[200~first\r\nsec")
        keys._feed("ond\rthird\x03\x1b[201~\r")
    assert received == ["x", "first\nsecond\nthird", key("enter")]

    editor = LineEditor(screen, keys)
    reading = asyncio.ensure_future(editor.read_line("› "))
    await asyncio.sleep(0)
    keys._feed("\x1b[200~a\nb\x1b[201~")
    assert term.text()[-1] == "› a↵b"
    keys._feed("\\\r")  # backslash-Enter adds a line break instead of sending
    keys._feed("c\r")
    assert await reading == "a\nb\nc"


def test_prompt_history_is_kept_per_project_across_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from catui.cli.tui.history import append_history, history_path, load_history

    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "home"))
    project, other = tmp_path / "a", tmp_path / "b"
    assert load_history(project) == []
    append_history(project, "first")
    append_history(other, "elsewhere")
    append_history(project, "second\nline")
    with history_path().open("a") as handle:
        handle.write("{damaged\n")
    assert load_history(project) == ["first", "second\nline"]
    assert load_history(project, limit=1) == ["second\nline"]
    assert load_history(other) == ["elsewhere"]
