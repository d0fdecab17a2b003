"""``catui --bg PROMPT``, and ``catui sessions|logs|stop|rm|respawn|attach`` for background sessions.

A session is named by its name, its id (8 hex digits), its full session id or a unique id prefix; an
unknown one is a one-line error with exit status 1.
"""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from catui.bgsessions import asking, inbox, launch, quick
from catui.bgsessions.registry import (
    SessionEntry,
    all_entries,
    entry_path,
    read_entry,
)

MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]


fail = quick.fail
find = quick.find


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("prompt")
@click.option("--bg", is_flag=True, required=True, help="Start the session in the background.")
@click.option("--name", help="The session's name (others message it by this name).")
@click.option("-p", "--print", "print_mode", is_flag=True, hidden=True)
@click.option("--model", help="Model alias, full id, or provider:model.")
@click.option("--permission-mode", type=click.Choice(MODES), default="default", show_default=True)
@click.option("--allowedTools", "--allowed-tools", "allowed_tools", multiple=True, help="Rules to allow.")
@click.option("--disallowedTools", "--disallowed-tools", "disallowed_tools", multiple=True, help="Rules to deny.")
@click.option("--append-system-prompt", help="Text appended to the system prompt.")
@click.option("--max-turns", type=int, help="Stop each turn after this many model turns.")
@click.option("--worktree", is_flag=True, help="Work in a new git worktree of the project (rm keeps it if changed).")
def bg_command(prompt: str, bg: bool, name: str | None, print_mode: bool, model: str | None, permission_mode: str,
               allowed_tools: tuple[str, ...], disallowed_tools: tuple[str, ...], append_system_prompt: str | None,
               max_turns: int | None, worktree: bool) -> None:
    """Start a whole session in the background and print its id."""
    if print_mode:
        fail("--bg and --print conflict: a background session answers in its log (catui logs ID), not on stdout.")
    try:
        entry = launch.start(prompt, permission_mode=permission_mode, name=name, options={
            "model": model, "allowed_tools": list(allowed_tools), "disallowed_tools": list(disallowed_tools),
            "append_system_prompt": append_system_prompt, "max_turns": max_turns}, worktree=worktree)
    except launch.SessionError as exc:
        fail(str(exc))
        return
    click.echo(f"backgrounded · {entry.id}")
    for line in ("  catui sessions           list background sessions",
                 f"  catui attach {entry.id}    watch it and answer it here",
                 f"  catui logs {entry.id}      print what it has done",
                 f"  catui stop {entry.id}      stop it"):
        click.echo(line)


@click.command("sessions")
@click.option("--json", "as_json", is_flag=True, help="A JSON array, one object per session.")
@click.option("--all", "show_all", is_flag=True, help="Include stopped sessions.")
def sessions_command(as_json: bool, show_all: bool) -> None:
    """List background sessions: id, name, status (idle|busy), state (working|blocked|done|failed|stopped)."""
    quick.list_sessions(as_json, show_all)


@click.command("logs")
@click.argument("ref")
def logs_command(ref: str) -> None:
    """Print a background session's log."""
    quick.print_logs(ref)


@click.command("stop")
@click.argument("ref")
def stop_command(ref: str) -> None:
    """Stop a background session (it can be respawned)."""
    quick.stop_session(ref)


@click.command("rm")
@click.argument("ref")
@click.option("--force", is_flag=True, help="Remove it even when messages to it are unread or its worktree changed.")
def rm_command(ref: str, force: bool) -> None:
    """Stop a background session and remove it."""
    entry = find(ref)
    try:
        launch.remove(entry, force=force)
    except launch.SessionError as exc:
        fail(str(exc))
    click.echo(f"removed {entry.id}")


@click.command("respawn")
@click.argument("ref", required=False)
@click.option("--all", "every", is_flag=True, help="Every stopped session.")
def respawn_command(ref: str | None, every: bool) -> None:
    """Start a stopped background session again, resuming from its transcript."""
    if every == (ref is not None):
        fail("respawn takes a session (name or id) or --all.")
    targets = [e for e in all_entries() if not e.is_alive()] if every else [find(ref or "")]
    for entry in targets:
        try:
            launch.respawn(entry)
        except launch.SessionError as exc:
            fail(str(exc))
        click.echo(f"restarted {entry.id}")


ATTACH_HELP = "Type a message to send it; y/n answers a permission request; 'accept' accepts held messages; " \
              "Ctrl-D or /detach detaches (the session keeps running)."


def answer_line(entry: SessionEntry, line: str, echo: Callable[[str], None]) -> None:
    """What a line typed in ``catui attach`` does."""
    current = read_entry(entry_path(entry.id)) or entry
    word = line.strip().lower()
    if current.state == "blocked" and (current.needs or "").startswith("permission") and word in ("y", "yes", "n", "no"):
        request = asking.pending_request(current.folder)
        asking.answer(current.folder, str(request["request_id"]) if request else None, allow=word in ("y", "yes"))
        echo(f"[answered {'allow' if word.startswith('y') else 'deny'}]")
        return
    try:
        if word == "accept":
            held = inbox.pending(current.folder, "held")
            for path, message in held:
                inbox.accept(path, message)
            echo(f"[accepted {len(held)} held message(s)]")
            return
        if line.strip():
            inbox.post(current.folder, inbox.new_message("user", line.rstrip("\n")))
    except OSError as exc:
        echo(f"[not sent: writing to {current.folder} failed: {exc.strerror}; type it again once there is space]")


@click.command("attach")
@click.argument("ref")
def attach_command(ref: str) -> None:
    """Show a background session's live view here; what you type goes to it; detaching leaves it running."""
    entry = find(ref)
    log_path = entry.folder / "log.txt"
    echo: Callable[[str], None] = click.echo
    echo(f"attached · {entry.id} ({entry.name}). {ATTACH_HELP}")
    offset = 0
    pending_input = b""
    stdin_fd = sys.stdin.fileno()
    stdin_open = True
    shown_needs: str | None = None
    while True:
        try:
            with open(log_path, "rb") as log:
                log.seek(offset)
                chunk = log.read()
        except OSError:
            chunk = b""
        if chunk:
            offset += len(chunk)
            sys.stdout.write(chunk.decode("utf-8", errors="replace"))
            sys.stdout.flush()
        current = read_entry(entry_path(entry.id)) or entry
        if current.needs != shown_needs and current.is_alive():
            shown_needs = current.needs
            if shown_needs:
                answer = "y/n" if shown_needs.startswith("permission") else "accept"
                echo(f"[blocked] needs {shown_needs} — type {answer}")
        if not current.is_alive():
            echo(f"[session {entry.id} is not running; catui respawn {entry.id} starts it again and reads what "
                 "you sent]")
            return
        if not stdin_open:
            time.sleep(0.05)
            continue
        readable, _, _ = select.select([stdin_fd], [], [], 0.05)
        if not readable:
            continue
        data = os.read(stdin_fd, 4096)
        if not data:
            echo(f"detached · {entry.id} keeps running")
            return
        pending_input += data
        while b"\n" in pending_input:
            raw, pending_input = pending_input.split(b"\n", 1)
            line = raw.decode("utf-8", errors="replace").rstrip("\r")
            if line.strip() == "/detach":
                echo(f"detached · {entry.id} keeps running")
                return
            answer_line(current, line, echo)


def run_bg(args: list[str]) -> None:
    """``catui --bg …`` (called by catui.cli.main when ``--bg`` is among the arguments)."""
    try:
        bg_command.main(args=args, prog_name="catui", standalone_mode=False)
    except click.UsageError as exc:
        click.echo(f"catui: {exc.format_message()} (see catui --bg --help)", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)


COMMANDS: dict[str, Any] = {"sessions": sessions_command, "logs": logs_command, "stop": stop_command,
                            "rm": rm_command, "respawn": respawn_command, "attach": attach_command}
