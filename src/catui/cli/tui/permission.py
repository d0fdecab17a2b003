"""The interactive permission prompt: the session's ``can_use_tool`` when a person is at the terminal.

It shows the call and offers three answers: yes; yes and don't ask again
for this in the session (a session rule is added to the permission
context); no, with an optional reason that goes back to the model as the
denial message. Prompts are asked one at a time even when sub-agents ask at
once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from catui.cli.tui.format import one_line, tool_call_label
from catui.cli.tui.screen import Screen
from catui.cli.tui.terminal import KeyReader, LineEditor, key
from catui.permissions.context import PermissionDecision, PermissionRequest, PermissionRule
from catui.permissions.rules import within_directories
from catui.tools.base import Tool, ToolContext

PREVIEW_LINES = 8

ALLOW, ALWAYS, DENY = "allow", "always", "deny"


def session_rule_for(request: PermissionRequest, working_directories: Sequence[Path] = ()) -> PermissionRule:
    """The rule "don't ask again" adds: a file tool within one folder, the exact subject otherwise.

    A file call approved for the session covers that tool inside the working
    directory that holds the file (Claude Code switches to acceptEdits for the
    same answer), or, for a file outside them, inside the file's folder (Claude
    Code's "always allow access to <folder>/"); never the whole file system. A
    Bash command is remembered verbatim, never widened to a prefix the user did not see.
    """
    if request.file_path is None:
        return PermissionRule(request.tool_name, request.subject or None, "allow", "session")
    path = request.file_path
    folder = next((d for d in working_directories if within_directories(path, (d,))), None)
    if folder is None:
        folder = path if path.is_dir() else path.parent
    pattern = "/" + "".join("\\" + ch if ch in "*?[]\\" else ch for ch in folder.as_posix()).rstrip("/") + "/**"
    return PermissionRule(request.tool_name, pattern, "allow", "session")


def denial_message(tool_name: str, reason: str) -> str:
    """What the model reads when the user says no."""
    if reason.strip():
        return (
            f"The user declined this {tool_name} call, so it did not run. "
            f"They said why, and how to go on: {reason.strip()}"
        )
    return (
        f"The user declined this {tool_name} call, so it did not run. "
        "Do not retry it; wait for the user's next instruction."
    )


def call_preview(name: str, tool_input: Mapping[str, Any]) -> list[str]:
    """A few lines that show what the call would do."""
    lines: list[str] = []
    if name == "Write":
        lines = str(tool_input.get("content") or "").splitlines()
    elif name == "Edit":
        lines = [f"- {ln}" for ln in str(tool_input.get("old_string") or "").splitlines()]
        lines += [f"+ {ln}" for ln in str(tool_input.get("new_string") or "").splitlines()]
    elif name == "Bash":
        lines = str(tool_input.get("command") or "").splitlines()
        if tool_input.get("description"):
            lines.append(f"({tool_input['description']})")
    elif name in ("Agent", "Task"):
        lines = str(tool_input.get("prompt") or "").splitlines()
    if len(lines) > PREVIEW_LINES:
        lines = [*lines[:PREVIEW_LINES], f"… {len(lines) - PREVIEW_LINES} more lines"]
    return [one_line(ln, 200) if ln.strip() else "" for ln in lines]


class PermissionPrompter:
    """Asks the person at the terminal; install as ``SessionConfig.can_use_tool``.

    ``main_context`` returns the main session's ToolContext, so that a
    "don't ask again" answer given to a sub-agent's call also covers the
    main agent. ``on_interrupt`` stops the turn (Esc or Ctrl-C at the prompt).
    """

    def __init__(
        self,
        screen: Screen,
        *,
        keys: KeyReader | None,
        editor: LineEditor | None,
        read_plain_line: Callable[[], Awaitable[str | None]],
        on_interrupt: Callable[[], None],
        main_context: Callable[[], ToolContext] | None = None,
        cwd: Path | None = None,
        lock: asyncio.Lock | None = None,
    ) -> None:
        self.screen = screen
        self.keys = keys
        self.editor = editor
        self.read_plain_line = read_plain_line
        self.on_interrupt = on_interrupt
        self.main_context = main_context
        self.cwd = cwd
        self._lock = lock or asyncio.Lock()

    async def __call__(
        self, tool: Tool, raw_input: dict[str, Any], request: PermissionRequest, ctx: ToolContext
    ) -> PermissionDecision:
        async with self._lock:
            # let the turn's consumer show the events queued before this call (its text, its tool line)
            for _ in range(3):
                await asyncio.sleep(0)
            if ctx.abort.is_set():
                return PermissionDecision("deny", "The turn was interrupted before this call could run.")
            rule = session_rule_for(request, ctx.permissions.working_directories)
            header = self._header(tool.name, raw_input, ctx, rule)
            if self.keys is not None and self.editor is not None and self.screen.tty:
                answer, reason = await self._ask_terminal(header)
            else:
                answer, reason = await self._ask_plain(header)
        if answer == ALLOW:
            return PermissionDecision("allow", "Approved by the user.")
        if answer == ALWAYS:
            ctx.permissions = ctx.permissions.with_rules(rule)
            main = self.main_context() if self.main_context else None
            if main is not None and main is not ctx:
                main.permissions = main.permissions.with_rules(rule)
            return PermissionDecision("allow", f"Approved by the user for the session ({rule}).", rule)
        return PermissionDecision("deny", denial_message(tool.name, reason or ""))

    def _header(self, name: str, raw_input: Mapping[str, Any], ctx: ToolContext, rule: PermissionRule) -> list[str]:
        who = f" (asked by the {ctx.agent_type} agent)" if ctx.agent_type else ""
        lines = [self.screen.style(f"╭─ Permission needed{who}", "yellow")]
        lines.append("│ " + self.screen.style(tool_call_label(name, raw_input, self.cwd), "bold"))
        lines += ["│   " + self.screen.style(ln, "dim") for ln in call_preview(name, raw_input)]
        if name == "Bash":
            lines += self._plan_prompts_line(ctx)
        self._options = [
            "Yes",
            f"Yes, and don't ask again this session for {rule}",
            "No, and tell the model why" + (" (esc to stop the turn)" if self.screen.tty else ""),
        ]
        return lines

    def _plan_prompts_line(self, ctx: ToolContext) -> list[str]:
        """The shell commands an approved plan said it needs (ExitPlanMode's allowedPrompts), as context.

        They approve nothing by themselves (see docs/decisions.md); the person decides with them in view.
        """
        owner = self.main_context() if self.main_context is not None else ctx
        prompts = [p.get("prompt", "") for p in owner.plan.allowed_prompts if isinstance(p, dict)]
        if not prompts:
            return []
        return ["│ " + self.screen.style(f"The approved plan asked to run commands that: {'; '.join(prompts)}", "dim")]

    async def _ask_terminal(self, header: list[str]) -> tuple[str, str]:
        assert self.keys is not None and self.editor is not None
        keys = self.keys
        loop = asyncio.get_running_loop()
        chosen: asyncio.Future[str] = loop.create_future()
        selected = 0

        def draw() -> None:
            menu = [*header, "│ Do you want to allow this call?"]
            for i, option in enumerate(self._options):
                marker = "❯" if i == selected else " "
                text = f"│ {marker} {i + 1}. {option}"
                menu.append(self.screen.style(text, "cyan") if i == selected else text)
            menu.append(self.screen.style("╰─ 1/2/3 or ↑/↓ and Enter", "dim"))
            self.screen.set_live(menu, force=True)

        def on_key(token: str) -> None:
            nonlocal selected
            if chosen.done():
                keys.defer(token)
                return
            if token in (key("up"), key("down")):
                selected = (selected + (1 if token == key("down") else -1)) % 3
                draw()
            elif token == key("enter"):
                chosen.set_result((ALLOW, ALWAYS, DENY)[selected])
            elif token.lower() in ("1", "y"):
                chosen.set_result(ALLOW)
            elif token.lower() in ("2", "a"):
                chosen.set_result(ALWAYS)
            elif token.lower() in ("3", "n"):
                chosen.set_result(DENY)
            elif token in (key("esc"), key("ctrl-c")):
                chosen.set_result("interrupt")

        # A background agent may ask while the prompt line waits for the user: take the prompt (and the status
        # line under it) down first, so the menu starts on a clean row, and put it back afterwards.
        at_prompt = self.editor.reading
        if at_prompt:
            self.editor.hide()
        self.screen.live_locked = True
        try:
            self.screen.suspend_live()
            draw()
            with self.keys.focus(on_key):
                answer = await chosen
            self.screen.suspend_live()
            if answer == "interrupt":
                self.on_interrupt()
                return DENY, ""
            self.screen.print(self.screen.style(f"  {header[1][2:]} → {self._answer_text(answer)}", "dim"))
            if answer != DENY:
                return answer, ""
            try:
                reason = await self.editor.read_line(self.screen.style("  Why not? (Enter to skip) › ", "yellow"))
            except KeyboardInterrupt:
                self.on_interrupt()
                return DENY, ""
            return DENY, reason or ""
        finally:
            self.screen.live_locked = False
            if at_prompt:
                self.editor.show()

    async def _ask_plain(self, header: list[str]) -> tuple[str, str]:
        self.screen.suspend_live()
        for line in header:
            self.screen.print(line)
        for i, option in enumerate(self._options):
            self.screen.print(f"│   {i + 1}. {option}")
        self.screen.write_raw("╰─ Allow? [y]es / [a]lways / [n]o, optionally followed by a reason: ")
        answer_line = await self.read_plain_line()
        if answer_line is None:
            self.screen.print("")
            return DENY, ""
        self.screen.print(answer_line)
        text = answer_line.strip()
        word, _, rest = text.partition(" ")
        word = word.lower()
        if word in ("y", "yes", "1"):
            return ALLOW, ""
        if word in ("a", "always", "2"):
            return ALWAYS, ""
        if word in ("n", "no", "3"):
            return DENY, rest.strip()
        # anything else is a refusal whose whole text is the reason
        return DENY, text

    @staticmethod
    def _answer_text(answer: str) -> str:
        return {ALLOW: "allowed", ALWAYS: "allowed for the session", DENY: "declined"}.get(answer, answer)
