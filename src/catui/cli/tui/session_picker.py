"""``catui -r`` without an id: a numbered list of this project's sessions, newest first, and a choice."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TextIO

import click

from catui.errors import ConfigurationError
from catui.session.store import first_prompt, last_field, project_sessions_dir, read_records, session_files

PICKER_LIMIT = 20


def session_choices(cwd: Path, limit: int = PICKER_LIMIT) -> list[tuple[str, str]]:
    """(session id, one-line label) for the project's newest sessions."""
    choices: list[tuple[str, str]] = []
    for path in session_files(project_sessions_dir(cwd.resolve()))[:limit]:
        records = read_records(path).records
        title = last_field(records, "customTitle") or first_prompt(records) or "(no prompt)"
        when = datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
        turns = sum(1 for r in records if r.get("type") == "user" and not _is_tool_result(r))
        choices.append((path.stem, f"{when}  {title[:70]}  ({turns} prompts)"))
    return choices


def _is_tool_result(record: dict[str, object]) -> bool:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def pick_session(cwd: Path, stdin: TextIO | None = None, out: TextIO | None = None) -> str:
    """Show the list and return the chosen session id; an empty project or no choice is a one-line error."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    choices = session_choices(cwd)
    if not choices:
        raise ConfigurationError(f"no saved session to resume for {cwd.resolve()}; start one with `catui`")
    click.echo("Sessions of this project (newest first):", file=out)
    for number, (session_id, label) in enumerate(choices, start=1):
        click.echo(f"  {number:>2}. {label}  [{session_id}]", file=out)
    click.echo(f"Resume which? [1-{len(choices)}, Enter for 1] ", file=out, nl=False)
    out.flush()
    answer = stdin.readline()
    if answer == "":
        raise ConfigurationError("no session chosen (end of input)")
    answer = answer.strip() or "1"
    if not answer.isdigit() or not 1 <= int(answer) <= len(choices):
        raise ConfigurationError(f"{answer!r} is not one of the numbers 1-{len(choices)}; run `catui -r` again")
    return choices[int(answer) - 1][0]
