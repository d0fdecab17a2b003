"""The detached process that runs one background session: ``python -m catui.bgsessions.worker <id8>``.

It runs the agent in this process through :class:`catui.CatuiClient`: the first prompt, then one turn per
message in its inbox, writing a readable log to stdout (the launcher points stdout at ``log.txt``) and its
status (busy/idle) and state (working/blocked/done) to its registry entry. A call that needs permission makes
the session ``blocked`` until ``catui attach`` writes the answer to ``answer.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from catui.bgsessions import asking, classify, discovery, inbox
from catui.bgsessions.peers import ENV_ID
from catui.bgsessions.registry import SessionEntry, entry_path, process_start, read_entry, write_entry
from catui.bgsessions.side_requests import SideRequests
from catui.paths import sessions_dir

EVENTS = "events.jsonl"
"""The session's SDK messages, one JSON object per line (:mod:`catui.sdk.message_codec`)."""

POLL_S = 1.0
"""How often an idle session looks into its inbox without being woken (senders write to its wake pipe, so this
only catches a wake-up lost to a full pipe or a message written by hand)."""



def permission_context(context: Any) -> dict[str, Any]:
    """What an attached client's ``can_use_tool`` is told besides the call (the context minus its abort signal)."""
    fields = ("tool_use_id", "agent_id", "agent_type", "blocked_path", "decision_reason", "title", "display_name",
              "description")
    body: dict[str, Any] = {name: getattr(context, name, None) for name in fields}
    suggestions = []
    for update in getattr(context, "suggestions", None) or []:
        with contextlib.suppress(ValueError, AttributeError):
            suggestions.append(update.to_dict())
    body["suggestions"] = suggestions
    return body


def short_input(tool_input: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in tool_input.items())
    return text if len(text) <= 120 else text[:119] + "…"


class Worker:
    """One background session's loop (see the module docstring)."""

    def __init__(self, entry: SessionEntry) -> None:
        self.entry = entry
        self.folder = entry_path(entry.id).parent
        self.stopping = False
        self.waiters: list[str] = []  # senders to notify when this session next goes idle or exits
        self.woken: asyncio.Event | None = None
        self.keep_open: int | None = None
        self.side = SideRequests(entry)
        self.side_task: asyncio.Task[None] | None = None
        self.turn_state: dict[str, Any] = {"state": "done", "tempo": "idle", "needs": None}
        """What the last turn's end says (the classifier's answer); shown whenever no held message overrides it."""
        self.held_needs: str | None = None
        self.state_since = time.time()

    def open_wake_pipe(self) -> None:
        """Make the named pipe senders write to, and wake ``next_message`` whenever a byte arrives."""
        path = self.folder / inbox.WAKE_FIFO
        if not path.exists():
            os.mkfifo(path, 0o600)
        reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        # our own writer end keeps the pipe from reporting end-of-file (and the reader from spinning) when a
        # sender closes it
        self.keep_open = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        woken = self.woken = asyncio.Event()

        def drain() -> None:
            try:
                os.read(reader, 4096)
            except BlockingIOError:
                return
            woken.set()

        asyncio.get_running_loop().add_reader(reader, drain)

    def log(self, line: str) -> None:
        with contextlib.suppress(OSError):  # a full disk must not end the session; the entry still tells its state
            print(line, flush=True)

    def publish(self, message: Any) -> None:
        """Append an SDK message to ``events.jsonl``, where attached clients read it (:mod:`catui.sdk.bg_attach`).

        A reader keeps a line without its newline until the rest is written."""
        from catui.sdk.message_codec import encode

        line = json.dumps(encode(message), ensure_ascii=False) + "\n"
        try:
            with open(self.folder / EVENTS, "a", encoding="utf-8") as events:
                events.write(line)
        except OSError as exc:  # a full disk: the log still says what happened, and the turn goes on
            self.log(f"[warning] could not write {EVENTS}: {exc.strerror}")

    def save(self, **changes: Any) -> None:
        for key, value in changes.items():
            setattr(self.entry, key, value)
        try:
            write_entry(self.entry)
        except OSError as exc:  # a full disk: the session goes on; the next save that fits brings the entry up to date
            self.log(f"[warning] could not save the session's state: {exc.strerror}")

    # -- permissions -------------------------------------------------------------------------------------

    async def ask(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        """``can_use_tool``: publish the request (:mod:`catui.bgsessions.asking`), be ``blocked`` until answered."""
        import uuid

        from catui.sdk import PermissionResultAllow, PermissionResultDeny, PermissionUpdate

        call = f"{tool_name}({short_input(tool_input)})"
        request_id = str(uuid.uuid4())
        try:
            asking.post_request(self.folder, {"request_id": request_id, "tool_name": tool_name, "input": tool_input,
                                              "context": permission_context(context)})
        except OSError as exc:
            self.log(f"  denied {tool_name}: could not ask for permission ({exc.strerror})")
            return PermissionResultDeny(message=f"catui could not ask the user about this call: writing to "
                                                f"{self.folder} failed ({exc.strerror}).")
        self.save(state="blocked", tempo="blocked", needs=f"permission for {call}")
        self.log(f"? {call} needs permission — answer with: catui attach {self.entry.id}")
        while (answer := asking.take_answer(self.folder, request_id)) is None:
            await asyncio.sleep(0.05)
        self.save(state="working", tempo="active", needs=None)
        if answer.get("allow"):
            self.log(f"  allowed {tool_name}")
            updates = answer.get("updated_permissions")
            return PermissionResultAllow(
                updated_input=answer.get("updated_input") if isinstance(answer.get("updated_input"), dict) else None,
                updated_permissions=[PermissionUpdate.from_dict(u) for u in updates] if updates else None)
        self.log(f"  denied {tool_name}")
        return PermissionResultDeny(message=str(answer.get("message") or "The user refused this call."),
                                    interrupt=bool(answer.get("interrupt")))

    # -- turns -------------------------------------------------------------------------------------------

    async def turn(self, client: Any, prompt: str) -> None:
        """One turn on ``prompt``; a failed turn is logged and the session stays (a later message may work).

        Afterwards the state classifier and the namer run (:mod:`catui.bgsessions.side_requests`) while the session
        already waits for its next message; a new turn cancels them."""
        from catui.errors import CatuiError

        await self.cancel_side_requests()
        texts: list[str] = []
        tools: list[str] = []
        errors: list[str] = []
        try:
            await self._turn(client, prompt, texts, tools, errors)
        except CatuiError as exc:
            self.log(f"[error] {exc}")
            self.turn_state = self.api_error_state(str(exc))
            from catui.sdk import ResultMessage

            # an attached client waits for the turn's ResultMessage: it gets one saying why there is no answer
            self.publish(ResultMessage(subtype="error_during_execution", duration_ms=0, duration_api_ms=0,
                                       is_error=True, num_turns=0, session_id=self.entry.session_id, result=str(exc),
                                       errors=[str(exc)]))
            return
        if errors:  # as Claude Code: an API error blocks the session (the user can retry or fix the cause); other
            # error results (max turns …) are classified like any turn
            self.turn_state = self.api_error_state(errors[-1])
            return
        self.side_task = asyncio.create_task(self.after_turn(prompt, "\n".join(texts), tools))

    def api_error_state(self, error: str) -> dict[str, Any]:
        return {"state": "blocked", "tempo": "blocked", "detail": classify.cut(error),
                "needs": f"API error — see catui logs {self.entry.id}"}

    async def cancel_side_requests(self) -> None:
        task, self.side_task = self.side_task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def after_turn(self, prompt: str, text: str, tools: list[str]) -> None:
        """Classify the turn's end and, while the session is called by its prompt, name it."""
        previous = str(self.turn_state.get("state") or "working")
        minutes = int((time.time() - self.state_since) / 60)
        result = await self.side.classify(text, previous, minutes, classify.tool_summary(tools), prompt)
        if result.state != previous:
            self.state_since = time.time()
        self.turn_state = classify.as_fields(result)
        if self.entry.status == "idle" and not self.held_needs:
            self.save(**self.turn_state)
        if self.entry.name_source == "prompt":
            reply = text.strip() or (f"[calling {classify.tool_summary(tools)}]" if tools else "")
            label = await self.side.name(self.entry.prompt or prompt, reply)
            if label is not None and self.entry.name_source == "prompt":
                self.save(name=label, name_source="auto")
                self.log(f"[named {label}]")

    async def _turn(self, client: Any, prompt: str, texts: list[str], tools: list[str], errors: list[str]) -> None:
        from catui.sdk import (
            AssistantMessage,
            ResultMessage,
            TextBlock,
            ToolResultBlock,
            ToolUseBlock,
            UserMessage,
        )

        self.save(status="busy", state="working", tempo="active", needs=None)
        self.log(f"> {prompt}")
        await client.query(prompt)
        async for message in client.receive_response():
            self.publish(message)
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock) and block.text.strip():
                        self.log(block.text)
                        if message.parent_tool_use_id is None:
                            texts.append(block.text)
                    elif isinstance(block, ToolUseBlock):
                        self.log(f"● {block.name}({short_input(block.input)})")
                        tools.append(block.name)
            elif isinstance(message, UserMessage) and isinstance(message.content, list):
                for item in message.content:
                    if isinstance(item, ToolResultBlock):
                        content = item.content if isinstance(item.content, str) else json.dumps(item.content)
                        self.log(f"  ⎿ {(content or '').splitlines()[0][:200] if content else ''}")
            elif isinstance(message, ResultMessage):
                self.log("[error] " + str(message.result) if message.is_error else "[done]")
                if message.is_error and (message.api_error_status or message.terminal_reason == "api_error"):
                    errors.append(str(message.result or message.subtype))

    def notify_waiters(self, why: str) -> None:
        for sender in self.waiters:
            folder = entry_path(sender).parent
            if folder.is_dir():
                try:
                    inbox.post(folder, inbox.new_message(
                        "notice", f"[Cross-session idle notice] {self.entry.name} {why}."))
                except OSError as exc:
                    self.log(f"[warning] could not send the idle notice to {sender}: {exc.strerror}")
        self.waiters.clear()

    def should_hold(self, message: inbox.InboxMessage) -> bool:
        own = inbox.mode_label(self.entry.permission_mode)
        return message.kind == "peer" and not message.accepted and message.from_mode != own

    def held_notice(self, message: inbox.InboxMessage) -> None:
        self.log(f"! message from {message.from_name} held (sent from {message.from_mode} mode) — "
                 f"accept it with: catui attach {self.entry.id}")
        if message.from_id and entry_path(message.from_id).parent.is_dir():
            notice = inbox.new_message("notice", (
                f"[Cross-session delivery notice] {self.entry.name} holds your message “{message.summary}”: it runs "
                f"in {inbox.mode_label(self.entry.permission_mode)} mode, yours in {message.from_mode}, so a person "
                "accepts it there first."))
            try:
                inbox.post(entry_path(message.from_id).parent, notice)
            except OSError as exc:  # a full disk: the sender misses the notice; the held message itself is kept
                self.log(f"[warning] could not send the delivery notice to {message.from_id}: {exc.strerror}")

    async def next_message(self) -> tuple[Path, inbox.InboxMessage]:
        """Wait for the oldest deliverable inbox message; messages to hold are moved to ``held/`` meanwhile."""
        while True:
            if self.woken is not None:
                self.woken.clear()  # before looking: a message posted after the look wakes the wait below
            for path, message in inbox.pending(self.folder):
                if self.should_hold(message):
                    inbox.hold(path)
                    self.held_notice(message)
                    continue
                return path, message
            held = inbox.pending(self.folder, "held")
            held_needs = (f"a message from {held[0][1].from_name} is held — accept it with: catui attach "
                          f"{self.entry.id}" if held else None)
            if held_needs != self.held_needs:
                self.held_needs = held_needs
                self.save(**({"state": "blocked", "tempo": "blocked", "needs": held_needs} if held_needs
                             else self.turn_state))
            if self.woken is None:
                await asyncio.sleep(POLL_S)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.woken.wait(), POLL_S)

    async def run(self, resume: bool) -> None:
        from catui.sdk import CatuiClient, CatuiOptions

        opts = dict(self.entry.options)
        options = CatuiOptions(
            cwd=self.entry.cwd, permission_mode=self.entry.permission_mode, model=opts.get("model"),
            allowed_tools=list(opts.get("allowed_tools") or []),
            disallowed_tools=list(opts.get("disallowed_tools") or []),
            append_system_prompt=opts.get("append_system_prompt"), max_turns=opts.get("max_turns"),
            # bypassPermissions never asks (the SDK warns that the callback would be shadowed)
            can_use_tool=None if self.entry.permission_mode == "bypassPermissions" else self.ask, resume=self.entry.session_id if resume else None,
            session_id=None if resume else self.entry.session_id)
        self.open_wake_pipe()
        async with CatuiClient(options) as client:
            if not resume and self.entry.prompt:
                await self.turn(client, self.entry.prompt)
            while not self.stopping:
                self.save(status="idle", **self.turn_state)
                self.notify_waiters("is idle now")
                path, message = await self.next_message()
                if message.notify_when_idle and message.from_id:
                    self.waiters.append(message.from_id)
                await self.turn(client, message.turn_text())
                path.unlink(missing_ok=True)  # only now: a crash during the turn leaves it to be read again


def transcript_exists(entry: SessionEntry) -> bool:
    return (sessions_dir(Path(entry.cwd)) / f"{entry.session_id}.jsonl").is_file()


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    entry = read_entry(entry_path(args[0]))
    if entry is None:
        print(f"catui: no background session {args[0]!r} to run", file=sys.stderr)
        sys.exit(1)
    os.environ[ENV_ID] = entry.id
    entry.pid = os.getpid()
    entry.pid_start = process_start(entry.pid)
    worker = Worker(entry)
    worker.save(status="busy", state="working", needs=None)
    try:
        discoverable: Path | None = discovery.register(entry.id, entry.pid, entry.pid_start)
    except OSError as exc:  # a full disk: it runs, but peers cannot find it until it is respawned
        discoverable = None
        worker.log(f"[warning] could not register with peers: {exc.strerror}")
    resume = transcript_exists(entry)

    async def guarded() -> None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        try:
            await worker.run(resume)
        except asyncio.CancelledError:
            worker.log("[stopped]")
        finally:
            if discoverable is not None:
                discovery.unregister(discoverable)
            worker.notify_waiters("has exited")

    try:
        asyncio.run(guarded())
    except Exception as exc:  # the log is the only place a detached session can say why it ended
        worker.log(f"[crashed] {type(exc).__name__}: {exc}")
        sys.exit(1)


if __name__ == "__main__":
    main()
