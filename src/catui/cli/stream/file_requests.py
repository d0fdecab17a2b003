"""The driver's control requests about the session's files (the TypeScript SDK's ``Query.readFile`` and
``Query.seedReadState``).

``read_file``: a file of the session for the host to show, read under the same permission rules as the Read
tool. The path is taken from the session's working folder; a read the main agent's rules and mode would not
allow without asking (a deny rule, a path outside the working directories) is refused, as is anything that is
not a regular file. The answer is Claude Code's ``{contents, absPath, truncated, encoding?, lossy?}``; the SDK
turns a refusal into ``null``.

``seed_read_state``: the host saw the main agent read a file (a Read since dropped from the context), so an
Edit or Write of it need not read it again; the seed is skipped when the file changed after that mtime.
"""

from __future__ import annotations

import base64
from typing import Any

from catui.errors import CatuiError
from catui.permissions.model import PermissionRequest
from catui.tools.base import ToolContext
from catui.tools.bounded_read import UnreadableFile, open_regular, read_at_most
from catui.tools.files import mtime_of, record_read, resolve_path

DEFAULT_MAX_BYTES = 1024 * 1024
"""What a request without ``max_bytes`` reads at most (the SDK's documented default)."""
ENCODINGS = ("utf-8", "base64")


def read_file(ctx: ToolContext, path: Any, max_bytes: Any = None, encoding: Any = None) -> dict[str, Any]:
    """Read ``path`` for the driver as the main agent's Read would be allowed to; CatuiError says why not."""
    if not isinstance(path, str) or not path.strip():
        raise CatuiError(f"read_file needs a 'path' string, not {path!r}")
    if max_bytes is None:
        max_bytes = DEFAULT_MAX_BYTES
    elif isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise CatuiError(f"read_file: 'max_bytes' must be a positive whole number of bytes, not {max_bytes!r}")
    if encoding is not None and encoding not in ENCODINGS:
        raise CatuiError(f"read_file: 'encoding' must be 'utf-8' or 'base64', not {encoding!r}")
    resolved = resolve_path(path, ctx)
    decision = ctx.permissions.decide(PermissionRequest(
        tool_name="Read", tool_input={"file_path": str(resolved)}, read_only=True, subject=str(resolved),
        file_path=resolved))
    if decision.behavior != "allow":
        raise CatuiError(f"read_file: {resolved} may not be read without approval: {decision.reason}")
    try:
        opened = open_regular(resolved)
    except FileNotFoundError:
        raise CatuiError(f"read_file: {resolved} does not exist") from None
    except UnreadableFile as exc:
        raise CatuiError(f"read_file: {exc}") from None
    try:
        data = read_at_most(opened, max_bytes + 1)  # one byte more tells a cut read from a whole one
    except OSError as exc:
        raise CatuiError(f"read_file: cannot read {resolved}: {exc.strerror or exc}") from None
    finally:
        opened.close()
    truncated = len(data) > max_bytes
    data = data[:max_bytes]
    answer: dict[str, Any] = {"absPath": str(resolved), "truncated": truncated}
    if encoding == "base64":
        return {**answer, "contents": base64.b64encode(data).decode("ascii"), "encoding": "base64"}
    text = data.decode("utf-8", "replace")
    try:
        data.decode("utf-8")
        lossy = False
    except UnicodeDecodeError:
        lossy = True
    return {**answer, "contents": text, "lossy": lossy}


def seed_read_state(ctx: ToolContext, path: Any, mtime: Any) -> dict[str, Any]:
    """Count ``path`` as read by the main agent when it has not changed since ``mtime`` (milliseconds, floored,
    as the SDK sends it); a file changed since then is left unread, so an Edit asks for a fresh Read."""
    if not isinstance(path, str) or not path.strip():
        raise CatuiError(f"seed_read_state needs a 'path' string, not {path!r}")
    if isinstance(mtime, bool) or not isinstance(mtime, (int, float)) or mtime < 0:
        raise CatuiError(f"seed_read_state: 'mtime' must be the file's mtime in milliseconds, not {mtime!r}")
    resolved = resolve_path(path, ctx)
    try:
        current_ms = int(mtime_of(resolved) * 1000)
    except OSError as exc:
        raise CatuiError(f"seed_read_state: cannot stat {resolved}: {exc.strerror or exc}") from None
    if current_ms <= mtime:
        record_read(resolved, ctx)
    return {}
