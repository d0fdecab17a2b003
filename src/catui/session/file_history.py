"""File checkpoints: what the agents' file tools changed, per user prompt, so that files can be rewound.

With checkpointing on (claude-agent-sdk's ``enable_file_checkpointing``, which sets
``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING``; or ``CATUI_FILE_CHECKPOINTING=1``), the first time a
file tool (Write, Edit, NotebookEdit) is about to change a file after a prompt, the file's state
before it is kept: its bytes, or that it did not exist. Sub-agents' edits belong to the prompt whose
turn started them. :meth:`FileHistory.rewind` puts every file changed at or after a prompt back as it
was just before that prompt. Changes made by shell commands are not tracked.

On disk, under ``<catui home>/file-history/<session id>/``: ``index.jsonl`` (one line per prompt and
per first change of a file after it) and ``blobs/<sha256>`` (the kept contents, written atomically),
so a resumed session can still rewind to its earlier prompts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.errors import CatuiError

CHECKPOINT_ENV = ("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING", "CATUI_FILE_CHECKPOINTING")
"""Either set to a true value turns checkpointing on."""

TRACKED_PATH_FIELDS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
                       "NotebookEdit": "notebook_path"}
"""The file tools whose changes are kept, and the input field naming the file each changes."""


class RewindError(CatuiError):
    """A rewind that cannot be done (unknown prompt, checkpointing off) or could not restore every file."""


def checkpointing_enabled(env: Mapping[str, str]) -> bool:
    """Whether the environment (or the settings' ``env``) asks for file checkpoints."""
    return any(str(env.get(name, "")).strip().lower() in {"1", "true", "yes", "on"} for name in CHECKPOINT_ENV)


@dataclass(frozen=True)
class Checkpoint:
    """A prompt whose turn changed files: its uuid, the start of its text, and the files it changed."""

    prompt_uuid: str
    preview: str
    files: tuple[str, ...]


@dataclass
class RewindOutcome:
    """What a rewind did (or, as a dry run, would do): files written back and files removed (they did not
    exist at that prompt), and the lines the changes it undoes had added (``insertions``) and removed
    (``deletions``), as Claude Code's RewindFilesResult counts them."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    insertions: int = 0
    deletions: int = 0

    @property
    def files_changed(self) -> list[str]:
        """Every file the rewind writes back or removes."""
        return [*self.restored, *self.removed]


class FileHistory:
    """The checkpoints of one session, kept in ``folder`` (read back when the folder already exists)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._prompts: list[str] = []
        self._previews: dict[str, str] = {}
        self._current: str | None = None
        self._kept: set[tuple[str, str]] = set()
        self._changes: list[tuple[str, str, str | None]] = []  # (prompt uuid, path, blob or None: absent)
        self._load()

    def _load(self) -> None:
        try:
            lines = (self.folder / "index.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line from a crash
            if record.get("prompt") and "path" not in record:
                self._prompts.append(record["prompt"])
                self._previews[record["prompt"]] = str(record.get("preview", ""))
            elif record.get("prompt") and record.get("path"):
                self._changes.append((record["prompt"], record["path"], record.get("blob")))
                self._kept.add((record["prompt"], record["path"]))

    def begin_prompt(self, prompt_uuid: str, preview: str = "") -> None:
        """A new user prompt (its transcript line's uuid; ``preview``: the start of its text, for /rewind)."""
        self._current = prompt_uuid
        self._prompts.append(prompt_uuid)
        self._previews[prompt_uuid] = preview
        self._append({"prompt": prompt_uuid, "preview": preview})

    def checkpoints(self) -> list[Checkpoint]:
        """The prompts whose turns changed files, oldest first (rewinding to one undoes it and all after)."""
        files: dict[str, list[str]] = {}
        for prompt, path, _blob in self._changes:
            files.setdefault(prompt, []).append(path)
        return [Checkpoint(uuid, self._previews.get(uuid, ""), tuple(files[uuid]))
                for uuid in self._prompts if uuid in files]

    def before_tool(self, tool_name: str, raw_input: dict[str, Any], cwd: Path) -> None:
        """Keep the prior state of the file a file tool is about to change (once per prompt and file)."""
        field_name = TRACKED_PATH_FIELDS.get(tool_name)
        value = raw_input.get(field_name) if field_name else None
        if self._current is None or not isinstance(value, str) or not value:
            return
        path = os.path.normpath(cwd / value)
        key = (self._current, path)
        if key in self._kept:
            return
        try:
            data: bytes | None = Path(path).read_bytes()
        except FileNotFoundError:
            data = None
        except OSError:
            return  # unreadable: the tool will fail on it too, and there is nothing to keep
        blob = self._store(data) if data is not None else None
        self._kept.add(key)
        self._changes.append((self._current, path, blob))
        self._append({"prompt": self._current, "path": path, "blob": blob})

    def knows(self, prompt_uuid: str) -> bool:
        return prompt_uuid in self._prompts

    def rewind(self, prompt_uuid: str, *, dry_run: bool = False) -> RewindOutcome:
        """Put every file changed at or after ``prompt_uuid`` back as it was just before that prompt.

        With ``dry_run`` nothing is written: the outcome says what the rewind would change. A file already
        as it was then is left out.
        """
        if prompt_uuid not in self._prompts:
            raise RewindError(
                f"no file checkpoint for user message {prompt_uuid!r}: it is not a prompt of this session "
                "(use the uuid of a user message the session echoed, e.g. with --replay-user-messages)")
        later = set(self._prompts[self._prompts.index(prompt_uuid):])
        earliest: dict[str, str | None] = {}
        for prompt, path, blob in self._changes:
            if prompt in later and path not in earliest:
                earliest[path] = blob
        outcome, failed = RewindOutcome(), []
        for path, blob in earliest.items():
            try:
                target = (self.folder / "blobs" / blob).read_bytes() if blob is not None else None
                current = _read_or_none(Path(path))
                if current == target:
                    continue
                added, removed = _line_changes(target, current)
                if not dry_run:
                    if target is None:
                        os.unlink(path)
                    else:
                        _write_atomic(Path(path), target)
                (outcome.removed if target is None else outcome.restored).append(path)
                outcome.insertions += added
                outcome.deletions += removed
            except OSError as exc:
                failed.append(f"{path} ({exc.strerror or exc})")
        if failed:
            verb = "read" if dry_run else "restore"
            raise RewindError(f"could not {verb} {len(failed)} of {len(earliest)} files: " + "; ".join(failed))
        return outcome

    def _store(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.folder / "blobs" / digest
        if not target.exists():
            _write_atomic(target, data)
        return digest

    def _append(self, record: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(self.folder / "index.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def _read_or_none(path: Path) -> bytes | None:
    """The file's bytes, None when it does not exist; a path that is no longer a regular file (a FIFO would
    block the read) reads as empty, so the rewind replaces it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def _line_changes(before: bytes | None, after: bytes | None) -> tuple[int, int]:
    """Lines added and removed going from ``before`` to ``after`` (None: no file), counted as multisets of
    lines: linear in the files' size, and the same as a line diff's counts except for lines that moved."""
    old = Counter((before or b"").decode("utf-8", "replace").splitlines())
    new = Counter((after or b"").decode("utf-8", "replace").splitlines())
    return sum((new - old).values()), sum((old - new).values())


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.rewind.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def prompt_preview(message: Any, width: int = 60) -> str:
    """The start of a prompt's own text (its last text block that is not a system reminder), on one line."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        texts = [content]
    else:
        texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    own = [t for t in texts if t.strip() and not t.lstrip().startswith("<system-reminder>")]
    line = " ".join((own[-1] if own else "").split())
    return line if len(line) <= width else line[: width - 1] + "…"
