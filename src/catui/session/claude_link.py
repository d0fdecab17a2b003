"""Where Claude Code's tools look for sessions, and the link that puts catui's transcripts there.

catui writes a session's transcript under its own home
(``<catui home>/projects/<slug>/<id>.jsonl``). The official Agent SDKs' session
readers (``listSessions``/``getSessionMessages``, ``list_sessions``/
``get_session_messages``) read ``$CLAUDE_CONFIG_DIR/projects`` (or
``~/.claude/projects``) under Claude Code's folder name for the project. So
each transcript, once its first line is written, also gets a hard link
there, named as Claude Code names it (a symbolic link across file systems),
and its ``<id>/`` folder of sub-agent transcripts a symbolic link: one file,
two ways in, so a rename or tag appended through either is seen by both.
docs/decisions.md explains the choice.

``CATUI_LINK_CLAUDE_SESSIONS=0`` turns the links off. A name that is already
taken (a Claude Code session of the same id) is never replaced.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

MAX_SLUG_LENGTH = 200
"""Claude Code cuts a longer folder name here and appends a hash of the whole path."""
_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")


def links_enabled(env: Mapping[str, str]) -> bool:
    return env.get("CATUI_LINK_CLAUDE_SESSIONS", "").strip().lower() not in ("0", "false", "no", "off")


def claude_projects_dir(env: Mapping[str, str]) -> Path:
    """``$CLAUDE_CONFIG_DIR/projects``, or ``~/.claude/projects``."""
    config = env.get("CLAUDE_CONFIG_DIR")
    return (Path(config).expanduser() if config else Path.home() / ".claude") / "projects"


def claude_project_slug(cwd: Path) -> str:
    """The folder name Claude Code gives the project at ``cwd``: its real path, every non-alphanumeric
    character a ``-``; past 200 characters cut, with a hash of the path appended."""
    import unicodedata  # lazy: needed once a transcript is linked, not on start-up

    path = unicodedata.normalize("NFC", os.path.realpath(cwd))
    slug = _NOT_ALNUM.sub("-", path)
    if len(slug) <= MAX_SLUG_LENGTH:
        return slug
    return f"{slug[:MAX_SLUG_LENGTH]}-{_path_hash(path)}"


def _path_hash(text: str) -> str:
    """Claude Code's 32-bit string hash (``h = h * 31 + c`` in signed 32-bit arithmetic), absolute, base 36."""
    value = 0
    for char in text:
        value = (value * 31 + ord(char)) & 0xFFFFFFFF
    if value >= 0x80000000:
        value -= 0x100000000
    value = abs(value)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if value == 0:
            return out


def link_transcript(transcript: Path, cwd: Path, session_id: str, env: Mapping[str, str]) -> str | None:
    """Link ``transcript`` (which exists) and its sub-agent folder into Claude Code's projects folder.

    The transcript gets a hard link (readers that skip symbolic links see a plain file; appends through either
    name are the same file), or a symbolic link when the two folders are on different file systems; the
    ``<id>/`` folder of sub-agent transcripts gets a symbolic link. Returns a warning when a link could not be
    made (None when it was, or when links are off).
    """
    if not links_enabled(env):
        return None
    folder = claude_projects_dir(env) / claude_project_slug(cwd)
    link, sub_link = folder / f"{session_id}.jsonl", folder / session_id
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if link.exists() or link.is_symlink():
            if not (link.exists() and os.path.samefile(link, transcript)):
                return (f"{link} already exists, so the official Agent SDKs' session readers will not see "
                        f"session {session_id} (catui's transcript is {transcript})")
        else:
            try:
                os.link(transcript, link)
            except OSError:
                link.symlink_to(transcript)
        if not (sub_link.exists() or sub_link.is_symlink()):
            sub_link.symlink_to(transcript.parent / session_id, target_is_directory=True)
    except OSError as exc:
        return (f"could not link session {session_id} into {folder} ({exc.strerror or exc}); the official Agent "
                "SDKs' session readers will not list it (set CATUI_LINK_CLAUDE_SESSIONS=0 to stop trying)")
    return None


def transcript_linker(cwd: Path, session_id: str, env: Mapping[str, str]) -> Callable[[Path], None]:
    """The transcript writer's ``on_created``: links the new file; a failure is logged as a warning (see --debug)."""

    def link(path: Path) -> None:
        warning = link_transcript(path, cwd, session_id, env)
        if warning is not None:
            import logging  # lazy: only a failed link logs (start-up does not import logging)

            logging.getLogger(__name__).warning(warning)

    return link
