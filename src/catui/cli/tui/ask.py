"""AskUserQuestion's terminal side: ``ToolContext.ask_user`` for the interactive session.

Each question is shown with its numbered options (ExitPlanMode's question
carries the plan, shown above it; a sub-agent's relayed question carries
``askingAgent``, shown as the agent's name in its colour); the person answers with a
number (several, comma-separated, for multiSelect questions) or with their
own words. The answers map each question's text to the chosen label(s).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from catui.cli.tui.screen import Screen

ReadLine = Callable[[str], Awaitable[str | None]]

# Claude Code's agent colours as terminal escapes (256-colour where the 8 basic ones have no match).
AGENT_COLORS = {
    "red": "\x1b[31m", "green": "\x1b[32m", "yellow": "\x1b[33m", "blue": "\x1b[34m",
    "purple": "\x1b[35m", "cyan": "\x1b[36m", "orange": "\x1b[38;5;208m", "pink": "\x1b[38;5;205m",
}


def parse_answer(text: str, options: list[dict[str, Any]], multi: bool) -> str:
    """Numbers pick option labels (``1`` or ``1,3``); anything else is the person's own answer."""
    labels = [str(o.get("label", "")) for o in options]
    parts = [p.strip() for p in text.split(",")] if multi else [text.strip()]
    if parts and all(p.isdigit() and 1 <= int(p) <= len(labels) for p in parts):
        return ", ".join(labels[int(p) - 1] for p in parts)
    return text.strip()


class QuestionAsker:
    """Asks AskUserQuestion's questions one after another."""

    def __init__(self, screen: Screen, read_line: ReadLine, lock: asyncio.Lock | None = None) -> None:
        self.screen = screen
        self.read_line = read_line
        self.lock = lock or asyncio.Lock()  # shared with the permission prompt: one question at a time

    async def __call__(self, questions: list[dict[str, Any]]) -> dict[str, str]:
        async with self.lock:
            self.screen.live_locked = True
            try:
                self.screen.suspend_live()
                return await self._ask(questions)
            finally:
                self.screen.live_locked = False

    async def _ask(self, questions: list[dict[str, Any]]) -> dict[str, str]:
        answers: dict[str, str] = {}
        last_asker: object = None
        for question in questions:
            text = str(question.get("question", ""))
            options = [o for o in question.get("options") or [] if isinstance(o, dict)]
            multi = bool(question.get("multiSelect"))
            header = question.get("header")
            if isinstance(question.get("plan"), str):
                self._show_plan(question)
            asking = question.get("askingAgent")
            if isinstance(asking, dict) and asking.get("name") and asking is not last_asker:
                self.screen.print(self._agent_label(asking) + self.screen.style(" asks:", "bold"))
                last_asker = asking
            self.screen.print(self.screen.style(f"? {'[' + str(header) + '] ' if header else ''}{text}", "bold"))
            for i, option in enumerate(options, 1):
                description = option.get("description")
                suffix = self.screen.style(f" — {description}", "dim") if description else ""
                self.screen.print(f"  {i}. {option.get('label', '')}{suffix}")
            hint = "numbers, comma-separated" if multi else "a number"
            line = await self.read_line(f"  Answer ({hint}, or your own words) › ")
            answers[text] = parse_answer(line or "", options, multi)
        return answers

    def _agent_label(self, asking: dict[str, Any]) -> str:
        """``● name`` in the agent's colour (its definition's ``color``), for a sub-agent's relayed question."""
        label = f"● {asking['name']}"
        color = str(asking.get("color") or "").lower()
        if color in AGENT_COLORS and self.screen.color:
            return f"{AGENT_COLORS[color]}{label}\x1b[0m"
        return self.screen.style(label, "bold")

    def _show_plan(self, question: dict[str, Any]) -> None:
        """ExitPlanMode's approval: the plan file's text, where it is, and the shell commands it asks for."""
        where = question.get("planFilePath")
        self.screen.print(self.screen.style(f"Plan{f' ({where})' if where else ''}:", "bold"))
        for line in str(question["plan"]).rstrip("\n").splitlines():
            self.screen.print(f"  {line}")
        prompts = [p for p in question.get("allowedPrompts") or [] if isinstance(p, dict)]
        if prompts:
            self.screen.print(self.screen.style("The plan asks to run shell commands that:", "bold"))
            for prompt in prompts:
                self.screen.print(f"  - {prompt.get('prompt', '')} ({prompt.get('tool', 'Bash')})")


class BetweenTurnQuestions:
    """``ask_user`` of the interactive session: asks at once during a turn; between turns, when the person is
    at the main prompt, a question (a background agent's) waits until the session takes it from the prompt.

    The session watches :attr:`arrived` while it reads the prompt; when it is set it stops reading (keeping
    what was typed), calls :meth:`answer_pending`, and goes back to the prompt.
    """

    def __init__(self, asker: QuestionAsker, at_prompt: Callable[[], bool]) -> None:
        self.asker = asker
        self.at_prompt = at_prompt
        self.arrived = asyncio.Event()
        self._pending: list[tuple[list[dict[str, Any]], asyncio.Future[dict[str, str]]]] = []

    async def __call__(self, questions: list[dict[str, Any]]) -> dict[str, str]:
        if not self.at_prompt():
            return await self.asker(questions)
        answer: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self._pending.append((questions, answer))
        self.arrived.set()
        return await answer

    async def answer_pending(self) -> None:
        """Ask every waiting question, in the order they came, and hand each answer to its agent."""
        self.arrived.clear()
        while self._pending:
            questions, answer = self._pending.pop(0)
            if answer.done():  # its agent was stopped meanwhile
                continue
            try:
                answer.set_result(await self.asker(questions))
            except Exception as exc:  # the agent gets the failure; the session goes on
                answer.set_exception(exc)
