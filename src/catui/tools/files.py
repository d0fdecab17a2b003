"""Helpers the file tools share: path resolution, read-state checks, encodings and line endings."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.permissions.context import PermissionRequest
from catui.tools.base import ToolContext
from catui.tools.nofollow import read_resolved, write_resolved

if TYPE_CHECKING:
    from catui.tools.tool_input import ToolInput

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def resolve_path(raw: str, ctx: ToolContext) -> Path:
    """The real path a tool argument names: ``~`` expanded, relative paths taken from ``ctx.cwd``,
    ``..`` and symlinks resolved (so the permission layer judges where the call really lands)."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = ctx.cwd / path
    for _ in range(3):
        try:
            return Path(os.path.realpath(path))
        except OSError:
            continue  # a link turned into something else while it was being read (EINVAL): look again
    # Still changing: judge the path as written; the tools then open it without following any link (nofollow.py).
    return Path(os.path.abspath(path))


def resolve_once(args: ToolInput, raw: str, ctx: ToolContext) -> Path:
    """``resolve_path(raw)``, the same answer for the permission check and the call of one tool call.

    The session hands the call the very ``args`` object it checked, so the path the check judged is the path
    the tool opens; resolving a second time could follow a link that was changed in between.
    """
    resolved = args._resolved_paths.get(raw)
    if resolved is None:
        resolved = args._resolved_paths[raw] = resolve_path(raw, ctx)
    return resolved


def absolute_path_error(raw: str, ctx: ToolContext, field: str = "file_path") -> str | None:
    """An error message when ``raw`` is not an absolute path, else None."""
    if Path(raw).expanduser().is_absolute():
        return None
    return (
        f"{field} must be an absolute path, got {raw!r}. "
        f"Relative to the current directory that would be {ctx.cwd / raw}; pass that absolute path instead."
    )


def file_permission_request(
    tool_name: str, args: Any, raw_path: str, ctx: ToolContext, *, is_edit: bool, read_only: bool
) -> PermissionRequest:
    """The permission request of a file tool: the real absolute path as ``file_path`` and ``subject``."""
    # lazy (catui.lazy): loaded with the tool's input model, which ``args`` was validated with
    from catui.tools.tool_input import ToolInput

    path = resolve_once(args, raw_path, ctx) if isinstance(args, ToolInput) else resolve_path(raw_path, ctx)
    return PermissionRequest(
        tool_name=tool_name,
        tool_input=args.model_dump(by_alias=True, exclude_none=True),
        read_only=read_only,
        subject=str(path),
        file_path=path,
        is_edit=is_edit,
    )


def mtime_of(path: Path) -> float:
    return path.stat().st_mtime


def freshness_error(path: Path, ctx: ToolContext, *, verb: str) -> str | None:
    """Refuse to change an existing file that this agent has not read, or that changed since it was read."""
    seen = ctx.read_state.get(str(path))
    if seen is None:
        return f"{path} has not been read yet. Read it with the Read tool before you {verb} it."
    try:
        current = mtime_of(path)
    except OSError:
        return None
    if current != seen:
        return (
            f"{path} has been modified since it was read (by the user or another program). "
            f"Read it again before you {verb} it."
        )
    return None


def record_read(path: Path, ctx: ToolContext) -> None:
    try:
        ctx.read_state[str(path)] = mtime_of(path)
    except OSError:
        pass


def similar_paths(path: Path, limit: int = 3) -> list[Path]:
    """Existing paths whose names resemble ``path``'s (same stem with another suffix, near spellings)."""
    parent = path.parent
    try:
        names = [entry.name for entry in os.scandir(parent)]
    except OSError:
        return []
    same_stem = [n for n in names if Path(n).stem == path.stem and n != path.name]
    close = difflib.get_close_matches(path.name, names, n=limit, cutoff=0.6)
    picked: list[str] = []
    for name in same_stem + close:
        if name not in picked:
            picked.append(name)
    return [parent / n for n in picked[:limit]]


def missing_file_error(path: Path, cwd: Path) -> str:
    message = f"File does not exist: {path}."
    suggestions = similar_paths(path)
    if suggestions:
        message += " Did you mean " + " or ".join(str(s) for s in suggestions) + "?"
    elif not path.parent.exists():
        message += f" Its folder {path.parent} does not exist either."
    return message + f" (Current working directory: {cwd}.)"


@dataclass(frozen=True)
class TextEncoding:
    """How a text file was stored, so that it can be written back byte-compatible."""

    codec: str
    bom: bytes = b""

    def decode(self, data: bytes) -> str:
        return data[len(self.bom) :].decode(self.codec)

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.codec)


UTF8 = TextEncoding("utf-8")


def detect_encoding(data: bytes) -> TextEncoding:
    """BOM first (utf-8-sig, utf-16 LE/BE), then utf-8; undecodable bytes fall back to latin-1 (lossless)."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return TextEncoding(codec, bom)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return TextEncoding("latin-1")
    return UTF8


def read_text(path: Path) -> tuple[str, TextEncoding]:
    data = read_resolved(path)
    encoding = detect_encoding(data)
    return encoding.decode(data), encoding


def write_encoded_text(
    path: Path, text: str, encoding: TextEncoding, *, content_name: str, make_parents: bool = False
) -> str | None:
    """Store ``text`` in ``path`` with ``encoding``; an error message when that fails, else None.

    ``content_name`` says what the model sent (``"The content"``, ``"new_string"``) in the message for
    text the file's encoding cannot hold.
    """
    try:
        write_resolved(path, encoding.encode(text), make_parents=make_parents)
    except OSError as exc:
        return f"Cannot write {path}: {exc.strerror or exc}."
    except UnicodeEncodeError as exc:
        return f"{content_name} cannot be stored in {path}'s encoding ({encoding.codec}): {exc.reason}."
    return None


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB (text in UTF-16 with a BOM is not binary)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    return b"\x00" in data[:8192]


def line_ending_of(text: str) -> str:
    """``\r\n`` when every line break is CRLF, ``\n`` when none is, ``mixed`` otherwise."""
    crlf = text.count("\r\n")
    if crlf == 0:
        return "\n"
    return "\r\n" if crlf == text.count("\n") else "mixed"


def number_lines(lines: list[str], first_number: int) -> str:
    """``cat -n`` style: the line number right-aligned in six columns, a tab, the line."""
    return "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(lines, start=first_number))
