"""Peer sessions for ListAgents and SendMessage: the live background sessions of this user.

A session reaches a peer by the peer's name (or id); the message goes into the peer's inbox
(:mod:`catui.bgsessions.inbox`) and the sender is told so only once it is on disk.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

from catui.bgsessions import discovery, inbox
from catui.bgsessions.registry import SessionEntry, entry_path, read_entry

ENV_ID = "CATUI_BG_ID"


class DeliveryError(OSError):
    """A message to a peer could not be put into its inbox (the text says why); nothing was delivered."""


def own_id() -> str | None:
    """This process's registry id when it runs a background session."""
    return os.environ.get(ENV_ID) or None


def ref_of(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:6]


def live_peers() -> list[SessionEntry]:
    """Every running background session but this one (from the discovery registry, which drops dead ones)."""
    me = own_id()
    entries = [read_entry(entry_path(i)) for i in discovery.live_ids() if i != me]
    return sorted((e for e in entries if e is not None and e.is_alive()), key=lambda e: (e.started_at, e.id))


def own_entry() -> SessionEntry | None:
    me = own_id()
    return read_entry(entry_path(me)) if me else None


def find_peer(to: str) -> SessionEntry | None:
    peers = live_peers()
    for match in ([p for p in peers if p.name == to], [p for p in peers if to in (p.id, p.session_id)]):
        if len(match) == 1:
            return match[0]
    return None


def peer_rows(query: str | None, age: Any) -> list[str]:
    """ListAgents' ``Peer sessions`` lines: ``<name> [<ref>]  ·  bg  ·  busy|idle  ·  started 4s ago``."""
    now = time.time()
    rows = [f"  {p.name} [{ref_of(p.session_id)}]  ·  bg  ·  {p.status or 'idle'}  ·  "
            f"started {age(p.started_at / 1000, now)}" for p in live_peers()]
    return [r for r in rows if not query or query.lower() in r.lower()]


def send(peer: SessionEntry, text: str, *, summary: str | None, notify_when_idle: bool, sender_name: str,
         sender_session: str, sender_mode: str) -> dict[str, Any]:
    """Put ``text`` into ``peer``'s inbox; the SendMessage result once it is on disk."""
    me = own_id()
    message = inbox.new_message(
        "peer", text, from_ref=f"catui:{me or sender_session[:8]}", from_name=sender_name,
        from_mode=inbox.mode_label(sender_mode), from_id=me or "", summary=summary or text[:60],
        notify_when_idle=notify_when_idle)
    try:
        inbox.post(peer.folder, message)
    except OSError as exc:
        raise DeliveryError(f"Could not deliver to {peer.name}: writing to its inbox ({peer.folder / 'inbox'}) "
                            f"failed: {exc.strerror}. Nothing was sent; try again later.") from None
    return {"success": True, "message": (
        f"“{message.summary}” → {peer.name} (another catui session on this machine; in that session's inbox, not "
        "yet read by its model — a [Cross-session delivery notice] follows if that session holds it (usually a "
        "different permission mode) or refuses it)"), "msg_id": message.msg_id}
