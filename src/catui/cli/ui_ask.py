"""AskUserQuestion's terminal side: ``ToolContext.ask_user`` for the interactive session.

Each question is shown with its numbered options (ExitPlanMode's question
carries the plan, shown above it); the person answers with a
number (several, comma-separated, for multiSelect questions) or with their
own words. The answers map each question's text to the chosen label(s).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from catui.cli.ui_screen import Screen

ReadLine = Callable[[str], Awaitable[str | None]]


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
        for question in questions:
            text = str(question.get("question", ""))
            options = [o for o in question.get("options") or [] if isinstance(o, dict)]
            multi = bool(question.get("multiSelect"))
            header = question.get("header")
            if isinstance(question.get("plan"), str):
                self._show_plan(question)
            self.screen.print(self.screen.style(f"? {'[' + str(header) + '] ' if header else ''}{text}", "bold"))
            for i, option in enumerate(options, 1):
                description = option.get("description")
                suffix = self.screen.style(f" — {description}", "dim") if description else ""
                self.screen.print(f"  {i}. {option.get('label', '')}{suffix}")
            hint = "numbers, comma-separated" if multi else "a number"
            line = await self.read_line(f"  Answer ({hint}, or your own words) › ")
            answers[text] = parse_answer(line or "", options, multi)
        return answers

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
