"""What one run of a session carries between its tool calls and its loop.

A hook may halt the run from inside a tool call, a tool may ask for blocks to
follow its result, and a skill may grant rules until the run ends; the tool
round records these here and the loop reads them back.
"""

from __future__ import annotations

from typing import Any

from catui.messages import Block


class RunState:
    """Per-run notes shared by the loop (:mod:`catui.session.session`) and the tool round."""

    def __init__(self) -> None:
        self.hook_halt: str | None = None
        """The reason a hook answered ``continue: false``; the loop stops after the current round."""
        # Blocks tools asked to follow their results (ToolResult.follow_up), by tool_use id, until sent.
        self._follow_ups: dict[str, list[Block]] = {}
        # Rules tools granted for the current run only (a skill's allowed-tools), taken back when it ends.
        self._run_rules: list[Any] = []

    def halt(self, reason: str) -> None:
        """A hook stopped the agent: the run ends once the current tool round is done."""
        self.hook_halt = reason

    def start_run(self) -> None:
        """Forget the previous run's halt."""
        self.hook_halt = None

    def add_follow_up(self, tool_use_id: str, blocks: list[Block]) -> None:
        """Blocks to send after the results of the round that ran ``tool_use_id``."""
        self._follow_ups[tool_use_id] = list(blocks)

    def take_follow_ups(self, tool_use_id: str) -> list[Block]:
        """The blocks waiting behind ``tool_use_id``'s result (once; they are forgotten)."""
        return self._follow_ups.pop(tool_use_id, [])

    def grant_run_rules(self, rules: list[Any]) -> None:
        """Remember rules granted until this run ends."""
        self._run_rules.extend(rules)

    def take_run_rules(self) -> list[Any]:
        """The rules granted during this run, to take back (the list is emptied)."""
        rules = list(self._run_rules)
        self._run_rules.clear()
        return rules
