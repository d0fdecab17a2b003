"""``catui`` with no -p: the interactive session in the terminal.

A prompt with a status line under it; each input runs one turn of the same
conversation (``app.session.run`` again), streaming the answer and showing
tool calls and sub-agents as they work (see :mod:`catui.cli.tui.progress`).
Keys during a turn: Ctrl-C or Esc interrupts it, Ctrl-B moves running
foreground agents to the background. At the prompt: Ctrl-C clears the line,
a second Ctrl-C on an empty line exits, Ctrl-D exits. When stdin or stdout is
not a terminal the same session runs line by line in plain text.

This module is the input loop; a turn on screen is :mod:`catui.cli.tui.turn`,
what arrives between turns :mod:`catui.cli.tui.arrivals`, piped input
:mod:`catui.cli.tui.plain_input`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from catui import __version__
from catui.app.build import build_app, first_prompt_content, start_app
from catui.app.interrupted_agents import handle_interrupted_agents
from catui.app.model_swap import ModelSwap
from catui.app.prompt import opening_blocks
from catui.cli.tui.arrivals import BetweenTurnArrivals
from catui.cli.tui.ask import BetweenTurnQuestions, QuestionAsker
from catui.cli.tui.history import append_history, load_history
from catui.cli.tui.permission import PermissionPrompter
from catui.cli.tui.plain_input import PlainLineReader
from catui.cli.tui.screen import Screen
from catui.cli.tui.slash_commands import SlashCommands
from catui.cli.tui.slash_rewind import REWIND_COMMANDS
from catui.cli.tui.slash_session import SESSION_COMMANDS
from catui.cli.tui.slash_style import STYLE_COMMANDS
from catui.cli.tui.slash_work import WORK_COMMANDS
from catui.cli.tui.slash_workflows import WORKFLOW_COMMANDS
from catui.cli.tui.status import status_line
from catui.cli.tui.team import TEAM_HELP, team_command
from catui.cli.tui.terminal import KeyReader, LineEditor, key
from catui.cli.tui.turn import INTERRUPT_GRACE_S, TICK_S, TurnRunner
from catui.commands.prompt import command_prompt, grant_for_run
from catui.errors import CatuiError

if TYPE_CHECKING:
    from catui.app.options import RunOptions
    from catui.app.services import AgentApp
    from catui.skills.registry import SkillRegistry

__all__ = [
    "BRACKETED_PASTE_OFF", "BRACKETED_PASTE_ON", "DOUBLE_PRESS_S", "EXIT_COMMANDS", "HELP_TEXT", "INTERRUPT_GRACE_S",
    "PROMPT", "TICK_S", "InteractiveSession", "interactive_main",
]

PROMPT = "› "
DOUBLE_PRESS_S = 2.0
BRACKETED_PASTE_ON = "\x1b[?2004h"  # pasted text arrives marked, so its line breaks do not submit it
BRACKETED_PASTE_OFF = "\x1b[?2004l"
EXIT_COMMANDS = frozenset({"/exit", "/quit"})
HELP_TEXT = """Commands: /help, /exit (or Ctrl-D), and:
{commands}
During a turn: Ctrl-C or Esc interrupts it; Ctrl-B moves running sub-agents to the background.
At the prompt: Ctrl-C clears the line, twice on an empty line exits; ↑/↓ recall earlier input;
a backslash at the end of the line, then Enter, starts a new line (pasted line breaks are kept)."""


def custom_command_help(skills: SkillRegistry | None) -> list[str]:
    """/help's lines for the session's custom commands and skills: name, argument hint, description, origin."""
    if skills is None:
        return []
    origin = {"projectSettings": "project", "userSettings": "user", "plugin": "plugin"}
    entries = [(f"/{s.name}" + (f" {s.argument_hint}" if s.argument_hint else ""),
                f"{s.description} ({origin.get(s.source, s.source)} {s.kind})")
               for s in (skills.get(name) for name in skills.names()) if s is not None]
    width = max((len(left) for left, _ in entries), default=0) + 3
    return [f"  {left.ljust(width)}{right}" for left, right in entries]


async def interactive_main(run_options: RunOptions, prompt: str | None) -> int:
    """Run the interactive session until the user exits; returns the exit status."""
    app = build_app(run_options)
    await start_app(app)
    for warning in [*app.settings.warnings, *app.services.startup_warnings]:
        sys.stderr.write(f"catui: warning: {warning}\n")
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    await handle_interrupted_agents(app, interactive=True, say=lambda line: sys.stderr.write(f"catui: {line}\n"),
                                    ask=_ask_line if terminal else None)
    ui = InteractiveSession(app, stdin=sys.stdin, stdout=sys.stdout)
    if app.session.messages:
        ui.screen.print(ui.screen.style(
            f"Resumed session {app.session.session_id} ({len(app.session.messages)} earlier messages)", "dim"))
    try:
        return await ui.run(prompt)
    finally:
        ui.close()
        await app.aclose("prompt_input_exit")


async def _ask_line(question: str) -> str:
    """One answer typed at start-up, before the line editor takes the terminal; empty at end of input."""
    try:
        return await asyncio.to_thread(input, question)
    except EOFError:
        return ""


class InteractiveSession:
    """The terminal front end of one :class:`~catui.app.build.AgentApp`."""

    def __init__(self, app: AgentApp, *, stdin: TextIO, stdout: TextIO) -> None:
        self.app = app
        self.stdin = stdin
        self.tty = stdin.isatty() and stdout.isatty()
        self.screen = Screen(stdout, tty=self.tty)
        self.keys: KeyReader | None = KeyReader(stdin.fileno()) if self.tty else None
        self.editor: LineEditor | None = LineEditor(self.screen, self.keys) if self.keys else None
        if self.editor is not None:
            self.editor.history = load_history(app.project_root)
            self.editor.completer = self.complete_command
        self.turns = TurnRunner(self.screen, self.keys, tty=self.tty)
        self.plain_input = PlainLineReader(stdin)
        self.arrivals = BetweenTurnArrivals()
        self.context_tokens: int | None = None
        self.sent_first_message = False
        self.typeahead = ""
        self._last_interrupt = 0.0
        self._exit_requested = False
        self._installed_signals: list[int] = []
        self.commands = SlashCommands([*SESSION_COMMANDS, *WORK_COMMANDS, *WORKFLOW_COMMANDS, *REWIND_COMMANDS,
                                       *STYLE_COMMANDS])
        self._prompt_lock = asyncio.Lock()  # a permission prompt and AskUserQuestion never share the screen
        self._early_lines: list[str | None] = []
        """Lines read in the instant a notification won the race to the prompt; they come next."""
        self._wire(app)

    def _wire(self, app: AgentApp) -> None:
        """Give ``app``'s session this terminal's permission prompt and question asker."""
        config = app.session.config
        prompt_lock = self._prompt_lock
        if config.can_use_tool is None:
            config.can_use_tool = PermissionPrompter(
                self.screen,
                keys=self.keys,
                editor=self.editor,
                read_plain_line=self.read_plain_line,
                on_interrupt=self.interrupt_turn,
                main_context=lambda: app.session.ctx,
                cwd=app.session.ctx.cwd,
                lock=prompt_lock,
            )
        self.questions: BetweenTurnQuestions | None = None
        if not app.answers_questions():
            self.questions = BetweenTurnQuestions(QuestionAsker(self.screen, self._read_answer, prompt_lock),
                                                  at_prompt=lambda: not app.session.is_running())
            app.set_question_asker(self.questions)

    # -- lifecycle --------------------------------------------------------------------------------

    async def run(self, prompt: str | None) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._on_signal, sig)
                self._installed_signals.append(sig)
            except (NotImplementedError, RuntimeError):
                pass
        if self.keys is not None:
            self.keys.start()
            self.screen.write_raw(BRACKETED_PASTE_ON)
        self._banner()
        if prompt and prompt.strip():
            await self.turn(prompt)
        while not self._exit_requested:
            line = await self.next_input()
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text in EXIT_COMMANDS:
                break
            if text == "/help":
                custom = custom_command_help(self.app.services.skills)
                self.screen.print(HELP_TEXT.format(commands="\n".join(self.commands.help_lines())) + "\n" + TEAM_HELP
                                  + ("\nCustom commands and skills:\n" + "\n".join(custom) if custom else ""))
                continue
            team_output = team_command(self.app, text, self.screen.style)
            if team_output is not None:
                self.screen.print(team_output)
                continue
            append_history(self.app.project_root, text)
            if await self.commands.dispatch(self, text):
                continue
            if await self.run_custom_command(text):
                continue
            await self.turn(text)
        if self.app.transcript_path is not None:
            self.screen.print(self.screen.style(f"Transcript: {self.app.transcript_path}", "dim"))
        return 0

    def close(self) -> None:
        """Give the terminal back and remove signal handlers."""
        if self.keys is not None:
            if self.keys.started:
                self.screen.write_raw(BRACKETED_PASTE_OFF)
            self.keys.stop()
        with contextlib.suppress(Exception):
            loop = asyncio.get_running_loop()
            for sig in self._installed_signals:
                loop.remove_signal_handler(sig)
        self._installed_signals.clear()

    def _banner(self) -> None:
        s = self.screen
        s.print(s.style(f"catui {__version__}", "bold") + s.style(f" · {self.app.model_display} · {self.app.session.ctx.cwd}", "dim"))
        s.print(s.style("Type a task and press Enter. /help for keys; Ctrl-D exits.", "dim"))

    # -- input ------------------------------------------------------------------------------------

    async def next_input(self) -> str | None:
        """The next line from the user, running background-agent notifications and due scheduled
        prompts (CronCreate) as turns meanwhile: both only ever arrive between turns."""
        while True:
            if self._early_lines:
                return self._early_lines.pop(0)
            status = await status_line(self.app, self.context_tokens)
            reader = asyncio.ensure_future(self._read_prompt(status))
            notifier = self.arrivals.notification_waiter(self.app)
            scheduled = self.arrivals.scheduled_waiter(self.app)
            # a background agent's question (sub-agents may ask, catui.subagents.question_relay)
            question = asyncio.ensure_future(self.questions.arrived.wait()) if self.questions is not None else None
            waiting = {f for f in (reader, notifier, scheduled, question) if f is not None}
            while True:
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if notifier in done and notifier.result() is None:
                    waiting.discard(notifier)  # no background agent runs: only the user or the schedule
                    notifier = None
                    continue
                break
            others = [f for f in (notifier, scheduled, question) if f is not None and f not in done]
            for other in others:
                other.cancel()
                with contextlib.suppress(BaseException):
                    await other
            if reader in done:
                # taken in the same instant as the user's line: run after that turn, never lost
                if notifier is not None and notifier in done:
                    self.arrivals.keep_notification(notifier.result())
                if scheduled is not None and scheduled in done:
                    self.arrivals.keep_scheduled(scheduled.result())
                return reader.result()
            # a background agent finished or a scheduled prompt fell due while the user was at the prompt
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
            if reader.done() and not reader.cancelled() and reader.exception() is None:
                self._early_lines.append(reader.result())  # the line came in the same instant: keep it
            if question is not None and question in done and self.questions is not None:
                await self.questions.answer_pending()
            if notifier is not None and notifier in done:
                await self.turn(notifier.result(), raw=True)
            if scheduled is not None and scheduled in done:
                for entry in scheduled.result():
                    await self.turn(entry.prompt)

    async def _read_prompt(self, status: str) -> str | None:
        if self.editor is None:
            self.screen.print(self.screen.style(status, "dim"))
            self.screen.write_raw(PROMPT)
            line = await self.read_plain_line()
            if line is not None and not self.stdin.isatty():
                self.screen.print(line)  # piped input: echo it so that the output reads as a conversation
            return line
        initial, self.typeahead = self.typeahead, ""
        while True:
            try:
                line = await self.editor.read_line(PROMPT, status, initial=initial)
            except KeyboardInterrupt:
                initial = ""
                if self.editor.last_text.strip():
                    continue  # the first Ctrl-C clears the line
                now = time.monotonic()
                if now - self._last_interrupt < DOUBLE_PRESS_S:
                    return None
                self._last_interrupt = now
                self.screen.print(self.screen.style("Press Ctrl-C again to exit.", "dim"))
                continue
            except asyncio.CancelledError:
                self.typeahead = self.editor.last_text
                raise
            return line

    async def read_plain_line(self) -> str | None:
        """A line from a non-terminal stdin, read on a thread; None at end of input."""
        return await self.plain_input.read()

    # -- what slash commands use (catui.cli.tui.slash_commands.CommandHost) ----------------------------

    def say(self, text: str, style: str | None = None) -> None:
        """Print a permanent line."""
        self.screen.print(self.screen.style(text, style) if style else text)

    async def ask(self, prompt: str) -> str | None:
        """One answer typed at the prompt; None after Ctrl-C or at end of input."""
        if self.editor is None:
            self.screen.write_raw(prompt)
            return await self.read_plain_line()
        try:
            return await self.editor.read_line(prompt)
        except KeyboardInterrupt:
            return None

    async def watch(self, render: Callable[[], list[str]], *, until: Callable[[], bool]) -> None:
        """Show ``render()``'s lines live, redrawn every tick, until a key is pressed or ``until()`` holds; the
        last lines then stay on the screen. Without a terminal they are printed once."""
        if self.keys is None:
            for line in render():
                self.say(line)
            return
        pressed = asyncio.Event()
        hint = self.screen.style("  (any key closes this view)", "dim")
        with self.keys.focus(lambda _token: pressed.set()):
            while not pressed.is_set() and not until():
                self.screen.set_live([*render(), hint])
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(pressed.wait(), TICK_S)
        self.screen.suspend_live()
        for line in render():
            self.say(line)

    async def switch_session(self, resume: str | None, reason: str) -> bool:
        """Close this session and start another: a new one (``/clear``) or the saved ``resume`` (``/resume``)."""
        options = dataclasses.replace(self.app.options, resume=resume, continue_conversation=False,
                                      fork_session=False, session_id=None, can_use_tool=None)
        try:
            new_app = build_app(options)
            await start_app(new_app)
        except CatuiError as exc:
            self.say(f"Could not start the {'resumed' if resume else 'new'} session: {exc}", "red")
            return False
        old, self.app = self.app, new_app
        self._wire(new_app)
        self.sent_first_message = False
        self.context_tokens = None
        await old.aclose(reason)
        for warning in new_app.services.startup_warnings:
            self.say(f"warning: {warning}", "dim")
        return True

    async def _read_answer(self, prompt: str) -> str | None:
        if self.editor is None:
            self.screen.write_raw(prompt)
            return await self.read_plain_line()
        try:
            return await self.editor.read_line(prompt)
        except KeyboardInterrupt:
            self.interrupt_turn()
            return None

    # -- custom commands (catui.commands) ---------------------------------------------------------

    def complete_command(self, typed: str) -> list[str]:
        """Tab completion at the prompt: the ``/names`` (built-in, custom, skills) that start with ``typed``."""
        skills = self.app.services.skills
        names = {"help", "exit", "quit", *self.commands.names(), *(skills.names() if skills is not None else [])}
        return sorted(f"/{name}" for name in names if f"/{name}".startswith(typed))

    async def run_custom_command(self, text: str) -> bool:
        """Run ``/name args`` when ``name`` is a custom command or a skill; False for any other line."""
        command = await command_prompt(self.app, text)
        if command is None or command.skill is None:
            return False  # not a command, or an unknown name: it goes to the model as typed
        if command.error is not None:
            self.say(f"/{command.name}: {command.error}", "red")
            return True
        content = command.blocks if self.sent_first_message else [*opening_blocks(self.app), *command.blocks]
        swap = ModelSwap(self.app) if command.skill.model else None
        problem = swap.start(command.skill.model) if swap is not None and command.skill.model else None
        if problem is not None:
            self.say(f"/{command.name}: {problem}", "red")
            return True
        grant_for_run(self.app.session, command.rules)
        try:
            await self.turn(content, raw=True)
        finally:
            if swap is not None:
                await swap.restore()  # the command's model held for its own prompt only
        return True

    # -- turns ------------------------------------------------------------------------------------

    async def turn(self, text: str | Any, *, raw: bool = False) -> None:
        """Run one turn of the conversation with ``text`` as the user's message."""
        if raw:
            content = text
        elif not self.sent_first_message:
            content = first_prompt_content(self.app, text)
        else:
            content = text
        self.sent_first_message = True
        await self.turns.run(self.app, content, self._record_context_tokens)

    def _record_context_tokens(self, tokens: int) -> None:
        self.context_tokens = tokens

    @property
    def turn_running(self) -> bool:
        """Whether a turn is under way."""
        return self.turns.running

    def interrupt_turn(self) -> None:
        """Stop the running turn (its ResultEvent still arrives)."""
        self.turns.interrupt()

    def background_agents(self) -> None:
        """Ctrl-B: move the running foreground sub-agents to the background."""
        self.turns.background_agents(self.app)

    def _on_signal(self, sig: int) -> None:
        if self.turn_running:
            self.interrupt_turn()
            if sig == signal.SIGINT:
                return
        if sig == signal.SIGTERM:
            self._request_exit()
            return
        now = time.monotonic()
        if now - self._last_interrupt < DOUBLE_PRESS_S:
            self._request_exit()
        else:
            self._last_interrupt = now
            self.screen.print(self.screen.style("Press Ctrl-C again to exit.", "dim"))

    def _request_exit(self) -> None:
        self._exit_requested = True
        self.plain_input.end()
        if self.keys is not None and self.keys.handler is not None:
            self.keys.handler(key("ctrl-d"))
