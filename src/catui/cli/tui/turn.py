"""One turn of the interactive session on screen: the live view, its ticking, and the keys during it.

Ctrl-C or Esc interrupts the turn; Ctrl-B moves running foreground agents to
the background; anything else typed is kept for the next prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from catui.cli.interrupted_turn import close_interrupted_tool_calls
from catui.cli.tui.progress import TurnView
from catui.cli.tui.screen import Screen
from catui.cli.tui.terminal import KeyReader, key
from catui.session.events import ResultEvent

if TYPE_CHECKING:
    from catui.app.services import AgentApp

TICK_S = 0.25
INTERRUPT_GRACE_S = 0.5


class TurnRunner:
    """Runs the main session's turns on the screen, one at a time."""

    def __init__(self, screen: Screen, keys: KeyReader | None, *, tty: bool) -> None:
        self.screen = screen
        self.keys = keys
        self.tty = tty
        self.running = False
        """Whether a turn is under way (a signal then interrupts it)."""
        self._app: AgentApp | None = None
        self._interrupted = asyncio.Event()
        self._background_jobs: set[asyncio.Future[Any]] = set()

    async def run(self, app: AgentApp, content: Any, record_context_tokens: Callable[[int], None]) -> None:
        """Run one turn of ``app``'s session with ``content`` as the user's message.

        ``record_context_tokens`` hears the context size the turn's last request measured, if any.
        """
        self._app = app
        view = TurnView(self.screen, cwd=app.session.ctx.cwd)
        view.status_hint = "esc to interrupt" if self.tty else ""
        view.agents_hint = "ctrl-b to run in background" if self.tty else ""
        view.start_turn()
        self.running = True
        ticker = asyncio.ensure_future(self._tick(view))
        focus = self.keys.focus(self._on_turn_key) if self.keys else contextlib.nullcontext()
        self._interrupted = asyncio.Event()
        try:
            with focus:
                await self._show_events(app, content, view)
        except Exception as exc:  # a bug in one turn must not end the conversation or leave the terminal raw
            self.screen.suspend_live()
            self.screen.print(
                self.screen.style(f"  ⎿ catui failed in this turn: {type(exc).__name__}: {exc}", "red")
            )
        finally:
            self.running = False
            if view.context_tokens is not None:
                record_context_tokens(view.context_tokens)
            if self._interrupted.is_set():
                close_interrupted_tool_calls(app.session)
            ticker.cancel()
            with contextlib.suppress(BaseException):
                await ticker
            self.screen.suspend_live()

    async def _show_events(self, app: AgentApp, content: Any, view: TurnView) -> None:
        """Show the turn's events; after an interrupt, end it even if a model call or tool does not stop.

        ``session.abort()`` ends a turn at the next event, which a slow first
        token or a stuck command may not deliver soon; after a short grace the
        turn's event stream is closed, which cancels whatever it was waiting for.
        """
        events = app.session.run(content)
        try:
            while True:
                following = asyncio.ensure_future(events.__anext__())
                if not self._interrupted.is_set():
                    interrupt = asyncio.ensure_future(self._interrupted.wait())
                    await asyncio.wait({following, interrupt}, return_when=asyncio.FIRST_COMPLETED)
                    interrupt.cancel()
                if not following.done():
                    await asyncio.wait({following}, timeout=INTERRUPT_GRACE_S)
                    if not following.done():
                        following.cancel()
                        with contextlib.suppress(BaseException):
                            await following
                        return
                try:
                    event = following.result()
                except StopAsyncIteration:
                    return
                view.handle(event)
                if isinstance(event, ResultEvent) and event.agent_id is None:
                    view.busy = False
        finally:
            await events.aclose()

    async def _tick(self, view: TurnView) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            view.tick()

    def _on_turn_key(self, token: str) -> None:
        if token in (key("ctrl-c"), key("esc")):
            self.interrupt()
        elif token == key("ctrl-b") and self._app is not None:
            self.background_agents(self._app)
        elif self.keys is not None:
            self.keys.defer(token)  # typed ahead (or Ctrl-D): the next prompt receives it

    def interrupt(self) -> None:
        """Stop the running turn (its ResultEvent still arrives)."""
        if self.running and not self._interrupted.is_set() and self._app is not None:
            self._interrupted.set()
            self._app.session.abort()
            self.screen.print(self.screen.style("  ⎿ Interrupted · what should catui do instead?", "red"))

    def background_agents(self, app: AgentApp) -> None:
        """Ctrl-B: move ``app``'s running foreground sub-agents to the background."""
        if app.subagent_runtime is None:
            self.screen.print(self.screen.style("  Background agents are not available in this session.", "dim"))
            return
        self._background_jobs.add(asyncio.ensure_future(self._report_backgrounded(app.background_foreground_agents())))

    async def _report_backgrounded(self, pending: Any) -> None:
        try:
            moved = await pending
        except Exception as exc:  # the runtime's failure must not end the session
            self.screen.print(self.screen.style(f"  Could not move agents to the background: {exc}", "red"))
            return
        self._report_moved(moved)

    def _report_moved(self, moved: Any) -> None:
        count = len(moved) if isinstance(moved, list | tuple | set | dict) else moved
        if count == 0:
            self.screen.print(self.screen.style("  No foreground agent is running.", "dim"))
        elif isinstance(count, int):
            noun = "agent" if count == 1 else "agents"
            self.screen.print(self.screen.style(f"  Moved {count} running {noun} to the background.", "dim"))
        else:
            self.screen.print(self.screen.style("  Moved the running agents to the background.", "dim"))
