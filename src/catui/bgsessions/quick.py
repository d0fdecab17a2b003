"""``catui sessions``, ``catui logs`` and ``catui stop`` without click: the commands a script or a status bar
runs often, so they import only the registry (``catui.cli.entry`` calls them directly for the plain forms; the
click commands in :mod:`catui.bgsessions.cli` call them too, so both paths print the same).
"""

from __future__ import annotations

import json
import sys
import time
from typing import NoReturn

from catui.bgsessions.registry import SessionEntry, UnknownSession, all_entries, resolve


def fail(message: str) -> NoReturn:
    """A one-line error on stderr and exit status 1 (the unknown-session line is Claude Code's, without a prefix)."""
    sys.stderr.write((message if message.startswith("No session") else f"catui: {message}") + "\n")
    sys.stderr.flush()
    sys.exit(1)


def find(ref: str) -> SessionEntry:
    try:
        return resolve(ref)
    except UnknownSession as exc:
        fail(str(exc))


def age(started_ms: int) -> str:
    seconds = max(0, int(time.time() - started_ms / 1000))
    return f"{seconds}s ago" if seconds < 120 else f"{seconds // 60}m ago" if seconds < 7200 else f"{seconds // 3600}h ago"


def list_sessions(as_json: bool, show_all: bool) -> None:
    rows = [e.public() for e in all_entries()]
    if not show_all:
        rows = [r for r in rows if r["state"] != "stopped"]
    out = sys.stdout
    if as_json:
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    if not rows:
        out.write(("No background sessions." if show_all else
                   "No running background sessions (--all lists stopped ones).") + "\n")
        return
    for row in rows:
        status = f"{row.get('status', '-'):<4}"
        out.write(f"{row['id']}  {row['name']:<20}  {status}  {row['state']:<8}  started {age(row['startedAt']):<8}  "
                  f"{row['cwd']}\n")
        if row.get("needs"):
            out.write(f"          needs {row['needs']}\n")


def print_logs(ref: str) -> None:
    entry = find(ref)
    path = entry.folder / "log.txt"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        fail(f"cannot read the log of {entry.id} ({path}): {exc.strerror}.")
    sys.stdout.write(text)
    shown = entry.shown()
    if shown.needs:
        sys.stdout.write(f"[{shown.state}] needs {shown.needs}\n")


def stop_session(ref: str) -> None:
    from catui.bgsessions import launch

    try:
        entry = launch.stop(find(ref))
    except launch.SessionError as exc:
        fail(str(exc))
    sys.stdout.write(f"stopped {entry.id}\n")


def run(args: list[str]) -> bool:
    """Run ``catui <args>`` here when it is the plain form of sessions, logs or stop; False for anything else
    (help, an unknown option, another command), which the click command handles."""
    if not args:
        return False
    command, rest = args[0], args[1:]
    if command == "sessions" and set(rest) <= {"--json", "--all"}:
        list_sessions("--json" in rest, "--all" in rest)
        return True
    if command in ("logs", "stop") and len(rest) == 1 and not rest[0].startswith("-"):
        (print_logs if command == "logs" else stop_session)(rest[0])
        return True
    return False
