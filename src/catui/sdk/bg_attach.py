"""A :class:`catui.CatuiClient` attached to a background session (``CatuiClient.attach(name)``).

The session runs in its own process (:mod:`catui.bgsessions.worker`); the attached client

- sends turns: ``query(prompt)`` puts the prompt into the session's inbox (on disk before it returns), and the
  session runs it when it is idle (after the turn it is in, and earlier messages);
- receives the session's messages from the moment it attached, as the SDK's objects: the worker appends every
  message of its turns to ``events.jsonl`` (:mod:`catui.sdk.message_codec`), which the client follows;
- answers the session's permission requests with its own ``can_use_tool``, when the options have one (the request
  pending when it attaches too); without one they wait for ``catui attach`` or another client;
- detaches on ``disconnect()`` (the end of ``async with``): the session keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from catui.bgsessions import asking, inbox
from catui.bgsessions.api import BackgroundSessionError
from catui.bgsessions.registry import SessionEntry, UnknownSession, entry_path, read_entry, resolve
from catui.errors import CLIConnectionError
from catui.sdk.message_codec import decode
from catui.sdk.options import CatuiOptions
from catui.sdk.permissions import PermissionResultAllow, PermissionUpdate, ToolPermissionContext

log = logging.getLogger(__name__)

EVENTS = "events.jsonl"  # catui.bgsessions.worker.EVENTS (the worker is a layer above; not imported from here)
POLL_S = 0.02
"""How often the client looks for new messages and permission requests (a read of two small files)."""


class BgAttachment:
    """The attached half of a CatuiClient (see the module docstring)."""

    def __init__(self, ref: str, options: CatuiOptions) -> None:
        self.ref = ref
        self.options = options
        self.entry: SessionEntry | None = None
        self._offset = 0
        self._answering: asyncio.Task[None] | None = None

    def require_entry(self) -> SessionEntry:
        if self.entry is None:
            raise CLIConnectionError(f"the client is not attached yet: use `async with CatuiClient.attach("
                                     f"{self.ref!r}) as client:`")
        return self.entry

    async def connect(self, prompt: str | AsyncIterable[dict[str, Any]] | None = None) -> None:
        try:
            entry = resolve(self.ref)
        except UnknownSession as exc:
            raise BackgroundSessionError(str(exc)) from None
        if not entry.is_alive():
            raise BackgroundSessionError(
                f"background session {entry.id} ({entry.name}) is not running; catui.respawn_bg_session("
                f"{entry.id!r}) (or `catui respawn {entry.id}`) starts it again, then attach.")
        self.entry = entry
        try:
            self._offset = (entry.folder / EVENTS).stat().st_size  # messages from now on
        except FileNotFoundError:
            self._offset = 0
        if self.options.can_use_tool is not None:
            self._answering = asyncio.create_task(self._answer_requests())
        if prompt is not None:
            await self.enqueue(prompt)

    async def disconnect(self) -> None:
        """Detach: stop answering and reading; the session keeps running."""
        task, self._answering = self._answering, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def enqueue(self, prompt: str | AsyncIterable[dict[str, Any]]) -> None:
        entry = self.require_entry()
        texts = [prompt] if isinstance(prompt, str) else [text_of(message) async for message in prompt]
        for text in texts:
            if not text.strip():
                raise BackgroundSessionError("an empty prompt: give the text the background session should read.")
            try:
                inbox.post(entry.folder, inbox.new_message("user", text))
            except OSError as exc:
                raise BackgroundSessionError(
                    f"could not write the prompt to {entry.id}'s inbox ({entry.folder / 'inbox'}): {exc.strerror}; "
                    "nothing was sent.") from None

    def alive(self) -> bool:
        entry = self.require_entry()
        current = read_entry(entry_path(entry.id))
        return current is not None and current.pid == entry.pid and current.is_alive()

    async def messages(self) -> AsyncIterator[Any]:
        """The session's messages from the attach point on; ends when the session stops (after its last one)."""
        entry = self.require_entry()
        partial = b""
        while True:
            running = self.alive()  # before reading: what it wrote before it stopped is still read
            try:
                with open(entry.folder / EVENTS, "rb") as events:
                    events.seek(self._offset)
                    chunk = events.read()
            except FileNotFoundError:
                chunk = b""
            self._offset += len(chunk)
            *lines, partial = (partial + chunk).split(b"\n")
            for line in lines:
                try:
                    yield decode(json.loads(line))
                except ValueError:
                    log.warning("skipped a line of %s that is not JSON", entry.folder / EVENTS)
            if not running:
                return
            await asyncio.sleep(POLL_S)

    async def _answer_requests(self) -> None:
        entry = self.require_entry()
        callback = self.options.can_use_tool
        assert callback is not None
        answered: set[str] = set()
        while True:
            request = asking.pending_request(entry.folder)
            request_id = str(request.get("request_id")) if request else ""
            if request and request_id not in answered:
                answered.add(request_id)
                details = await ask_callback(callback, request)
                with contextlib.suppress(OSError):  # a full disk: the request stays open for another answerer
                    asking.answer(entry.folder, request_id, **details)
            await asyncio.sleep(POLL_S)


def text_of(message: dict[str, Any]) -> str:
    """The text of a user-message dict (``{"type": "user", "message": {"role": "user", "content": ...}}``)."""
    content = (message.get("message") or {}).get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    raise BackgroundSessionError(f"a prompt message must be a user-message dict with text content, not {message!r}")


async def ask_callback(callback: Any, request: dict[str, Any]) -> dict[str, Any]:
    """Ask ``can_use_tool`` about a published request; the answer as :func:`catui.bgsessions.asking.answer` takes it."""
    raw = request.get("context") or {}
    suggestions = []
    for update in raw.get("suggestions") or []:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            suggestions.append(PermissionUpdate.from_dict(update))
    context = ToolPermissionContext(suggestions=suggestions, **{
        k: raw.get(k) for k in ("tool_use_id", "agent_id", "agent_type", "blocked_path", "decision_reason", "title",
                                "display_name", "description")})
    try:
        result = await callback(str(request.get("tool_name")), dict(request.get("input") or {}), context)
    except Exception as exc:  # the callback's own bug: the call is refused, and the session carries on
        log.warning("can_use_tool raised %s; the call is denied", exc)
        return {"allow": False, "message": f"can_use_tool failed: {exc}"}
    if isinstance(result, PermissionResultAllow):
        updates = [u.to_dict() if isinstance(u, PermissionUpdate) else u for u in result.updated_permissions or []]
        return {"allow": True, "updated_input": result.updated_input, "updated_permissions": updates}
    return {"allow": False, "message": getattr(result, "message", "") or "The user refused this call.",
            "interrupt": bool(getattr(result, "interrupt", False))}
